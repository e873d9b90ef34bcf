import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
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

describe('the hooks are declared once (BackendHooks, OptionalBackendHooks in hal/src/contract/hooks.ts)', () => {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const source = (file: string) => readFileSync(join(root, file), 'utf8');

  test("hook-specs.ts and the guide's hook tables are what scripts/hooks-doc.mjs renders from them (--check)", () => {
    const r = spawnSync(process.execPath, ['scripts/hooks-doc.mjs', '--check'], { cwd: root, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  test('each hook in REQUIRED_HOOKS and OPTIONAL_HOOKS is a method of its interface with that signature', () => {
    const hooks = source('hal/src/contract/hooks.ts');
    const body = (name: string) => hooks.slice(hooks.indexOf(`export interface ${name} {`)).split('\n}\n')[0]!;
    const flat = (s: string) => s.replace(/\s+/g, ' ').replace(/\( /g, '(').replace(/, \)/g, ')');
    const declared = (name: string) =>
      [...flat(body(name)).matchAll(/\*\/ (\w+)\??(\(.*?\): [^;]+);/g)].map((m) => `${m[1]}${m[2]}`);
    expect(declared('BackendHooks')).toEqual(REQUIRED_HOOKS.map((h) => h.signature));
    expect(declared('OptionalBackendHooks')).toEqual(OPTIONAL_HOOKS.map((h) => h.signature));
  });

  test('StorageBackend declares every required hook abstract, BaseBackend every optional one, typed by name', () => {
    // one line per declaration, however the formatter wrapped it
    const flat = (s: string) => s.replace(/\s+/g, ' ').replace(/\( /g, '(').replace(/,? \)/g, ')');
    const storage = flat(source('hal/src/contract/storage-backend.ts'));
    const base = flat(source('hal/src/base.ts'));
    const declaration = String.raw`(\w+)\??\(\.\.\.args: HookArgs<'(\w+)'>\): HookResult<'(\w+)'>;`;
    const typed = (text: string, abstract: boolean) =>
      [...text.matchAll(new RegExp(`protected ${abstract ? 'abstract ' : ''}${declaration}`, 'g'))].map((m) => {
        expect([m[2], m[3]]).toEqual([m[1], m[1]]);
        return m[1]!;
      });
    expect(typed(storage, true)).toEqual(REQUIRED_HOOKS.map((h) => h.name));
    // the optional hooks with a default are methods (their parameters checked by DefaultHooksTyped in base.ts)
    const defaults = [
      'adamStepKernel',
      'sgdStepKernel',
      'nonFiniteCheckAndUnscaleKernel',
      'scatterKernel',
      'randomUniformKernel',
    ];
    for (const d of defaults) expect(base).toMatch(new RegExp(`protected ${d}\\(`));
    expect(new Set([...typed(base, false), ...defaults])).toEqual(new Set(OPTIONAL_HOOKS.map((h) => h.name)));
  });

  test("no hook is patched onto an instance: a backend's hooks are its class's methods", () => {
    const hookNames = [...REQUIRED_HOOKS, ...OPTIONAL_HOOKS].map((h) => h.name);
    for (const be of [new CpuBackend(), new ReferenceBackend()]) {
      try {
        expect(Object.getOwnPropertyNames(be).filter((p) => hookNames.includes(p))).toEqual([]);
      } finally {
        be.dispose();
      }
    }
  });
});
