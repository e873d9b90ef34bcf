import { describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The published builds (rollup: ESM + CJS + .d.ts) load and compute in plain Node, outside jest.
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const node = (args: string[]): string => execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' });

describe('package builds', () => {
  test.each(['hal', 'backends/cpu', 'backends/wasm', 'backends/webgpu', 'packages/conformance'])(
    '%s has ESM, CJS and type declarations',
    (pkg) => {
      for (const f of ['index.js', 'index.cjs', 'index.d.ts', 'index.d.cts']) {
        expect(existsSync(join(root, pkg, 'dist', f)) ? f : `${pkg}/dist/${f} missing: run npm run build`).toBe(f);
      }
    },
  );

  test('ESM build computes', () => {
    const out = node([
      '--input-type=module',
      '-e',
      `
      import { CpuBackend } from '@polyhal/backend-cpu';
      const be = new CpuBackend();
      const c = be.matmul(be.fromArray([1, 2, 3, 4], [2, 2]), be.fromArray([5, 6, 7, 8], [2, 2]));
      console.log(JSON.stringify(Array.from(be.readSync(c))));`,
    ]);
    expect(JSON.parse(out)).toEqual([19, 22, 43, 50]);
  });

  test('the WASM backend loads its embedded kernels from the ESM and the CJS build (no wasm path)', () => {
    const esm = node([
      '--input-type=module',
      '-e',
      `
      import { createWasmBackend } from '@polyhal/backend-wasm';
      const be = await createWasmBackend();
      const c = be.matmul(be.fromArray([1, 2, 3, 4], [2, 2]), be.fromArray([5, 6, 7, 8], [2, 2]));
      console.log(JSON.stringify(Array.from(be.readSync(c))));`,
    ]);
    expect(JSON.parse(esm)).toEqual([19, 22, 43, 50]);
    const cjs = node([
      '-e',
      `
      const { createWasmBackend } = require('@polyhal/backend-wasm');
      createWasmBackend().then((be) =>
        console.log(JSON.stringify(Array.from(be.readSync(be.relu(be.fromArray([-1, 2], [2])))))));`,
    ]);
    expect(JSON.parse(cjs)).toEqual([0, 2]);
  });

  test('the ./internal subpath (backend-author API) resolves from ESM and CJS to the main entry bindings', () => {
    const esm = node([
      '--input-type=module',
      '-e',
      `
      import * as hal from '@polyhal/hal';
      import * as internal from '@polyhal/hal/internal';
      import { CpuBackend } from '@polyhal/backend-cpu';
      const shared = Object.keys(internal).filter((k) => k in hal);
      console.log(JSON.stringify({
        same: shared.every((k) => hal[k] === internal[k]), shared: shared.length,
        families: Object.keys(internal.FAMILIES).length, cpu: new CpuBackend() instanceof internal.BaseBackend }));`,
    ]);
    expect(JSON.parse(esm)).toEqual({ same: true, shared: expect.any(Number), families: 13, cpu: true });
    expect(JSON.parse(esm).shared).toBeGreaterThan(100);
    const cjs = node([
      '-e',
      `
      const hal = require('@polyhal/hal');
      const internal = require('@polyhal/hal/internal');
      const { CpuBackend } = require('@polyhal/backend-cpu');
      console.log(JSON.stringify({
        same: internal.BaseBackend === hal.BaseBackend && internal.withTemps === hal.withTemps,
        families: Object.keys(internal.FAMILIES).length, cpu: new CpuBackend() instanceof internal.BaseBackend }));`,
    ]);
    expect(JSON.parse(cjs)).toEqual({ same: true, families: 13, cpu: true });
  });

  test('CJS build computes and shares the registry with the ESM build', () => {
    const out = node([
      '-e',
      `
      const { createBackend, registeredBackends } = require('@polyhal/hal');
      require('@polyhal/backend-cpu');
      import('@polyhal/hal').then(async (esm) => {
        const { backend, report } = await esm.createBackend({ backend: 'cpu', configPath: null });
        const s = backend.sum(backend.fromArray([1, 2, 3], [3]));
        console.log(JSON.stringify({
          names: registeredBackends(), chosen: report.chosen, sum: backend.readSync(s)[0] }));
      });`,
    ]);
    expect(JSON.parse(out)).toEqual({ names: ['cpu'], chosen: 'cpu', sum: 6 }); // only what was imported registers
  });
});
