/**
 * One LSTM or GRU step as a single differentiable op: the forward is the HAL's shared cell (hal
 * families/recurrent: `lstmCell`, `gruCell`, the same composite the ONNX LSTM/GRU mappings run) and the
 * gradient its backward (`lstmCellBackward`, `gruCellBackward`), in PyTorch's gate order (LSTM i, f, g, o;
 * GRU r, z, n). The recurrence matmuls stay outside, as ordinary autograd matmuls.
 */
import {
  type ComputeBackend,
  gruCell as halGruCell,
  gruCellBackward,
  lstmCell as halLstmCell,
  lstmCellBackward,
  type NDArray,
} from '@polyhal/hal';
import { reshape, shrink } from './movement.js';
import { record } from './ops.js';
import type { Tensor } from './tensor.js';

/** Row `k` of a [2, B, H] array as [B, H]; `t` receives it when the reshape had to copy. */
function row(be: ComputeBackend, a: NDArray, k: number, t: (x: NDArray) => void): NDArray {
  const [, B, H] = a.shape as [number, number, number];
  const v = be.reshape(
    be.shrink(a, [
      [k, k + 1],
      [0, B],
      [0, H],
    ]),
    [B, H],
  );
  if (v.buffer !== a.buffer) t(v);
  return v;
}

/** Row k of a [2, B, H] tensor as [B, H] (a view). */
const select = (x: Tensor, k: number): Tensor => {
  const [, B, H] = x.shape as [number, number, number];
  return reshape(
    shrink(x, [
      [k, k + 1],
      [0, B],
      [0, H],
    ]),
    [B, H],
  );
};

/**
 * One LSTM step: gates [B, 4H] (x·W_ihᵀ + b_ih + h·W_hhᵀ + b_hh, blocks i, f, g, o) and c [B, H] float32 →
 * [h′, c′], each [B, H]: c′ = σ(f) ⊙ c + σ(i) ⊙ tanh(g), h′ = σ(o) ⊙ tanh(c′). Both results are views of one
 * [2, B, H] op output. ShapeMismatchError when gates is not [B, 4H] for c's [B, H].
 */
export function lstmCell(gates: Tensor, c: Tensor): [Tensor, Tensor] {
  const both = record(
    'lstmCell',
    [gates, c],
    (be, [g, cv]) => {
      const step = halLstmCell(be, g!, cv!);
      try {
        return be.stack([step.h, step.c], 0);
      } finally {
        be.free(step.h);
        be.free(step.c);
      }
    },
    (be, g, [gv, cv], out, needs) => {
      const temps: NDArray[] = [];
      const t = (a: NDArray): void => void temps.push(a);
      try {
        const { dGates, dc } = lstmCellBackward(be, row(be, g, 0, t), row(be, g, 1, t), gv!, cv!, row(be, out, 1, t));
        if (!needs[0]) be.free(dGates);
        if (!needs[1]) be.free(dc);
        return [needs[0] ? dGates : null, needs[1] ? dc : null];
      } finally {
        for (const a of temps) be.free(a);
      }
    },
  );
  return [select(both, 0), select(both, 1)];
}

/**
 * One GRU step: xg [B, 3H] (x·W_ihᵀ + b_ih), hg [B, 3H] (h·W_hhᵀ + b_hh), blocks r, z, n, and h [B, H] float32
 * → h′ [B, H] = (1 − z) ⊙ n + z ⊙ h with r, z = σ(xg + hg) on their blocks, n = tanh(xn + r ⊙ hn) (PyTorch's
 * GRU). ShapeMismatchError when the operands do not fit h's [B, H].
 */
export function gruCell(xg: Tensor, hg: Tensor, h: Tensor): Tensor {
  return record(
    'gruCell',
    [xg, hg, h],
    (be, [x, r, hv]) => halGruCell(be, x!, r!, hv!),
    (be, g, [x, r, hv], _out, needs) => {
      const { dxg, dhg, dh } = gruCellBackward(be, g, x!, r!, hv!);
      const grads = [dxg, dhg, dh];
      return grads.map((d, i) => {
        if (needs[i]) return d;
        be.free(d);
        return null;
      });
    },
  );
}
