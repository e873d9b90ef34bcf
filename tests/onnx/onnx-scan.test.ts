import { describe, expect, test } from '@jest/globals';
import { Attrs, type NodeContext, ONNX_OPS, type OnnxAttribute } from '@polyhal/conformance';
import type { ComputeBackend, NDArray } from '@polyhal/hal';
import { openBackend, REPO_BACKENDS } from '../support/backends.js';

// ONNX CumSum and TopK (packages/onnx/src/ops-scan.ts). ONNX's CumSum node tests are float64,
// which webgpu does not have; these run the same inputs and expected outputs (the examples of the ONNX
// operator specification) in float32 and int32 on every backend, with the axis as an int32 or int64 host
// scalar.

type Input = { data: number[]; shape: number[]; dtype?: 'float32' | 'int32'; host?: boolean };
const i = (name: string, value: number): OnnxAttribute => ({ name, type: 2, value });

async function runOp(
  be: ComputeBackend,
  op: string,
  attributes: OnnxAttribute[],
  inputs: Input[],
  outputs = 1,
): Promise<number[][]> {
  const ctx: NodeContext = {
    node: { opType: op, domain: '', inputs: inputs.map((_, k) => `x${k}`), outputs: ['y', 'z'], attributes },
    opset: 14,
    attrs: new Attrs(op, attributes),
    inputTypes: inputs.map((x) => x.dtype ?? 'float32'),
    outputTypes: ['float32', 'int32'].slice(0, outputs),
    inputShapes: inputs.map((x) => x.shape),
    hostInputs: [],
    numbers: (k) => inputs[k]?.data,
  };
  const lowered = ONNX_OPS[op]!.plan(ctx);
  const dev = inputs.map((x) => (x.host ? undefined : be.fromArray(x.data, x.shape, x.dtype ?? 'float32')));
  const ys = lowered(be, dev as (NDArray | undefined)[]);
  const out = await Promise.all(ys.map(async (y) => Array.from(await be.read(y))));
  for (const y of ys) be.free(y);
  for (const x of dev) if (x) be.free(x);
  return out;
}

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`ONNX CumSum and TopK on ${name}`, () => {
    let be: ComputeBackend | undefined;
    openBackend(name, factory, (b) => (be = b));
    const axis = (a: number): Input => ({ data: [a], shape: [], dtype: 'int32', host: true });

    test('CumSum: the specification examples (1-D exclusive/reverse, 2-D axes 0, 1 and −1)', async () => {
      if (!be) return;
      const x1 = { data: [1, 2, 3, 4, 5], shape: [5] };
      const cases: [OnnxAttribute[], Input, number, number[]][] = [
        [[], x1, 0, [1, 3, 6, 10, 15]],
        [[i('exclusive', 1)], x1, 0, [0, 1, 3, 6, 10]],
        [[i('reverse', 1)], x1, 0, [15, 14, 12, 9, 5]],
        [[i('exclusive', 1), i('reverse', 1)], x1, 0, [14, 12, 9, 5, 0]],
        [[], { data: [1, 2, 3, 4, 5, 6], shape: [2, 3] }, 0, [1, 2, 3, 5, 7, 9]],
        [[], { data: [1, 2, 3, 4, 5, 6], shape: [2, 3] }, 1, [1, 3, 6, 4, 9, 15]],
        [[], { data: [1, 2, 3, 4, 5, 6], shape: [2, 3], dtype: 'int32' }, -1, [1, 3, 6, 4, 9, 15]],
      ];
      for (const [attrs, x, a, want] of cases) {
        const [y] = await runOp(be, 'CumSum', attrs, [x, axis(a)]);
        expect(y).toEqual(want);
      }
    });

    test('TopK: values and int32 indices, ties to the lower index, smallest', async () => {
      if (!be) return;
      const x = { data: [0, 1, 2, 3, 4, 5, 6, 7, 11, 10, 9, 8], shape: [3, 4] };
      const k = (v: number): Input => ({ data: [v], shape: [1], dtype: 'int32', host: true });
      expect(await runOp(be, 'TopK', [i('axis', 1)], [x, k(3)], 2)).toEqual([
        [3, 2, 1, 7, 6, 5, 11, 10, 9],
        [3, 2, 1, 3, 2, 1, 0, 1, 2],
      ]);
      const ties = { data: [2, 5, 5, 1, 5, 2], shape: [6] };
      expect(await runOp(be, 'TopK', [i('largest', 0)], [ties, k(3)], 2)).toEqual([
        [1, 2, 2],
        [3, 0, 5],
      ]);
      expect(await runOp(be, 'TopK', [], [ties, k(2)], 2)).toEqual([
        [5, 5],
        [1, 2],
      ]);
    });
  });
}
