// KNOWN_BACKENDS: the one list of this project's backends that BACKEND_PACKAGES, the conformance CLI,
// the scoreboard and tests/support/backends.ts derive from.
import { readFileSync } from 'node:fs';
import { BACKEND_PACKAGES, DEFAULT_BACKENDS, KNOWN_BACKENDS } from '@polyhal/hal';
import { cpuBackendEntry } from '@polyhal/backend-cpu';
import { referenceBackendEntry } from '@polyhal/backend-reference';
import { wasmBackendEntry } from '@polyhal/backend-wasm';
import { webgpuBackendEntry } from '@polyhal/backend-webgpu';
import { REPO_BACKENDS } from '../support/backends.js';

describe('KNOWN_BACKENDS', () => {
  test('names, packages and the default set', () => {
    expect(KNOWN_BACKENDS.map((b) => [b.name, b.package, b.inDefaultSet])).toEqual([
      ['cpu', '@polyhal/backend-cpu', true],
      ['wasm', '@polyhal/backend-wasm', true],
      ['webgpu', '@polyhal/backend-webgpu', true],
      ['reference', '@polyhal/backend-reference', false],
    ]);
    expect(DEFAULT_BACKENDS.map((b) => b.name)).toEqual(['cpu', 'wasm', 'webgpu']);
    expect(Object.isFrozen(KNOWN_BACKENDS) && KNOWN_BACKENDS.every((b) => Object.isFrozen(b))).toBe(true);
  });

  test('each package is the workspace package of that name', () => {
    for (const b of KNOWN_BACKENDS) {
      const pkg = JSON.parse(readFileSync(`backends/${b.name}/package.json`, 'utf8')) as { name: string };
      expect(pkg.name).toBe(b.package);
    }
  });

  test('load() returns the registry entry the package exports', async () => {
    const loaded = await Promise.all(KNOWN_BACKENDS.map((b) => b.load()));
    const exported = [cpuBackendEntry, wasmBackendEntry, webgpuBackendEntry, referenceBackendEntry];
    loaded.forEach((entry, i) => expect(entry).toBe(exported[i]));
  });

  test('BACKEND_PACKAGES and REPO_BACKENDS derive from it', () => {
    expect(Object.entries(BACKEND_PACKAGES)).toEqual(KNOWN_BACKENDS.map((b) => [b.name, b.package]));
    expect(Object.getPrototypeOf(BACKEND_PACKAGES)).toBeNull();
    expect(Object.keys(REPO_BACKENDS)).toEqual(['cpu', 'wasm', 'webgpu']);
  });
});
