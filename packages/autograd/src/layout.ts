/**
 * Differentiable layout ops (hal/src/families/layout/layout.ts): concat, stack, split, tile, flip, trilu and pad in the
 * edge, reflect and wrap modes. Gradients: concat and stack cut g back into the inputs' parts; split
 * is shrinks (their gradients pad and add); tile sums g over the repetitions; flip and trilu apply
 * themselves to g; a pad mode adds each box of g back where it was read from (flipped where reflect
 * read backwards, summed where edge repeated one element).
 */
import { type NDArray, normalizeAxis, type PadMode, padBoxes, padRuns } from '@polyhal/hal';
import { shrink } from './movement.js';
import { record } from './ops.js';
import type { Tensor } from './tensor.js';

/** Joins tensors along an existing axis. Gradient: g cut back into the inputs' parts. */
export function concat(xs: readonly Tensor[], axis = 0): Tensor {
  return record(
    'concat',
    [...xs],
    (be, vs) => be.concat(vs, axis),
    (be, g, vs, _out, needs) => {
      const ax = normalizeAxis(axis, g.shape.length);
      let start = 0;
      return vs.map((v, i) => {
        const s = start;
        start += v.shape[ax]!;
        if (!needs[i]) return null;
        return be.contiguous(
          be.shrink(
            g,
            g.shape.map((d, j) => (j === ax ? [s, s + v.shape[ax]!] : [0, d])),
          ),
        );
      });
    },
  );
}

/** Joins tensors of one shape along a new axis. Gradient: g's slices along that axis. */
export function stack(xs: readonly Tensor[], axis = 0): Tensor {
  return record(
    'stack',
    [...xs],
    (be, vs) => be.stack(vs, axis),
    (be, g, vs, _out, needs) => {
      const ax = normalizeAxis(axis, g.shape.length);
      return vs.map((v, i) => {
        if (!needs[i]) return null;
        const part = be.contiguous(
          be.shrink(
            g,
            g.shape.map((d, j) => (j === ax ? [i, i + 1] : [0, d])),
          ),
        );
        return be.reshape(part, v.shape);
      });
    },
  );
}

/** Parts of x along an axis (`sections` equal parts or the given sizes), as shrinks of x. */
export function split(x: Tensor, sizesOrSections: number | readonly number[], axis = 0): Tensor[] {
  // The HAL validates and cuts; each part is then recorded as a shrink of x with the same bounds.
  const parts = x.backend.split(x.value, sizesOrSections, axis);
  const ax = normalizeAxis(axis, x.shape.length);
  let start = 0;
  return parts.map((p) => {
    const s = start;
    start += p.shape[ax]!;
    return shrink(
      x,
      x.shape.map((d, j) => (j === ax ? [s, s + p.shape[ax]!] : [0, d]) as [number, number]),
    );
  });
}

/** x repeated reps[i] times along each dim. Gradient: g summed over the repetitions. */
export function tile(x: Tensor, reps: readonly number[]): Tensor {
  return record(
    'tile',
    [x],
    (be, [v]) => be.tile(v!, reps),
    (be, g, [v]) => {
      const rank = g.shape.length;
      const r = [...new Array<number>(rank - reps.length).fill(1), ...reps];
      const dims = [...new Array<number>(rank - v!.shape.length).fill(1), ...v!.shape];
      const split = be.reshape(
        g,
        dims.flatMap((d, i) => [r[i]!, d]),
      );
      const summed = be.sum(
        split,
        dims.map((_, i) => 2 * i),
      );
      if (split.buffer !== g.buffer) be.free(split);
      return [be.reshape(summed, v!.shape)];
    },
  );
}

/** Reverses the given axes (default all): a view. Gradient: g flipped the same way. */
export function flip(x: Tensor, axes?: number | readonly number[]): Tensor {
  return record(
    'flip',
    [x],
    (be, [v]) => be.flip(v!, axes),
    (be, g) => [be.contiguous(be.flip(g, axes))],
  );
}

/** ONNX Trilu: the upper (j − i ≥ k) or lower (j − i ≤ k) triangle of the last two dims. Gradient: trilu of g. */
export function trilu(x: Tensor, k = 0, upper = true): Tensor {
  return record(
    'trilu',
    [x],
    (be, [v]) => be.trilu(v!, k, upper),
    (be, g) => [be.trilu(g, k, upper)],
  );
}

/**
 * Pad in mode edge, reflect or wrap. Gradient: for each box of runs (hal's padRuns), g's box is
 * flipped along backward runs, summed along repeated (edge) runs, zero-padded to x's shape at the
 * elements it read, and added up.
 */
export function padMode(
  x: Tensor,
  pads: readonly (readonly [number, number])[],
  mode: Exclude<PadMode, 'constant'>,
): Tensor {
  return record(
    'pad',
    [x],
    (be, [v]) => be.pad(v!, pads, 0, mode),
    (be, g, [v]) => {
      const shape = v!.shape;
      const boxes = padBoxes(shape.map((d, i) => padRuns(d, pads[i]![0], pads[i]![1], mode)));
      let acc: NDArray = be.full(shape, 0, g.dtype);
      for (const box of boxes) {
        const temps: NDArray[] = [];
        let piece = be.shrink(
          g,
          box.map((r) => [r.out, r.out + r.len] as [number, number]),
        );
        const back = box.flatMap((r, i) => (r.step === -1 ? [i] : []));
        if (back.length) piece = be.flip(piece, back);
        const repeated = box.flatMap((r, i) => (r.step === 0 ? [i] : []));
        if (repeated.length) {
          piece = be.sum(piece, repeated, true);
          temps.push(piece);
        }
        const padded = be.pad(
          piece,
          box.map((r, i) => {
            const lo = r.step === -1 ? r.src - r.len + 1 : r.src;
            const len = r.step === 0 ? 1 : r.len;
            return [lo, shape[i]! - lo - len] as [number, number];
          }),
        );
        const next = be.add(acc, padded);
        for (const t of [...temps, padded, acc]) be.free(t);
        acc = next;
      }
      return [acc];
    },
  );
}
