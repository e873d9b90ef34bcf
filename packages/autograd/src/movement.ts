/**
 * Differentiable movement ops. Forward results are views sharing the input's buffer where the HAL
 * allows (reshape of contiguous data, permute, expand, shrink, stride); gradients move back with the
 * inverse movement (expand ↔ sum, pad ↔ shrink, stride ↔ zero-interleave), as views of the upstream
 * gradient where the inverse is one (the engine hands g's buffer on, backward.ts).
 */
import { InvalidArgumentError, PAD_MODES, type PadMode } from '@polyhal/hal';
import { padMode } from './layout.js';
import { record, unbroadcast } from './ops.js';
import type { Tensor } from './tensor.js';

/** Reshape (one dim may be -1); a view when the strides allow, else a copy. */
export function reshape(x: Tensor, shape: readonly number[]): Tensor {
  return record(
    'reshape',
    [x],
    (be, [v]) => be.reshape(v!, shape),
    (be, g, [v]) => [be.reshape(g, v!.shape)],
  );
}

/** Flattens every dim from `startDim` on: [N, C, H, W] → [N, C·H·W] (PyTorch's flatten(1)). */
export function flatten(x: Tensor, startDim = 1): Tensor {
  const head = x.shape.slice(0, startDim);
  return reshape(x, [...head, x.shape.slice(startDim).reduce((p, d) => p * d, 1)]);
}

/** Reorders dims. Gradient: the inverse permutation. */
export function permute(x: Tensor, perm: readonly number[]): Tensor {
  const inv = new Array<number>(perm.length);
  perm.forEach((p, i) => (inv[p] = i));
  return record(
    'permute',
    [x],
    (be, [v]) => be.permute(v!, perm),
    (be, g) => [be.permute(g, inv)],
  );
}

/** Swaps the last two dims. */
export function transpose(x: Tensor): Tensor {
  const r = x.rank;
  return permute(x, [...Array.from({ length: r - 2 }, (_, i) => i), r - 1, r - 2]);
}

/** Broadcasts to `shape`. Gradient: summed over the broadcast dims. */
export function expand(x: Tensor, shape: readonly number[]): Tensor {
  return record(
    'expand',
    [x],
    (be, [v]) => be.expand(v!, shape),
    (be, g, [v]) => [unbroadcast(be, g, v!.shape)],
  );
}

/**
 * Pads with a constant (mode 'constant', the default), or in mode edge, reflect or wrap (layout.ts's
 * padMode). Gradient of the constant mode: the interior (shrink).
 */
export function pad(
  x: Tensor,
  pads: readonly (readonly [number, number])[],
  value = 0,
  mode: PadMode = 'constant',
): Tensor {
  if (mode !== 'constant' && PAD_MODES.includes(mode)) return padMode(x, pads, mode);
  return record(
    'pad',
    [x],
    (be, [v]) => be.pad(v!, pads, value, mode),
    (be, g, [v]) => [
      be.shrink(
        g,
        v!.shape.map((d, i) => [pads[i]![0], pads[i]![0] + d] as [number, number]),
      ),
    ],
  );
}

/** Keeps [start, end) of each dim. Gradient: zero-padded back to the input's shape. */
export function shrink(x: Tensor, bounds: readonly (readonly [number, number])[]): Tensor {
  return record(
    'shrink',
    [x],
    (be, [v]) => be.shrink(v!, bounds),
    (be, g, [v]) => [
      be.pad(
        g,
        bounds.map(([s, e], i) => [s, v!.shape[i]! - e] as [number, number]),
        0,
      ),
    ],
  );
}

/**
 * Every `steps[i]`-th element of each dim (positive steps). Gradient: g interleaved with zeros —
 * [n] → pad a new axis to [n, s] → reshape [n·s] → shrink to the input's size.
 */
export function stride(x: Tensor, steps: readonly number[]): Tensor {
  if (steps.some((s) => !Number.isInteger(s) || s < 1)) {
    throw new InvalidArgumentError(
      `stride: autograd supports positive integer steps, got [${steps.join(', ')}]; flip with permute/reshape first`,
    );
  }
  return record(
    'stride',
    [x],
    (be, [v]) => be.stride(v!, steps),
    (be, g, [v]) => {
      let cur = be.contiguous(g);
      steps.forEach((s, axis) => {
        if (s === 1) return;
        const n = cur.shape[axis]!;
        const d = v!.shape[axis]!;
        const withAxis = be.reshape(cur, [...cur.shape.slice(0, axis + 1), 1, ...cur.shape.slice(axis + 1)]);
        const padded = be.pad(
          withAxis,
          withAxis.shape.map((_, i) => (i === axis + 1 ? [0, s - 1] : [0, 0]) as [number, number]),
          0,
        );
        const merged = be.reshape(padded, [...cur.shape.slice(0, axis), n * s, ...cur.shape.slice(axis + 1)]);
        const cut = be.contiguous(
          be.shrink(
            merged,
            merged.shape.map((m, i) => (i === axis ? [0, d] : [0, m]) as [number, number]),
          ),
        );
        for (const a of new Set([cur.buffer, withAxis.buffer, padded.buffer, merged.buffer])) be.deallocate(a);
        cur = cut;
      });
      return [cur];
    },
  );
}
