/**
 * Index kernels (gather and scatter) on the three-dim operands the HAL prepares
 * (hal/src/families/indexing/indexing.ts): x and the target [O, D, I], indices [K], updates and gather's
 * output [O, K, I]. An index i of a dim of D reads i + D when negative; outside [0, D) gather writes the
 * fill (GATHER_FILL: NaN, INT32_MIN, 1) and scatter skips the update. scatter applies the updates in index
 * order (k ascending): replace keeps the last, add and mul combine in that order — deterministic.
 */
import type { ScatterReduction } from '@polyhal/hal';
import type { StorageArray } from '@polyhal/hal/internal';
import { copyKernel } from './copy.js';
import type { Strided } from './strided.js';

/** The position along a dim of `dim` that index `i` reads, or −1 when it is out of range. */
const position = (i: number, dim: number): number => {
  const j = i < 0 ? i + dim : i;
  return j >= 0 && j < dim ? j : -1;
};

export function gatherKernel(x: Strided, idx: Strided, out: StorageArray, fill: number): void {
  const [o, dim, n] = x.shape as [number, number, number];
  const [so, sd, si] = x.strides as [number, number, number];
  const k = idx.shape[0]!;
  let w = 0;
  for (let a = 0; a < o; a++) {
    for (let b = 0; b < k; b++) {
      const j = position(idx.data[idx.offset + b * idx.strides[0]!]!, dim);
      if (j < 0) {
        out.fill(fill, w, w + n);
        w += n;
        continue;
      }
      let p = x.offset + a * so + j * sd;
      if (si === 1 && n > 16) {
        out.set(x.data.subarray(p, p + n), w);
        w += n;
      } else for (let c = 0; c < n; c++, p += si) out[w++] = x.data[p]!;
    }
  }
}

/** out = target, then each update combined at its position for k = 0, 1, ... (reduction: replace, add, mul). */
export function scatterKernel(
  target: Strided,
  idx: Strided,
  upd: Strided,
  out: StorageArray,
  reduction: ScatterReduction,
): void {
  const [o, dim, n] = target.shape as [number, number, number];
  const [uo, uk, ui] = upd.strides as [number, number, number];
  const k = idx.shape[0]!;
  copyKernel(target, out);
  // float32 out rounds each result as it is stored; int32 stores wrap modulo 2^32 (imul: exact products).
  const isInt = out instanceof Int32Array;
  for (let b = 0; b < k; b++) {
    const j = position(idx.data[idx.offset + b * idx.strides[0]!]!, dim);
    if (j < 0) continue;
    for (let a = 0; a < o; a++) {
      const base = (a * dim + j) * n;
      let p = upd.offset + a * uo + b * uk;
      if (reduction === 'none' && ui === 1) out.set(upd.data.subarray(p, p + n), base);
      else if (reduction === 'none') for (let c = 0; c < n; c++, p += ui) out[base + c] = upd.data[p]!;
      else if (reduction === 'add') for (let c = 0; c < n; c++, p += ui) out[base + c] = out[base + c]! + upd.data[p]!;
      else if (isInt) for (let c = 0; c < n; c++, p += ui) out[base + c] = Math.imul(out[base + c]!, upd.data[p]!);
      else for (let c = 0; c < n; c++, p += ui) out[base + c] = out[base + c]! * upd.data[p]!;
    }
  }
}
