import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BackendHookError,
  BaseBackend,
  createBackend,
  InvalidArgumentError,
  OPTIONAL_HOOKS,
  PolyHalError,
  REQUIRED_HOOKS,
} from '@polyhal/hal';
import { CpuBackend } from '@polyhal/backend-cpu';
import { ReferenceBackend, referenceBackendEntry } from '@polyhal/backend-reference';

// A backend written in plain JavaScript has no compiler to say that it forgot a hook: BaseBackend's
// constructor does. The class below stands for such a backend (no TypeScript checks: `as never`).
type Ctor = new () => object;
const Base = BaseBackend as unknown as Ctor;

/** A plain-JS style subclass with every required hook except `without`. */
function backendWithout(...without: string[]): Ctor {
  class PartialBackend extends Base {
    name = 'partial';
    deviceName = 'nothing';
    deviceType = 'cpu';
  }
  for (const h of REQUIRED_HOOKS) {
    if (!without.includes(h.name)) Object.defineProperty(PartialBackend.prototype, h.name, { value: () => undefined });
  }
  return PartialBackend;
}

describe('the hook set: BaseBackend checks its subclass at construction', () => {
  test('a JS subclass missing two hooks throws BackendHookError naming both, with their signatures', () => {
    const Cls = backendWithout('createStorage', 'matmulKernel');
    let thrown: unknown;
    try {
      new Cls();
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(BackendHookError);
    expect(thrown).toBeInstanceOf(PolyHalError);
    const e = thrown as BackendHookError;
    expect(e.name).toBe('BackendHookError');
    expect(e.missing).toEqual(['createStorage', 'matmulKernel']);
    expect(e.backend).toBe('PartialBackend');
    expect(e.message).toContain('createStorage(buffer: DeviceBuffer, dtype: DType): void');
    expect(e.message).toContain('matmulKernel(a: NDArray, b: NDArray, out: DeviceBuffer): void');
    expect(e.message).toMatch(/does not implement 2 required hooks/);
    expect(e.message).not.toMatch(/is not a function/);
  });

  test('a subclass with no hooks at all is told about every one of them', () => {
    const Cls = backendWithout(...REQUIRED_HOOKS.map((h) => h.name));
    expect(() => new Cls()).toThrow(BackendHookError);
    try {
      new Cls();
    } catch (e) {
      expect((e as BackendHookError).missing).toEqual(REQUIRED_HOOKS.map((h) => h.name));
    }
  });

  test('a hook that is not a function counts as missing', () => {
    const Cls = backendWithout('fillKernel');
    Object.defineProperty(Cls.prototype, 'fillKernel', { value: 42 });
    expect(() => new Cls()).toThrow(/fillKernel\(out: DeviceBuffer, value: number\): void/);
  });

  test('complete backends construct: a subclass with every hook, cpu, reference', () => {
    expect(() => new (backendWithout())()).not.toThrow();
    new CpuBackend().dispose();
    new ReferenceBackend().dispose();
  });

  test('the hook list is the abstract set of BaseBackend: fourteen hooks, each with a one-line contract', () => {
    expect(REQUIRED_HOOKS.map((h) => h.name)).toEqual([
      'createStorage',
      'destroyStorage',
      'writeStorage',
      'readStorage',
      'unaryKernel',
      'binaryKernel',
      'reduceKernel',
      'copyKernel',
      'copyIntoKernel',
      'fillKernel',
      'gatherKernel',
      'scatterAddKernel',
      'matmulKernel',
      'whereKernel',
    ]);
    for (const h of REQUIRED_HOOKS) {
      expect(h.signature.startsWith(`${h.name}(`)).toBe(true);
      expect(h.contract.length).toBeGreaterThan(20);
    }
  });
});

describe('the reference backend in the registry', () => {
  test("registered as 'reference' with priority 10 (below cpu: auto never picks it over a real backend)", async () => {
    expect(referenceBackendEntry).toMatchObject({ name: 'reference', priority: 10 });
    const { backend, report } = await createBackend({ backend: 'reference', options: { memoryLimit: 4096 }, env: {} });
    try {
      expect(backend).toBeInstanceOf(ReferenceBackend);
      expect(report.chosen).toBe('reference');
      expect(backend.memoryAvailable()).toBe(4096);
    } finally {
      backend.dispose();
    }
    const auto = await createBackend({ backend: 'auto', env: {} });
    try {
      expect(auto.backend.name).not.toBe('reference');
    } finally {
      auto.backend.dispose();
    }
  });

  test('its declared options are checked: an unknown key is an InvalidArgumentError naming it', async () => {
    await expect(createBackend({ backend: 'reference', options: { memoryLimt: 1 }, env: {} })).rejects.toThrow(
      InvalidArgumentError,
    );
    await expect(createBackend({ backend: 'reference', options: { memoryLimt: 1 }, env: {} })).rejects.toThrow(
      /memoryLimt/,
    );
  });
});

describe('docs/WRITING-A-BACKEND.md tells the truth', () => {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const guide = readFileSync(join(root, 'docs/WRITING-A-BACKEND.md'), 'utf8');
  const excerpts = [...guide.matchAll(/^<!-- excerpt: (\S+) -->\n```ts\n([\s\S]*?)^```$/gm)].map((m) => ({
    file: m[1]!,
    code: m[2]!,
  }));

  test('it quotes the reference backend (every hook group, registration, the factory)', () => {
    expect(excerpts.length).toBeGreaterThanOrEqual(8);
    expect(new Set(excerpts.map((e) => e.file))).toEqual(
      new Set(
        ['reference-backend.ts', 'strided.ts', 'kernels.ts', 'scalar.ts', 'index.ts'].map(
          (f) => `backends/reference/src/${f}`,
        ),
      ),
    );
  });

  test.each(excerpts.map((e, i) => [i + 1, e.file, e.code] as const))(
    'excerpt %i appears verbatim in %s',
    (_i, file, code) => {
      expect(readFileSync(join(root, file), 'utf8')).toContain(code);
    },
  );

  test('it documents every hook: each required hook with its signature, each optional hook by name', () => {
    for (const h of REQUIRED_HOOKS) expect(guide).toContain(`\`${h.signature}\``);
    for (const h of OPTIONAL_HOOKS) expect(guide).toContain(`\`${h.name}(`);
  });
});
