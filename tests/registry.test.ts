import { afterEach, describe, expect, test } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BackendUnavailableError, createBackend, registerBackend, registeredBackends, UnknownBackendError, unregisterBackend,
} from '@polyhal/hal';
import { CpuBackend } from '@polyhal/backend-cpu';
import { wasmBackendEntry } from '@polyhal/backend-wasm';
import { webgpuBackendEntry } from '@polyhal/backend-webgpu';
import { REPO_BACKENDS, requiredBackends } from './backends.js';

afterEach(() => {
  for (const n of ['broken', 'fakegpu', 'softgpu', 'fakewasm']) unregisterBackend(n);
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
    await expect(createBackend({ env: { POLYHAL_BACKEND: 'nope' }, configPath: null })).rejects.toBeInstanceOf(UnknownBackendError);
  });

  test('auto falls back past a backend that fails to initialize, and says why', async () => {
    registerBackend({ name: 'broken', priority: 900, create: async () => { throw new BackendUnavailableError('broken', 'no adapter found'); } });
    const { backend, report } = await createBackend({ env: {}, configPath: null });
    expect(report.chosen).toBe('wasm');
    expect(report.attempts.find((a) => a.backend === 'broken')).toMatchObject({ outcome: 'rejected', reason: 'no adapter found' });
    expect(report.attempts.find((a) => a.backend === 'cpu')).toMatchObject({ outcome: 'not tried' });
    backend.dispose();
  });

  test('an explicitly named backend that fails throws BackendUnavailableError unless fallback is asked for', async () => {
    registerBackend({ name: 'broken', priority: 900, create: async () => { throw new BackendUnavailableError('broken', 'no SIMD'); } });
    await expect(createBackend({ backend: 'broken', env: {}, configPath: null })).rejects.toThrow(/no SIMD/);
    const { backend, report } = await createBackend({ backend: 'broken', fallback: true, env: {}, configPath: null });
    expect(report.chosen).toBe('wasm');
    backend.dispose();
  });

  test('auto ranks a software GPU below wasm (still above cpu) and says so', async () => {
    unregisterBackend('wasm');
    unregisterBackend('webgpu');
    registerBackend({
      name: 'softgpu', priority: 300,
      probe: async () => ({ available: true, software: true, device: 'llvmpipe (LLVM 15)' }),
      create: async () => new CpuBackend(),
    });
    registerBackend({ name: 'fakegpu', priority: 250, probe: async () => ({ available: false, reason: 'no adapter' }), create: async () => new CpuBackend() });
    let { backend, report } = await createBackend({ env: {}, configPath: null });
    // softgpu drops to 150: still above cpu (100); the report names the software device.
    expect(report.chosen).toBe('softgpu');
    backend.dispose();
    registerBackend(wasmBackendEntry);
    ({ backend, report } = await createBackend({ env: {}, configPath: null }));
    expect(report.chosen).toBe('wasm');
    expect(report.attempts.find((a) => a.backend === 'softgpu')!.outcome).toBe('not tried');
    expect(report.attempts.find((a) => a.backend === 'softgpu')!.reason).toMatch(/below wasm: software device llvmpipe/);
    expect(report.attempts.find((a) => a.backend === 'fakegpu')).toMatchObject({ outcome: 'rejected', reason: 'no adapter' });
    backend.dispose();
  });

  test('the real WebGPU adapter is probed: a software one (lavapipe) is ranked below wasm', async () => {
    const probe = await webgpuBackendEntry.probe!();
    // Required (CI=true): the adapter must be there. Elsewhere a missing adapter must say why.
    expect(probe.available || !requiredBackends().includes('webgpu') ? 'ok' : `webgpu required but unavailable: ${probe.reason}`).toBe('ok');
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
    await expect(createBackend({ env: { POLYHAL_BACKEND: 'tpu' }, configPath: file })).rejects.toBeInstanceOf(UnknownBackendError);
  });

  test('a malformed config file is a clear error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'polyhal-'));
    const file = join(dir, 'polyhal.config.json');
    writeFileSync(file, '{ backend: ');
    await expect(createBackend({ env: {}, configPath: file })).rejects.toThrow(/not valid JSON/);
  });
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
      expect(name in REPO_BACKENDS ? 'known' : `'${name}' is required but this repository has no such backend`).toBe('known');
      const be = await factory!();
      expect(be.name).toBe(name);
      be.dispose();
    });
  }
});
