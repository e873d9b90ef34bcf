/**
 * BaseBackend's default `scatterKernel` (hooks.ts, OPTIONAL_HOOKS) for a backend without one, composed
 * from the required hooks and the HAL's own ops, so that scatter, scatterND and scatterElements work on
 * every backend written against REQUIRED_HOOKS:
 * - 'add': scatterAddKernel (the same contract).
 * - 'none': the winner of each position j of the axis — the last k with position(indices[k]) = j — is
 *   the largest of (k + 1)·[position(indices[k]) = j] over k (a K × D int32 hit matrix reduced by max;
 *   0: no update); then a gather from target and updates side by side ([O, D + K, I]) picks, for each
 *   j, target row j or updates row D + winner. A selection, so values come through bit for bit. Work
 *   and temporary memory O(K·D) int32: backends with a kernel (all of this repository's) override it.
 * - 'mul': UnsupportedOpError (the product in index order needs a kernel).
 */
import { UnsupportedOpError } from '../../core/errors.js';
import type { ScatterReduction } from './indexing.js';
import type { DeviceBuffer, NDArray } from '../../core/ndarray.js';
import type { BinaryOp, ReduceOp } from '../../ops/index.js';
import { withTemps } from '../../core/temps.js';

/** What the composite uses of a BaseBackend. */
export interface ScatterCompositeHost {
  readonly name: string;
  free(x: NDArray): void;
  binary(op: BinaryOp, a: NDArray | number, b: NDArray | number): NDArray;
  reduce(op: ReduceOp, x: NDArray, axes?: number | readonly number[], keepdims?: boolean): NDArray;
  concat(xs: readonly NDArray[], axis?: number): NDArray;
  fromArray(data: ArrayLike<number>, shape: readonly number[], dtype?: 'float32' | 'int32'): NDArray;
  gatherKernel(x: NDArray, indices: NDArray, out: DeviceBuffer): void;
  scatterAddKernel(target: NDArray, indices: NDArray, updates: NDArray, out: DeviceBuffer): void;
}

/** The hook's contract on [O, D, I], [K], [O, K, I] operands (hooks.ts), from the required hooks. */
export function scatterKernelComposite(
  be: ScatterCompositeHost,
  target: NDArray,
  indices: NDArray,
  updates: NDArray,
  out: DeviceBuffer,
  reduction: ScatterReduction,
): void {
  if (reduction === 'add') {
    be.scatterAddKernel(target, indices, updates, out);
    return;
  }
  if (reduction !== 'none')
    throw new UnsupportedOpError('scatter', target.dtype, be.name, `reduction '${reduction}' needs a scatterKernel`);
  const [, d] = target.shape as [number, number, number];
  const k = indices.shape[0]!;
  withTemps(be, (t) => {
    const iota = (n: number, shape: number[]): NDArray =>
      t(
        be.fromArray(
          Int32Array.from({ length: n }, (_, i) => i),
          shape,
          'int32',
        ),
      );
    const lt = (a: NDArray | number, b: NDArray | number): NDArray => t(be.binary('cmplt', a, b));
    const op = (o: BinaryOp, a: NDArray | number, b: NDArray | number): NDArray => t(be.binary(o, a, b));
    const idx: NDArray = { ...indices, shape: [k, 1], strides: [indices.strides[0]!, 0] };
    // position(i) = i + D·[i < 0], valid when −D ≤ i < D: [i < D] − [i < −D]
    const pos = op('add', idx, op('mul', lt(idx, 0), d));
    const valid = op('sub', lt(idx, d), lt(idx, -d));
    const cols = iota(d, [1, d]);
    const eq = op('sub', op('sub', 1, lt(pos, cols)), lt(cols, pos));
    const score = op('mul', op('mul', eq, valid), op('add', iota(k, [k, 1]), 1));
    const best = t(be.reduce('max', score, 0)); // [D]: winner + 1, or 0 (INT32_MIN when K = 0)
    const has = lt(0, best);
    const j = iota(d, [d]);
    // sel = j + has·(D + best − 1 − j): row j of the target or row D + winner of the updates
    const sel = op('add', j, op('mul', has, op('sub', op('add', best, d - 1), j)));
    const both = t(be.concat([target, updates], 1));
    be.gatherKernel(both, sel, out);
  });
}
