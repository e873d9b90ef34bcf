import { afterEach, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BackendUnavailableError,
  createBackend,
  InvalidArgumentError,
  registerBackend,
  registeredBackends,
  UnknownBackendError,
  unregisterBackend,
} from '@polyhal/hal';
import { CpuBackend, cpuBackendEntry } from '@polyhal/backend-cpu';
import { createWasmBackend, wasmBackendEntry } from '@polyhal/backend-wasm';
import { webgpuBackendEntry } from '@polyhal/backend-webgpu';
import { REPO_BACKENDS, requiredBackends } from '../support/backends.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const startDir = process.cwd();

afterEach(() => {
  process.chdir(startDir);
  for (const n of ['broken', 'fakegpu', 'softgpu', 'fakewasm']) unregisterBackend(n);
  registerBackend(cpuBackendEntry);
  registerBackend(wasmBackendEntry);
  registerBackend(webgpuBackendEntry);
});

describe('backend selection', () => {
  test('POLYHAL_BACKEND=cpu picks cpu and the report says the environment asked', async () => {
    const { backend, report } = await createBackend({ env: { POLYHAL_BACKEND: 'cpu' }, configPath: null });
    expect(backend).toBeInstanceOf(CpuBackend);
    expect(report.source).toBe('env');
    expect(report.chosen).toBe('cpu');
    expect(report.toString()).toContain('(env: cpu) → cpu');
    backend.dispose();
  });

  test('an unknown name is a typed error that lists the registered backends', async () => {
    const err = await createBackend({ backend: 'tpu', configPath: null }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnknownBackendError);
    expect((err as UnknownBackendError).available).toEqual(registeredBackends());
    expect((err as Error).message).toMatch(/unknown backend 'tpu'; available backends: .*cpu/);
  });

  test('an unknown name from the environment is the same typed error', async () => {
    await expect(createBackend({ env: { POLYHAL_BACKEND: 'nope' }, configPath: null })).rejects.toBeInstanceOf(
      UnknownBackendError,
    );
  });

  test('auto falls back past a backend that fails to initialize, and says why', async () => {
    registerBackend({
      name: 'broken',
      priority: 900,
      create: async () => {
        throw new BackendUnavailableError('broken', 'no adapter found');
      },
    });
    const { backend, report } = await createBackend({ env: {}, configPath: null });
    expect(report.chosen).toBe('wasm');
    expect(report.attempts.find((a) => a.backend === 'broken')).toMatchObject({
      outcome: 'rejected',
      reason: 'no adapter found',
    });
    expect(report.attempts.find((a) => a.backend === 'cpu')).toMatchObject({ outcome: 'not tried' });
    backend.dispose();
  });

  test(
    'an explicitly named backend that fails throws BackendUnavailableError unless fallback ' + 'is asked for',
    async () => {
      registerBackend({
        name: 'broken',
        priority: 900,
        create: async () => {
          throw new BackendUnavailableError('broken', 'no SIMD');
        },
      });
      await expect(createBackend({ backend: 'broken', env: {}, configPath: null })).rejects.toThrow(/no SIMD/);
      const { backend, report } = await createBackend({ backend: 'broken', fallback: true, env: {}, configPath: null });
      expect(report.chosen).toBe('wasm');
      backend.dispose();
    },
  );

  test('auto ranks a software GPU below wasm (still above cpu) and says so', async () => {
    unregisterBackend('wasm');
    unregisterBackend('webgpu');
    registerBackend({
      name: 'softgpu',
      priority: 300,
      probe: async () => ({ available: true, software: true, device: 'llvmpipe (LLVM 15)' }),
      create: async () => new CpuBackend(),
    });
    registerBackend({
      name: 'fakegpu',
      priority: 250,
      probe: async () => ({ available: false, reason: 'no adapter' }),
      create: async () => new CpuBackend(),
    });
    let { backend, report } = await createBackend({ env: {}, configPath: null });
    // softgpu drops to 150: still above cpu (100); the report names the software device.
    expect(report.chosen).toBe('softgpu');
    backend.dispose();
    registerBackend(wasmBackendEntry);
    ({ backend, report } = await createBackend({ env: {}, configPath: null }));
    expect(report.chosen).toBe('wasm');
    expect(report.attempts.find((a) => a.backend === 'softgpu')!.outcome).toBe('not tried');
    expect(report.attempts.find((a) => a.backend === 'softgpu')!.reason).toMatch(
      /below wasm: software device llvmpipe/,
    );
    expect(report.attempts.find((a) => a.backend === 'fakegpu')).toMatchObject({
      outcome: 'rejected',
      reason: 'no adapter',
    });
    backend.dispose();
  });

  test('the real WebGPU adapter is probed: a software one (lavapipe) is ranked below wasm', async () => {
    const probe = await webgpuBackendEntry.probe!();
    // Required (CI=true): the adapter must be there. Elsewhere a missing adapter must say why.
    expect(
      probe.available || !requiredBackends().includes('webgpu')
        ? 'ok'
        : `webgpu required but unavailable: ${probe.reason}`,
    ).toBe('ok');
    const { backend, report } = await createBackend({ env: {}, configPath: null });
    const attempt = report.attempts.find((a) => a.backend === 'webgpu')!;
    if (!probe.available) {
      expect(attempt).toMatchObject({ outcome: 'rejected' });
      expect(attempt.reason.length).toBeGreaterThan(0);
    } else if (probe.software) {
      expect(report.chosen).toBe('wasm');
      expect(attempt.reason).toMatch(/below wasm: software device/);
    } else {
      expect(report.chosen).toBe('webgpu');
    }
    backend.dispose();
  });

  test('polyhal.config.json selects a backend and passes options; the environment overrides it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'polyhal-'));
    const file = join(dir, 'polyhal.config.json');
    writeFileSync(file, JSON.stringify({ backend: 'cpu', options: { memoryLimit: 4096 } }));
    const { backend, report } = await createBackend({ env: {}, configPath: file });
    expect(report.source).toBe('config');
    expect(backend.memoryAvailable()).toBe(4096);
    backend.dispose();
    await expect(createBackend({ env: { POLYHAL_BACKEND: 'tpu' }, configPath: file })).rejects.toBeInstanceOf(
      UnknownBackendError,
    );
  });

  test('a malformed config file is a clear error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'polyhal-'));
    const file = join(dir, 'polyhal.config.json');
    writeFileSync(file, '{ backend: ');
    await expect(createBackend({ env: {}, configPath: file })).rejects.toThrow(/not valid JSON/);
  });
});

describe('configuration', () => {
  const project = (config: unknown): { dir: string; file: string; nested: string } => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'polyhal-cfg-')));
    const file = join(dir, 'polyhal.config.json');
    writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config));
    writeFileSync(join(dir, 'package.json'), '{}'); // the project root: discovery stops here
    const nested = join(dir, 'src', 'deep');
    mkdirSync(nested, { recursive: true });
    return { dir, file, nested };
  };

  test('polyhal.config.json is found by walking up to the project root, and the report names it', async () => {
    const { file, nested } = project({ backend: 'cpu', options: { memoryLimit: 8192 } });
    process.chdir(nested);
    const { backend, report } = await createBackend({ env: {} });
    expect(report.source).toBe('config');
    expect(report.chosen).toBe('cpu');
    expect(report.configFile).toBe(file);
    expect(report.toString()).toContain(`config   ${file}`);
    expect(backend.memoryAvailable()).toBe(8192);
    backend.dispose();
  });

  test("an explicit backend or POLYHAL_BACKEND keeps the config file's options", async () => {
    const { nested } = project({ backend: 'wasm', options: { memoryLimit: 12288 } });
    process.chdir(nested);
    for (const how of [{ backend: 'cpu', env: {} }, { env: { POLYHAL_BACKEND: 'cpu' } }]) {
      const { backend, report } = await createBackend(how);
      expect(report.chosen).toBe('cpu');
      expect(backend.memoryAvailable()).toBe(12288);
      backend.dispose();
    }
    // createBackend's own options override the file's, key by key.
    const { backend } = await createBackend({ backend: 'cpu', env: {}, options: { memoryLimit: 4096 } });
    expect(backend.memoryAvailable()).toBe(4096);
    backend.dispose();
  });

  test.each([
    [{ backnd: 'cpu' }, /unknown key 'backnd'/],
    [{ backend: 7 }, /key 'backend' must be a string, got 7/],
    [{ prefer: 'cpu' }, /key 'prefer' must be an array of strings/],
    [{ options: { memoryLimit: 'lots' } }, /option 'memoryLimit' must be a finite number ≥ 1, got "lots"/],
    [{ options: { threads: -3 } }, /option 'threads' must be an integer in \[1, 256\] or "auto", got -3/],
    [{ options: { memoryLimt: 1024 } }, /unknown option 'memoryLimt'/],
    [{ options: { errorScopes: 'all' } }, /option 'errorScopes' must be one of "op", "batch", got "all"/],
    [
      { options: { int8Kernel: 'tensor' } },
      /option 'int8Kernel' must be one of "auto", "subgroup-matrix", "dot4", got "tensor"/,
    ],
  ])('config %j is an InvalidArgumentError naming the key', async (config, message) => {
    const { file, nested } = project(config);
    process.chdir(nested);
    const err = await createBackend({ backend: 'cpu', env: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).toContain(file);
  });

  test(
    'ill-typed options given to createBackend or to a factory are InvalidArgumentErrors ' + 'naming the key',
    async () => {
      await expect(
        createBackend({ backend: 'cpu', env: {}, configPath: null, options: { threads: 'many' } }),
      ).rejects.toThrow(/createBackend options \(wasm backend\): option 'threads'/);
      await expect(createWasmBackend({ threads: -3 })).rejects.toThrow(InvalidArgumentError);
      await expect(createWasmBackend({ threads: 2.5 })).rejects.toThrow(
        /wasm backend: option 'threads' must be an integer/,
      );
      await expect(createWasmBackend({ treads: 2 } as never)).rejects.toThrow(
        /wasm backend: unknown option 'treads' \(known: memoryLimit, threads/,
      );
    },
  );

  test('an explicit config path that does not exist is an error, not silence', async () => {
    await expect(
      createBackend({ env: {}, configPath: join(tmpdir(), 'no-such-dir', 'polyhal.config.json') }),
    ).rejects.toThrow(/does not exist/);
  });

  test('with no backend registered, the error says which packages to import', async () => {
    for (const n of registeredBackends()) unregisterBackend(n);
    const err = await createBackend({ env: {}, configPath: null }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackendUnavailableError);
    expect((err as Error).message).toMatch(
      new RegExp(
        "no backend is registered: import a backend package first \\(import '@polyhal/backend-cpu', " +
          "import '@polyhal/backend-wasm', import '@polyhal/backend-webgpu', import '@polyhal/backend-reference'\\)",
      ),
    );
    registerBackend(cpuBackendEntry);
    const named = await createBackend({ backend: 'wasm', env: {}, configPath: null }).catch((e: unknown) => e);
    expect(named).toBeInstanceOf(UnknownBackendError);
    expect((named as Error).message).toMatch(/wasm is not registered: import '@polyhal\/backend-wasm' first/);
  });

  test('the report says whether the webgpu package is missing or failed to load', () => {
    // A module hook makes `import('webgpu')` fail the way it does where the package is absent (or broken).
    const hook = (how: 'missing' | 'broken') =>
      `data:text/javascript,${encodeURIComponent(`
      export async function resolve(spec, ctx, next) {
        if (spec !== 'webgpu') return next(spec, ctx);
        ${
          how === 'missing'
            ? 'const e = new Error("Cannot find package \'webgpu\' imported from x"); e.code = ' +
              "'ERR_MODULE_NOT_FOUND'; throw e;"
            : 'return { url: \'data:text/javascript,throw new Error("dawn.node: undefined ' +
              'symbol")\', shortCircuit: true };'
        }
      }`)}`;
    const script = (how: 'missing' | 'broken') => `
      import { register } from 'node:module';
      register(${JSON.stringify(hook(how))});
      const { createBackend } = await import('@polyhal/hal');
      await import('@polyhal/backend-cpu');
      await import('@polyhal/backend-webgpu');
      const { report } = await createBackend({ env: {}, configPath: null });
      console.log(report.toString());`;
    const missing = spawnSync(process.execPath, ['--input-type=module', '-e', script('missing')], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(missing.stdout).toMatch(
      /webgpu\s+rejected\s+the `webgpu` package \(Dawn for Node\) is not installed: npm install webgpu/,
    );
    const broken = spawnSync(process.execPath, ['--input-type=module', '-e', script('broken')], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(broken.stdout).toMatch(
      /webgpu\s+rejected\s+the `webgpu` package failed to load: dawn\.node: undefined symbol/,
    );
  });

  test(
    'without a Vulkan loader the webgpu backend is rejected with the reason, and Dawn is never ' +
      'loaded (no warning)',
    () => {
      // A child process whose file system (as the backend sees it) has no libvulkan.so.1.
      const script = `
      const fs = process.getBuiltinModule('node:fs');
      const fake = { ...fs, existsSync: (p) => !String(p).includes('libvulkan') && fs.existsSync(p),
        readFileSync: (p, e) => { if (String(p) === '/etc/ld.so.cache') throw new Error('none');
          return fs.readFileSync(p, e); } };
      const real = process.getBuiltinModule.bind(process);
      process.getBuiltinModule = (id) => (id === 'node:fs' || id === 'fs' ? fake : real(id));
      const { createBackend } = await import('@polyhal/hal');
      await import('@polyhal/backend-cpu');
      await import('@polyhal/backend-webgpu');
      const { report } = await createBackend({ env: {}, configPath: null });
      console.log(report.toString());`;
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
      expect(r.stderr).not.toMatch(/Couldn't load Vulkan/);
      expect(r.stdout).toMatch(/webgpu\s+rejected\s+no Vulkan loader \(libvulkan\.so\.1\) on this machine/);
      expect(r.status).toBe(0);
    },
  );
});

describe('required backends', () => {
  test('REQUIRE_BACKENDS defaults to every repo backend under CI and to none otherwise', () => {
    expect(requiredBackends({ CI: 'true' })).toEqual(Object.keys(REPO_BACKENDS));
    expect(requiredBackends({})).toEqual([]);
    expect(requiredBackends({ REQUIRE_BACKENDS: 'cpu, webgpu' })).toEqual(['cpu', 'webgpu']);
  });

  // A backend that is required here and cannot start is a failure, never a skip.
  for (const name of requiredBackends()) {
    test(`required backend '${name}' starts`, async () => {
      const factory = REPO_BACKENDS[name];
      expect(name in REPO_BACKENDS ? 'known' : `'${name}' is required but this repository has no such backend`).toBe(
        'known',
      );
      const be = await factory!();
      expect(be.name).toBe(name);
      be.dispose();
    });
  }
});
