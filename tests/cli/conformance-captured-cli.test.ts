// polyhal-conformance --captured (packages/conformance/src/captured-cli.ts), run from the built bin: the report per
// backend, cpu and wasm said to compute as called, --json, and the options it does not combine with.
import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CapturedConformanceResult, selectCases } from '@polyhal/conformance';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cli = (...args: string[]) =>
  spawnSync(process.execPath, [join(root, 'packages/conformance/dist/bin.js'), ...args], {
    cwd: root,
    encoding: 'utf8',
  });

describe('polyhal-conformance --captured', () => {
  test('every backend: webgpu replays each case, cpu and wasm compute as called; --json has the per-case rows', () => {
    const filter = 'matmul/float32/[3';
    const cases = selectCases(filter).length;
    const json = join(mkdtempSync(join(tmpdir(), 'captured-')), 'r.json');
    const r = cli('--backend', 'all', '--captured', '--filter', filter, '--json', json);
    expect(r.stderr).not.toMatch(/error/);
    expect(r.status).toBe(0);
    for (const name of ['cpu', 'wasm'])
      expect(r.stdout).toMatch(
        new RegExp(`^captured mode on ${name} — .*: ${name} computes as called.*no case run\\.$`, 'm'),
      );
    expect(r.stdout).toMatch(
      new RegExp(`^captured mode on webgpu — .*: ${cases} cases, ${cases} passed, 0 failed`, 'm'),
    );
    expect(r.stdout).toMatch(new RegExp(`^ {2}${cases} replayed \\(twice each: .*\\), 0 broken, 0 not run`, 'm'));
    expect(r.stdout).toMatch(/^ {2}broken captures \(the op reads a value on the host\): none$/m);
    const runs = JSON.parse(readFileSync(json, 'utf8')) as CapturedConformanceResult[];
    expect(runs.map((x) => [x.backend, x.captures, x.results.length])).toEqual([
      ['cpu', false, 0],
      ['wasm', false, 0],
      ['webgpu', true, cases],
    ]);
    const webgpu = runs[2]!;
    expect(webgpu.results.every((x) => x.pass && x.capture === 'replayed' && x.kernels! > 0)).toBe(true);
    expect(webgpu.replaySeed).toBe(2);
  });

  test('--captured runs the suite: with --html, --onnx-model or --onnx-node-tests it is bad usage (exit 2)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'captured-'));
    for (const extra of [
      ['--html', join(dir, 'r.html')],
      ['--onnx-model', 'model.onnx'],
      ['--onnx-node-tests', dir],
    ]) {
      const r = cli('--backend', 'cpu', '--captured', ...extra);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/^error: --captured runs the suite: it takes neither --onnx-node-tests, --onnx-model/);
      expect(r.stdout).toBe('');
    }
    expect(existsSync(join(dir, 'r.html'))).toBe(false);
  });
});
