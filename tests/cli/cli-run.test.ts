import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NpyFormatError, readNpy, writeNpy } from '@polyhal/conformance';
import { encodeModel } from '../support/onnx-builder.js';
import { runOrt } from '../support/onnx-ort.js';
import {
  CLS,
  command,
  f32,
  npyBytes,
  oneErrorLine,
  parseNpy,
  textLine,
  tinyModel,
  tinyOracle,
  W,
} from './model-fixtures.js';

// `polyhal run model.onnx`: the built CLI as a user runs it, on a tiny model with a float64 oracle and on
// PP-OCR's direction classifier against onnxruntime-node; the .npy codec against bytes laid out by hand.
const polyhal = command('packages/cli/dist/main.js');

let dir: string;
let tiny: string;
let xPath: string;
const X = [0.5, -1, 0.25, 2, -0.75, 1.5, 1, -0.5];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'polyhal-run-'));
  tiny = join(dir, 'tiny.onnx');
  writeFileSync(tiny, tinyModel());
  xPath = join(dir, 'x.npy');
  writeFileSync(xPath, npyBytes('<f4', [2, 4], f32(X)));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The saved outputs of a run, read by the .npy layout. */
function saved(out: string, name: string) {
  return parseNpy(readFileSync(join(out, `${name}.npy`)));
}

describe('polyhal run', () => {
  test.each(['cpu', 'wasm'])(
    'the tiny model on %s: outputs summarized and saved, equal to the float64 oracle',
    (be) => {
      const out = join(dir, `out-${be}`);
      mkdirSync(out);
      const r = polyhal('run', tiny, '--backend', be, '--input', `x=${xPath}`, '--save', out);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      const oracle = tinyOracle(X);
      expect(r.stdout).toMatch(new RegExp(`^model: .*tiny\\.onnx on ${be} \\(`, 'm'));
      expect(r.stdout).toMatch(/^ {2}input x: float32 \[2, 4\] from .*x\.npy$/m);
      const max = Math.max(...oracle.y);
      expect(r.stdout).toContain(
        `  y: float32 [2, 3]  min ${Math.min(...oracle.y).toPrecision(5)}  max ${max.toPrecision(5)}`,
      );
      expect(r.stdout).toContain(`  idx: int64 [2]  min ${Math.min(...oracle.idx)}  max ${Math.max(...oracle.idx)}`);
      const y = saved(out, 'y');
      expect([y.descr, y.shape]).toEqual(['<f4', [2, 3]]);
      const got = new Float32Array(y.data.buffer);
      oracle.y.forEach((v, i) => expect(Math.abs(got[i]! - v)).toBeLessThanOrEqual(4e-7 * max));
      const idx = saved(out, 'idx');
      expect([idx.descr, idx.shape]).toEqual(['<i8', [2]]);
      expect(Array.from(new BigInt64Array(idx.data.buffer), Number)).toEqual(oracle.idx);
    },
  );

  test('--profile times every node in execution order and totals them per op', () => {
    // by default Add(bias) → Exp → Mul(0.5) runs as one FusedElementwise node under the Mul's name
    const fused = polyhal('run', tiny, '--backend', 'cpu', '--input', `x=${xPath}`, '--profile');
    expect(fused.status).toBe(0);
    expect([...fused.stdout.matchAll(/^ +(\d+) {2}(\S+) +(\S+) +\d+\.\d{3} +\d+\.\d%$/gm)].map((m) => m[3])).toEqual([
      'MatMul',
      'FusedElementwise',
      'ArgMax',
    ]);
    const r = polyhal(
      'run',
      tiny,
      '--backend',
      'cpu',
      '--input',
      `x=${xPath}`,
      '--profile',
      '--graph-optimization',
      'basic',
    );
    expect(r.status).toBe(0);
    const rows = [...r.stdout.matchAll(/^ +(\d+) {2}(\S+) +(\S+) +(\d+\.\d{3}) +\d+\.\d%$/gm)];
    expect(rows.map((m) => [Number(m[1]), m[2], m[3]])).toEqual([
      [1, 'matmul_node', 'MatMul'],
      [2, 'add_node', 'Add'],
      [3, 'exp_node', 'Exp'],
      [4, 'scale_node', 'Mul'],
      [5, 'argmax_node', 'ArgMax'],
    ]);
    expect(r.stdout).toMatch(/time per node \(execution order; 5 nodes, \d+\.\d\d ms\)/);
    const ops = [...r.stdout.matchAll(/^(MatMul|Add|Exp|Mul|ArgMax) +1 +\d+\.\d{3} +\d+\.\d%$/gm)].map((m) => m[1]);
    expect(ops.sort()).toEqual(['Add', 'ArgMax', 'Exp', 'MatMul', 'Mul']);
    expect(r.stdout).toMatch(
      /first run [\d.]+ ms \(plans every node\); second run [\d.]+ ms; 5 nodes on cpu, 0 on the host, peak [\d.]+ KiB/,
    );
  });

  test('an input given no file gets seeded values: the same seed the same outputs, another seed others', () => {
    const runs = ['0', '0', '1'].map((seed) => polyhal('run', tiny, '--backend', 'cpu', '--seed', seed));
    for (const r of runs) expect(r.status).toBe(0);
    expect(runs[0]!.stdout).toMatch(/input x: float32 \[2, 4\] from uniform \[-1, 1\), seed 0/);
    const y = (s: string) => /^ {2}y: .*$/m.exec(s)![0];
    expect(y(runs[1]!.stdout)).toBe(y(runs[0]!.stdout));
    expect(y(runs[2]!.stdout)).not.toBe(y(runs[0]!.stdout));
  });

  test('PP-OCR direction classifier on cpu and wasm: probabilities as onnxruntime-node computes them', () => {
    const line = textLine(192);
    const linePath = join(dir, 'line.npy');
    writeFileSync(linePath, npyBytes('<f4', [1, 3, 48, 192], f32(line)));
    const [ort] = runOrt([
      { model: CLS, feeds: [{ name: 'x', type: 'float32', dims: [1, 3, 48, 192], data: line.map(String) }] },
    ]);
    const want = ort!.outputs!['softmax_0.tmp_0']!.data as number[];
    for (const be of ['cpu', 'wasm']) {
      const out = join(dir, `cls-${be}`);
      mkdirSync(out);
      const r = polyhal('run', CLS, '--backend', be, '--input', `x=${linePath}`, '--save', out);
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/^ {2}softmax_0\.tmp_0: float32 \[1, 2\] {2}min /m);
      const got = new Float32Array(saved(out, 'softmax_0.tmp_0').data.buffer);
      expect(got.length).toBe(2);
      want.forEach((v, i) => expect(Math.abs(got[i]! - v)).toBeLessThan(1e-4));
    }
  }, 60_000);

  test.each([
    ['a truncated model', () => tinyModel().slice(0, 150), [], /bad\.onnx: OnnxDecodeError: .*runs past the end/],
    [
      'a tensor claiming 4 TB in a small file',
      () =>
        encodeModel({
          nodes: [{ op: 'MatMul', inputs: ['x', 'W'], outputs: ['y'] }],
          inputs: [{ name: 'x', dtype: 'float32', shape: [1, 4] }],
          outputs: [{ name: 'y', dtype: 'float32', shape: [1, 3] }],
          initializers: [{ name: 'W', dtype: 'float32', dims: [100000, 100000, 100], data: W }],
        }),
      [],
      /bad\.onnx: OnnxDecodeError: .*W/,
    ],
    ['an unknown input', tinyModel, ['--input', 'img=X'], /ModelInputError: --input img=.*no input 'img'/],
    ['symbolic dims and no file', () => tinyModel('batch'), [], /input 'x' has symbolic dims \[batch, 4\]/],
    ['a feed of another dtype', tinyModel, ['--input', 'x=INT'], /input 'x' \(from .*int\.npy\): OnnxFeedError: /],
    [
      'a feed of another shape',
      tinyModel,
      ['--input', 'x=T'],
      /input 'x' \(from .*t\.npy\): OnnxFeedError: .*\[4, 2\]/,
    ],
    [
      'a bad .npy',
      tinyModel,
      ['--input', 'x=BAD'],
      /NpyFormatError: .*bad\.npy: .*needs 32 bytes of data; the file holds 8/,
    ],
    ['an unknown backend', tinyModel, ['--backend', 'tpu'], /UnknownBackendError: .*tpu/],
  ])('%s: exit 2 with one typed line naming the file or input', (_, model, extra, message) => {
    const path = join(dir, 'bad.onnx');
    writeFileSync(path, model());
    writeFileSync(join(dir, 'int.npy'), npyBytes('<i4', [2, 4], new Uint8Array(32)));
    writeFileSync(join(dir, 't.npy'), npyBytes('<f4', [4, 2], f32(X)));
    writeFileSync(join(dir, 'bad.npy'), npyBytes('<f4', [2, 4], f32([1, 2])));
    const files: Record<string, string> = { INT: 'int.npy', T: 't.npy', BAD: 'bad.npy' };
    const args = (extra as string[]).map((a) =>
      a.replace(/=(\w+)$/, (_m, k: string) => `=${join(dir, files[k] ?? k)}`),
    );
    const r = polyhal('run', path, ...(args.length && args[0] !== '--backend' ? ['--backend', 'cpu'] : []), ...args);
    expect(r.status).toBe(2);
    expect(oneErrorLine(r.stderr)).toMatch(message as RegExp);
  });

  test('usage: no model, a missing file, a --save directory that is not there, a training flag (exit 2)', () => {
    for (const [args, message] of [
      [['run'], /missing required argument 'model'/],
      [['run', join(dir, 'none.onnx')], /none\.onnx: cannot be read/],
      [['run', tiny, '--save', join(dir, 'nowhere')], /--save .*nowhere: no such directory/],
      [['run', tiny, '--epochs', '3'], /unknown option '--epochs'/],
      [['run', tiny, '--seed', '0x1'], /--seed must be a non-negative integer, got '0x1'/],
    ] as const) {
      const r = polyhal(...args);
      expect({ args, status: r.status }).toEqual({ args, status: 2 });
      expect(r.stderr).toMatch(message);
    }
  });

  test('polyhal alone is still the main job: --help describes training and lists the run command', () => {
    const r = polyhal('--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(
      /^Usage: polyhal \[options\]\n {7}polyhal run <model> \[options\]\n\nTrain a model on real MNIST/,
    );
    expect(r.stdout).toMatch(/^ {2}run \[options\] <model> +Run an ONNX model on a PolyHAL backend/m);
  });
});

describe('.npy (readNpy, writeNpy)', () => {
  test('NumPy files of every dtype read as laid out; big-endian and format 2.0 too', () => {
    const cases: [string, Uint8Array, string, unknown[]][] = [
      ['<f4', f32([1.5, -2]), 'float32', [1.5, -2]],
      ['<f8', new Uint8Array(Float64Array.of(0.1, 1e300).buffer), 'float64', [0.1, 1e300]],
      ['<i4', new Uint8Array(Int32Array.of(-3, 2 ** 31 - 1).buffer), 'int32', [-3, 2 ** 31 - 1]],
      ['<i8', new Uint8Array(BigInt64Array.of(-(2n ** 40n), 7n).buffer), 'int64', [-(2n ** 40n), 7n]],
      ['|u1', Uint8Array.of(0, 255), 'uint8', [0, 255]],
      ['|i1', Uint8Array.of(0x80, 0x7f), 'int8', [-128, 127]],
      ['|b1', Uint8Array.of(1, 0), 'bool', [1, 0]],
      ['>f4', Uint8Array.of(0x3f, 0xc0, 0, 0, 0xc0, 0, 0, 0), 'float32', [1.5, -2]],
    ];
    for (const [descr, data, dtype, values] of cases) {
      const a = readNpy(npyBytes(descr, [2], data), `${descr}.npy`);
      expect([descr, a.dtype, a.dims, Array.from(a.data as ArrayLike<unknown>)]).toEqual([descr, dtype, [2], values]);
    }
    const v2 = readNpy(npyBytes('<f4', [1, 2], f32([3, 4]), { version: 2 }));
    expect([v2.dims, Array.from(v2.data as Float32Array)]).toEqual([
      [1, 2],
      [3, 4],
    ]);
    const scalar = readNpy(npyBytes('<f8', [], new Uint8Array(Float64Array.of(2.5).buffer)));
    expect([scalar.dims, scalar.data[0]]).toEqual([[], 2.5]);
    expect(readNpy(npyBytes('<f4', [0, 3], new Uint8Array(0))).dims).toEqual([0, 3]);
  });

  test('writeNpy writes the bytes NumPy writes (format 1.0, header padded to 64)', () => {
    const a = { dtype: 'float32', dims: [2, 3], data: Float32Array.of(1, 2, 3, 4, 5, 6) };
    expect(writeNpy(a)).toEqual(npyBytes('<f4', [2, 3], f32([1, 2, 3, 4, 5, 6])));
    const b = { dtype: 'bool', dims: [3], data: Uint8Array.of(1, 0, 1) };
    expect(writeNpy(b)).toEqual(npyBytes('|b1', [3], Uint8Array.of(1, 0, 1)));
    const c = { dtype: 'int64', dims: [], data: BigInt64Array.of(-7n) };
    expect(writeNpy(c)).toEqual(npyBytes('<i8', [], new Uint8Array(BigInt64Array.of(-7n).buffer)));
    expect(() => writeNpy({ dtype: 'float32', dims: [2], data: Float32Array.of(1) })).toThrow(/1 elements/);
  });

  test.each([
    ['empty', new Uint8Array(0), /empty file/],
    ['no magic', new TextEncoder().encode('0123456789abcdef'), /no \\x93NUMPY magic/],
    ['version 9', Uint8Array.of(0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 9, 0, 0, 0), /format version 9\.0/],
    ['header past the end', npyBytes('<f4', [1], f32([1])).slice(0, 40), /the header \(\d+ bytes\) runs past the end/],
    ['not a dict', npyBytes('', [], new Uint8Array(0), { headerText: '[1, 2]' }), /not a dict/],
    [
      'a missing key',
      npyBytes('', [], new Uint8Array(0), { headerText: "{'descr': '<f4', 'shape': (1,), }" }),
      /keys descr, shape \(descr, fortran_order and shape expected\)/,
    ],
    [
      'a negative size',
      npyBytes('', [], new Uint8Array(0), { headerText: "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }" }),
      /holds '-1', not a size/,
    ],
    ['Fortran order', npyBytes('<f4', [1], f32([1]), { fortran: true }), /Fortran order/],
    ['complex64', npyBytes('<c8', [1], new Uint8Array(8)), /dtype '<c8'/],
    [
      'a claimed 40 TB',
      npyBytes('<f4', [100000, 100000, 1000], f32([1])),
      /needs 40000000000000 bytes of data; the file holds 4$/,
    ],
    ['trailing bytes', npyBytes('<f4', [1], f32([1, 2])), /needs 4 bytes of data; the file holds 8/],
    ['a bool of 2', npyBytes('|b1', [1], Uint8Array.of(2)), /a bool element that is not 0 or 1/],
  ])('%s: NpyFormatError naming the file', (_, bytes, message) => {
    let err: unknown;
    try {
      readNpy(bytes, 'in.npy');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(NpyFormatError);
    expect((err as Error).message).toMatch(/^in\.npy: not a \.npy file this reader takes: /);
    expect((err as Error).message).toMatch(message);
  });
});
