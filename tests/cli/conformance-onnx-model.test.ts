import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CpuBackend } from '@polyhal/backend-cpu';
import type { NDArray, UnaryOp } from '@polyhal/hal';
import { compareOutput, type OnnxModelResult, runOnnxModel } from '@polyhal/conformance';
import { encodeModel } from '../support/onnx-builder.js';
import { CLS, command, f32, flipped, npyBytes, oneErrorLine, root, textLine, tinyModel, W } from './model-fixtures.js';

// polyhal-conformance --onnx-model: a whole model on each backend, every node's outputs against the
// reference backend's (float64 arithmetic rounded once per op), naming the first node where a backend
// leaves its tolerance. The built CLI, as a user runs it.
const cli = command('packages/conformance/dist/bin.js');
const SLOPPY = 'tests/support/fixtures/sloppy-exp-backend.mjs';

let dir: string;
let tiny: string;
let x: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'onnx-model-'));
  tiny = join(dir, 'tiny.onnx');
  writeFileSync(tiny, tinyModel());
  x = join(dir, 'x.npy');
  writeFileSync(x, npyBytes('<f4', [2, 4], f32([0.5, -1, 0.25, 2, -0.75, 1.5, 1, -0.5])));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const json = (p: string): OnnxModelResult => JSON.parse(readFileSync(p, 'utf8')) as OnnxModelResult;

describe('polyhal-conformance --onnx-model', () => {
  test('a backend whose exp is 0.1% off is named at the Exp node; the nodes before it agree (exit 1)', () => {
    const out = join(dir, 'sloppy.json');
    const r = cli('--onnx-model', tiny, '--input', `x=${x}`, '--backend', SLOPPY, '--json', out);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/reference: reference \(JavaScript float64 reference kernels/);
    expect(r.stdout).toMatch(/FAILED — 2 of 5 node outputs beyond tolerance/);
    expect(r.stdout).toMatch(
      /first beyond tolerance: node 'exp_node' \(Exp\), output 'e'\n {4}error 1\.0e-3 > 1\.0e-4/,
    );
    expect(r.stdout).toMatch(/^ {2}beyond tolerance: model output 'y': error 1\.0e-3 > 1\.0e-4/m);
    const res = json(out).results[0]!;
    expect(res.status).toBe('failed');
    expect(res.nodes).toBe(5);
    expect(res.firstFailure).toMatchObject({
      node: 'exp_node',
      op: 'Exp',
      output: 'e',
      dtype: 'float32',
      dims: [2, 3],
    });
    // ×1.001 everywhere: the error relative to the output's scale is 1e-3 (float32 rounding aside)
    expect(Math.abs(res.firstFailure!.error - 1e-3)).toBeLessThan(1e-5);
    // matmul_node and add_node agree; scale_node carries the error on; argmax_node's int64 indices are equal
    expect(res.worst!.error).toBeLessThan(1.01e-3);
    expect(res.failures).toBe(2); // e and y (then the model's output y)
    expect(res.modelOutputs.map((c) => [c.output, c.pass])).toEqual([
      ['y', false],
      ['idx', true],
    ]);
  });

  test('our cpu backend agrees at every node (exit 0); --tolerance tightens the bound', () => {
    const r = cli('--onnx-model', tiny, '--input', `x=${x}`, '--backend', 'cpu');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^ {2}input x: float32 \[2, 4\] from .*x\.npy$/m);
    expect(r.stdout).toMatch(/^cpu \(.*\): passed — 5 nodes, 5 outputs within tolerance/m);
    const strict = cli('--onnx-model', tiny, '--input', `x=${x}`, '--backend', SLOPPY, '--tolerance', '2e-3');
    expect(strict.status).toBe(0);
  });

  test('PP-OCR direction classifier on cpu, wasm and webgpu: every node within tolerance', () => {
    const line = join(dir, 'line.npy');
    writeFileSync(line, npyBytes('<f4', [1, 3, 48, 192], f32(textLine(192))));
    const out = join(dir, 'cls.json');
    const r = cli('--onnx-model', CLS, '--input', `x=${line}`, '--backend', 'all', '--json', out);
    expect(r.status).toBe(0);
    const res = json(out);
    expect(res.reference).toBe('reference');
    // 220 nodes in the file; the session folds each BatchNormalization into its Conv (185 left) and fuses
    // each Add → Clip → Mul → Div hard swish into one node (131 run)
    expect(res.nodes).toBeGreaterThanOrEqual(120);
    expect(res.results.map((b) => [b.backend, b.status, b.nodes])).toEqual([
      ['cpu', 'passed', res.nodes],
      ['wasm', 'passed', res.nodes],
      ['webgpu', 'passed', res.nodes],
    ]);
    for (const b of res.results) expect(b.worst!.error).toBeLessThan(b.backend === 'webgpu' ? 3e-4 : 1e-4);
  }, 60_000);

  test("Silero VAD v5 on cpu and wasm: the nodes of its If's branch are compared too, by their path", () => {
    const audio = Array.from({ length: 512 }, (_, i) => 0.3 * Math.sin((2 * Math.PI * 180 * i) / 16000));
    const files: [string, Uint8Array][] = [
      ['input', npyBytes('<f4', [1, 512], f32(audio))],
      ['state', npyBytes('<f4', [2, 1, 128], f32(new Array(256).fill(0)))],
      ['sr', npyBytes('<i8', [], new Uint8Array(BigInt64Array.of(16000n).buffer))],
    ];
    const inputs = files.flatMap(([name, bytes]) => {
      writeFileSync(join(dir, `vad-${name}.npy`), bytes);
      return ['--input', `${name}=${join(dir, `vad-${name}.npy`)}`];
    });
    const out = join(dir, 'vad.json');
    const vad = join(root, 'node_modules/@ricky0123/vad-web/dist/silero_vad_v5.onnx');
    for (const be of ['cpu', 'wasm']) {
      const r = cli('--onnx-model', vad, ...inputs, '--backend', be, '--json', out);
      expect(r.status).toBe(0);
      const res = json(out).results[0]!;
      expect([res.status, res.nodes]).toEqual(['passed', json(out).nodes]);
      expect(res.worst!.path).toEqual(['If_0']);
      expect(res.worst!.error).toBeLessThan(1e-4);
    }
  });

  test('a backend whose reads fail is an error with the reason, and one that hangs is stopped (exit 1)', () => {
    const failing = cli(
      '--onnx-model',
      tiny,
      '--input',
      `x=${x}`,
      '--backend',
      'tests/support/fixtures/throwing-read-backend.mjs',
    );
    expect(failing.status).toBe(1);
    expect(failing.stdout).toMatch(/: ERROR — TypeError: readStorage: the device was lost/);
    const hanging = cli(
      '--onnx-model',
      tiny,
      '--input',
      `x=${x}`,
      '--backend',
      'tests/support/fixtures/hanging-read-backend.mjs',
      '--timeout',
      '2000',
    );
    expect(hanging.status).toBe(1);
    expect(hanging.stdout).toMatch(/ERROR — ConformanceTimeoutError: .*did not settle within 2000 ms/);
  });

  test.each([
    ['a truncated model', () => tinyModel().slice(0, 150), [], /tiny-bad\.onnx: OnnxDecodeError: .*runs past the end/],
    [
      'a tensor claiming 4 TB in a 600-byte file',
      () =>
        encodeModel({
          nodes: [{ op: 'MatMul', inputs: ['x', 'W'], outputs: ['y'] }],
          inputs: [{ name: 'x', dtype: 'float32', shape: [1, 4] }],
          outputs: [{ name: 'y', dtype: 'float32', shape: [1, 3] }],
          initializers: [{ name: 'W', dtype: 'float32', dims: [100000, 100000, 100], data: W }],
        }),
      [],
      /OnnxDecodeError: .*initializer 0.*W/,
    ],
    [
      'an unknown input name',
      tinyModel,
      ['--input', 'image=x.npy'],
      /ModelInputError: --input image=.*no input 'image'.*its inputs: x/,
    ],
    [
      'symbolic dims and no file',
      () => tinyModel('batch'),
      [],
      /ModelInputError: input 'x' has symbolic dims \[batch, 4\]/,
    ],
  ])('%s: exit 2, one typed line naming the file or input', (_, model, extra, message) => {
    const path = join(dir, 'tiny-bad.onnx');
    writeFileSync(path, model());
    const args = (extra as string[]).map((a) => a.replace('x.npy', x));
    const r = cli('--onnx-model', path, '--backend', 'cpu', ...args);
    expect(r.status).toBe(2);
    expect(oneErrorLine(r.stderr)).toMatch(message as RegExp);
  });

  test('bad .npy inputs and feeds of the wrong dtype or shape: exit 2, one line naming the file or input', () => {
    const bad: [string, Uint8Array, RegExp][] = [
      ['magic.npy', new TextEncoder().encode('not numpy at all'), /magic\.npy: not a \.npy file .*no \\x93NUMPY magic/],
      ['short.npy', npyBytes('<f4', [2, 4], f32([1, 2, 3])), /short\.npy: .*needs 32 bytes of data; the file holds 12/],
      [
        'huge.npy',
        npyBytes('<f4', [100000, 100000, 1000], f32([1])),
        /huge\.npy: .*needs 40000000000000 bytes of data; the file holds 4\b/,
      ],
      ['fortran.npy', npyBytes('<f4', [2, 4], f32(new Array(8).fill(1)), { fortran: true }), /Fortran order/],
      ['complex.npy', npyBytes('<c8', [2], new Uint8Array(16)), /dtype '<c8'/],
      [
        'header.npy',
        npyBytes('', [], new Uint8Array(0), { headerText: "{'descr': '<f4', 'shape': (2,), }" }),
        /keys descr, shape/,
      ],
      ['int.npy', npyBytes('<i4', [2, 4], new Uint8Array(32)), /OnnxFeedError: .*'x'.*int32/],
      ['shape.npy', npyBytes('<f4', [4, 2], f32(new Array(8).fill(1))), /OnnxFeedError: .*'x'.*\[4, 2\]/],
    ];
    for (const [name, bytes, message] of bad) {
      const p = join(dir, name);
      writeFileSync(p, bytes);
      const r = cli('--onnx-model', tiny, '--backend', 'cpu', '--input', `x=${p}`);
      expect({ name, status: r.status }).toEqual({ name, status: 2 });
      expect(oneErrorLine(r.stderr)).toMatch(message);
    }
  }, 60_000);

  test('bit-flipped models: each runs or is refused with one typed line (exit 0 or 2), never a crash', () => {
    const model = tinyModel();
    const positions = [3, 9, 21, 40, 66, 90, 120, 160, 200, model.length - 5];
    for (const [k, at] of positions.entries()) {
      const path = join(dir, `flip-${k}.onnx`);
      writeFileSync(path, flipped(model, at, k % 8));
      const r = cli('--onnx-model', path, '--backend', 'cpu', '--input', `x=${x}`);
      expect({ at, status: [0, 2].includes(r.status ?? -1) }).toEqual({ at, status: true });
      if (r.status === 2) expect(oneErrorLine(r.stderr)).toContain(path);
    }
  }, 60_000);

  test('usage: --input and --tolerance need --onnx-model; --html, --filter, --onnx-node-tests not with it', () => {
    for (const [args, message] of [
      [['--input', 'x=a.npy'], /--input applies to --onnx-model/],
      [['--tolerance', '1e-3', '--filter', 'add/'], /--tolerance applies to --onnx-model/],
      [['--onnx-model', tiny, '--html', 'r.html'], /--html is not available with --onnx-model/],
      [['--onnx-model', tiny, '--filter', 'exp'], /--filter is not available with --onnx-model/],
      [['--onnx-model', tiny, '--onnx-node-tests', dir], /--onnx-model and --onnx-node-tests are separate runs/],
      [['--onnx-model', tiny, '--tolerance', '0x1'], /--tolerance must be a decimal number/],
      [['--onnx-model', join(root, 'no-such.onnx')], /no-such\.onnx: cannot be read/],
    ] as const) {
      const r = cli(...args);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  });
});

describe('runOnnxModel in code', () => {
  test('model bytes, a given reference (cpu) and a backend whose exp is 0.1% off: named at exp_node', async () => {
    class SloppyExp extends CpuBackend {
      override unary(op: UnaryOp, x: NDArray): NDArray {
        const y = super.unary(op, x);
        if (op === 'exp') {
          const d = this.data(y.buffer) as Float32Array;
          for (let i = 0; i < d.length; i++) d[i]! *= 1.001;
        }
        return y;
      }
    }
    const feeds = {
      x: { dtype: 'float32', dims: [2, 4], data: Float32Array.of(0.5, -1, 0.25, 2, -0.75, 1.5, 1, -0.5) },
    };
    const res = await runOnnxModel(tinyModel(), [{ name: 'sloppy', factory: () => new SloppyExp() }], {
      feeds,
      reference: { name: 'cpu', factory: () => new CpuBackend() },
    });
    expect([res.model, res.reference, res.nodes]).toEqual(['model', 'cpu', 5]);
    const [r] = res.results;
    expect([r!.status, r!.firstFailure?.node, r!.firstFailure?.op, r!.failures]).toEqual([
      'failed',
      'exp_node',
      'Exp',
      2,
    ]);
  });
});

describe('compareOutput: the error of one node output', () => {
  const node = { node: 'n', path: [], op: 'Op' };
  const t = (dtype: string, data: number[], dims = [data.length]) => ({
    dtype,
    type: dtype,
    dims,
    data: dtype === 'int32' ? Int32Array.from(data) : Float32Array.from(data),
  });
  test('relative to the reference scale; NaN meets NaN, an infinity only itself; integers must be equal', () => {
    const c = compareOutput(node, 'y', t('float32', [1, 2.002, -4]), t('float32', [1, 2, -4]), 1e-3);
    expect(c.scale).toBe(4);
    expect(c.error).toBeCloseTo(0.002 / 4, 6);
    expect(c.pass).toBe(true);
    expect(compareOutput(node, 'y', t('float32', [NaN, Infinity]), t('float32', [NaN, Infinity]), 0).pass).toBe(true);
    const inf = compareOutput(node, 'y', t('float32', [1, -Infinity]), t('float32', [1, Infinity]), 1);
    expect([inf.pass, inf.error, inf.at?.index]).toEqual([false, Infinity, 1]);
    const ints = compareOutput(node, 'i', t('int32', [1, 3]), t('int32', [1, 2]), 0.5);
    expect([ints.pass, ints.tolerance, ints.maxAbsError]).toEqual([false, 0, 1]);
    expect(compareOutput(node, 'y', t('float32', [1, 2], [1, 2]), t('float32', [1, 2], [2, 1]), 1).reason).toBe(
      "dims [1, 2], the reference's [2, 1]",
    );
    expect(compareOutput(node, 'y', undefined, t('float32', [0]), 1).reason).toBe('not produced');
  });
});
