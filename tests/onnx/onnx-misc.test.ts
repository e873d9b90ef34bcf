import { describe, expect, test } from '@jest/globals';
import { Attrs, type NodeContext, ONNX_OPS, type OnnxAttribute } from '@polyhal/conformance';
import type { ComputeBackend, NDArray } from '@polyhal/hal';
import { openBackend, REPO_BACKENDS } from '../support/backends.js';

// The ONNX mappings composed from HAL ops (packages/onnx/src/ops-misc.ts) on the inputs
// ONNX's node tests do not have: NaN and ±Inf, where np.where(x > alpha, x, 0) gives 0 for NaN and a
// product by a 0/1 mask would give NaN; Hardmax's NaN and ties; the coerced-2-D Hardmax of opset < 13;
// exact window values.

type Input = { data: number[]; shape: number[]; dtype?: 'float32' | 'int32'; host?: boolean };
const f = (name: string, value: number): OnnxAttribute => ({ name, type: 1, value });
const i = (name: string, value: number): OnnxAttribute => ({ name, type: 2, value });

async function runOp(
  be: ComputeBackend,
  op: string,
  attributes: OnnxAttribute[],
  inputs: Input[],
  opts: { opset?: number; out?: string } = {},
): Promise<number[]> {
  const ctx: NodeContext = {
    node: { opType: op, domain: '', inputs: inputs.map((_, k) => `x${k}`), outputs: ['y'], attributes },
    opset: opts.opset ?? 17,
    attrs: new Attrs(op, attributes),
    inputTypes: inputs.map((x) => x.dtype ?? 'float32'),
    outputTypes: [opts.out ?? 'float32'],
    inputShapes: inputs.map((x) => x.shape),
    hostInputs: [],
    numbers: (k) => inputs[k]?.data,
  };
  const lowered = ONNX_OPS[op]!.plan(ctx);
  const dev = inputs.map((x) => (x.host ? undefined : be.fromArray(x.data, x.shape, x.dtype ?? 'float32')));
  const [y] = lowered(be, dev as (NDArray | undefined)[]);
  return Array.from(await be.read(y!));
}

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`ONNX composed mappings on ${name}`, () => {
    let be: ComputeBackend | undefined;
    openBackend(name, factory, (b) => (be = b));
    const inf = Infinity;

    test('ThresholdedRelu, Shrink: np.where (NaN gives 0, no infinity leaks from the other branch)', async () => {
      if (!be) return;
      const xs = [NaN, -inf, inf, 1, 1.5, -3, 0.5];
      const tr = await runOp(be, 'ThresholdedRelu', [f('alpha', 1)], [{ data: xs, shape: [7] }]);
      expect(tr.map((v) => v + 0)).toEqual([0, 0, inf, 0, 1.5, 0, 0]);
      const ys = [NaN, -inf, inf, -0.5, -0.75, 0.5, 0.75, 0];
      const sh = await runOp(be, 'Shrink', [f('lambd', 0.5), f('bias', 0.25)], [{ data: ys, shape: [2, 4] }]);
      expect(sh.map((v) => v + 0)).toEqual([0, -inf, inf, 0, -0.5, 0, 0.5, 0]);
    });

    test('Hardmax: the first largest (a NaN the largest); opset < 13 over the input coerced to 2-D', async () => {
      if (!be) return;
      const x = { data: [1, NaN, 3, 2, 2, 1], shape: [2, 3] };
      expect(await runOp(be, 'Hardmax', [], [x])).toEqual([0, 1, 0, 1, 0, 0]);
      const y = { data: [5, 1, 2, 9, 0, 4, 4, 3], shape: [2, 2, 2] };
      expect(await runOp(be, 'Hardmax', [i('axis', 1)], [y])).toEqual([1, 0, 0, 1, 0, 1, 1, 0]);
      // opset 11, axis 1: rows of 4 ([5, 1, 2, 9] → 9; [0, 4, 4, 3] → the first 4)
      expect(await runOp(be, 'Hardmax', [i('axis', 1)], [y], { opset: 11 })).toEqual([0, 0, 0, 1, 0, 1, 0, 0]);
    });

    test('windows, Range and EyeLike: the specification formulas', async () => {
      if (!be) return;
      const size = { data: [5], shape: [], dtype: 'int32' as const, host: true };
      expect(await runOp(be, 'HannWindow', [i('periodic', 0)], [size])).toEqual([0, 0.5, 1, 0.5, 0]);
      const hamming = await runOp(be, 'HammingWindow', [], [size]);
      const want = [0, 1, 2, 3, 4].map((n) => Math.fround(25 / 46 - (21 / 46) * Math.cos((2 * Math.PI * n) / 5)));
      expect(hamming.map((v, k) => Math.abs(v - want[k]!) <= 1.2e-7 * want[k]!)).toEqual(Array(5).fill(true));
      const scalar = (v: number, dtype: 'float32' | 'int32' = 'float32') => ({
        data: [Math.fround(v)],
        shape: [],
        dtype,
        host: true,
      });
      expect(await runOp(be, 'Range', [], [scalar(1), scalar(2), scalar(0.35)])).toEqual(
        [0, 1, 2].map((k) => Math.fround(1 + Math.fround(k * Math.fround(0.35)))),
      );
      const ints = [scalar(10, 'int32'), scalar(-3, 'int32'), scalar(-4, 'int32')];
      expect(await runOp(be, 'Range', [], ints, { out: 'int32' })).toEqual([10, 6, 2, -2]);
      const eye = await runOp(be, 'EyeLike', [i('k', -1)], [{ data: [], shape: [3, 4], host: true }]);
      expect(eye).toEqual([0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0]);
    });
  });
}
