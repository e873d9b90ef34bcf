/**
 * cumsum and topk with gradients (PyTorch's torch.cumsum and torch.topk), on the HAL's composites
 * (hal/src/families/scan/scan.ts). cumsum's gradient is the cumsum of g in the other direction (exclusive stays
 * exclusive: y_j = Σ_{i<j} x_i gives dx_i = Σ_{j>i} g_j); topk's values send g back to the positions
 * they came from (scatterAdd into zeros of x), its int32 indices have no gradient. Errors are the HAL's.
 */
import { type ComputeBackend, type CumsumOptions, type NDArray, normalizeAxis, type TopKOptions } from '@polyhal/hal';
import { record } from './ops.js';
import type { Tensor } from './tensor.js';

/** Running sums along `axis` → x.shape (float32 or int32), optionally exclusive and/or from the end. */
export function cumsum(x: Tensor, axis: number, options: CumsumOptions = {}): Tensor {
  return record(
    'cumsum',
    [x],
    (be, [v]) => be.cumsum(v!, axis, options),
    (be, g) => [be.cumsum(g, axis, { exclusive: options.exclusive ?? false, reverse: !(options.reverse ?? false) })],
  );
}

/**
 * g [.., k, ..] added into zeros of `shape` at `indices` (int32, same shape as g) along `axis`: the
 * lines moved last and flattened, each index offset by its line's start, one scatterAdd.
 */
function scatterAlong(be: ComputeBackend, g: NDArray, indices: NDArray, shape: readonly number[], axis: number) {
  const ax = normalizeAxis(axis, shape.length);
  const n = shape[ax]!;
  const k = g.shape[ax]!;
  const perm = [...shape.keys()].filter((i) => i !== ax).concat(ax);
  const lead = perm.slice(0, -1).map((i) => shape[i]!);
  const rows = lead.reduce((p, d) => p * d, 1);
  const temps: NDArray[] = [];
  const t = (a: NDArray): NDArray => {
    temps.push(a);
    return a;
  };
  try {
    const gl = t(be.contiguous(be.permute(g, perm)));
    const il = t(be.contiguous(be.permute(indices, perm)));
    const start = t(
      be.fromArray(
        Int32Array.from({ length: rows }, (_, r) => r * n),
        [...lead, 1],
        'int32',
      ),
    );
    const flat = t(be.add(il, start));
    const zeros = t(be.full([rows * n], 0, g.dtype));
    const summed = t(be.scatterAdd(zeros, be.reshape(flat, [rows * k]), be.reshape(gl, [rows * k]), 0));
    return be.contiguous(
      be.permute(
        be.reshape(summed, [...lead, n]),
        perm.map((_, i) => perm.indexOf(i)),
      ),
    );
  } finally {
    for (const a of temps) be.free(a);
  }
}

/**
 * The k largest (smallest) elements along `axis` and their int32 positions, best first, the lower index
 * first among equal values, NaN above every number (ONNX TopK). Gradient of values: g scattered back.
 */
export function topk(x: Tensor, k: number, axis = -1, options: TopKOptions = {}): { values: Tensor; indices: Tensor } {
  const r = x.backend.topk(x.value, k, axis, options);
  const indices = record('topk', [x], () => r.indices, null);
  const values = record(
    'topk',
    [x, indices],
    () => r.values,
    (be, g, [v, i], _out, needs) => [needs[0] ? scatterAlong(be, g, i!, v!.shape, axis) : null, null],
  );
  return { values, indices };
}
