/**
 * Sequential scan and selection kernels on host memory, for backends whose buffers the host can
 * address (cpu's typed arrays, wasm's linear memory): they implement the optional hooks cumsumKernel
 * and topkKernel (hooks.ts). The operand is x [O, n, I] through its strides (the axis in the middle);
 * results are contiguous [O, n, I] (cumsum) or [O, k, I] (topk).
 */
import type { StorageArray } from '../core/dtype.js';

/** A strided operand in host memory: element (o, j, i) at offset + o·s0 + j·s1 + i·s2. */
export interface HostView {
  /** The backing storage (a typed array of the dtype's storage type, e.g. Int32Array for int32 and bool). */
  data: StorageArray;
  /** The view's shape ([O, n, I] for the scan kernels). */
  shape: readonly number[];
  /** Element strides per dim (0 for a broadcast dim). */
  strides: readonly number[];
  /** Element offset of element (0, 0, ...) in `data`. */
  offset: number;
}

/**
 * Running sums along axis 1, in index order (from the end when `reverse`; the element itself left out
 * when `exclusive`). float32 accumulates in float64 and rounds each output once; int32 wraps.
 */
export function hostCumsum(x: HostView, out: StorageArray, exclusive: boolean, reverse: boolean): void {
  const [O, n, I] = x.shape as [number, number, number];
  const [s0, s1, s2] = x.strides as [number, number, number];
  const isInt = out instanceof Int32Array;
  const d = x.data;
  for (let o = 0; o < O; o++) {
    for (let i = 0; i < I; i++) {
      let acc = 0;
      let p = x.offset + o * s0 + i * s2 + (reverse ? (n - 1) * s1 : 0);
      let w = o * n * I + i + (reverse ? (n - 1) * I : 0);
      const dp = reverse ? -s1 : s1;
      const dw = reverse ? -I : I;
      for (let j = 0; j < n; j++, p += dp, w += dw) {
        if (exclusive) {
          out[w] = acc;
          acc = isInt ? (acc + d[p]!) | 0 : acc + d[p]!;
        } else {
          acc = isInt ? (acc + d[p]!) | 0 : acc + d[p]!;
          out[w] = acc;
        }
      }
    }
  }
}

/** Position order of the best k: NaN above every number (both modes), the lower position among equals. */
function better(a: number, ia: number, b: number, ib: number, largest: boolean): boolean {
  const na = a !== a;
  const nb = b !== b;
  if (na || nb) return na && nb ? ia < ib : largest ? na : nb;
  if (a !== b) return largest ? a > b : a < b;
  return ia < ib;
}

/**
 * The k best elements along axis 1 and their positions, best first (topk's rule: hal/src/ops/scan-ops.ts):
 * a sorted buffer of k candidates for small k (each element compared with the worst kept first), a full
 * sort of the positions otherwise.
 */
export function hostTopk(x: HostView, k: number, largest: boolean, values: StorageArray, indices: Int32Array): void {
  const [O, n, I] = x.shape as [number, number, number];
  const [s0, s1, s2] = x.strides as [number, number, number];
  const d = x.data;
  const pos = new Int32Array(k <= 64 ? k : n);
  const val = new Float64Array(pos.length);
  for (let o = 0; o < O; o++) {
    for (let i = 0; i < I; i++) {
      const base = x.offset + o * s0 + i * s2;
      let kept = 0;
      if (k <= 64) {
        for (let j = 0; j < n; j++) {
          const v = d[base + j * s1]!;
          if (kept === k && !better(v, j, val[k - 1]!, pos[k - 1]!, largest)) continue;
          let q = kept < k ? kept++ : k - 1;
          for (; q > 0 && better(v, j, val[q - 1]!, pos[q - 1]!, largest); q--) {
            val[q] = val[q - 1]!;
            pos[q] = pos[q - 1]!;
          }
          val[q] = v;
          pos[q] = j;
        }
      } else {
        for (let j = 0; j < n; j++) pos[j] = j;
        const order = Array.from(pos);
        order.sort((a, b) => {
          const va = d[base + a * s1]!;
          const vb = d[base + b * s1]!;
          return better(va, a, vb, b, largest) ? -1 : better(vb, b, va, a, largest) ? 1 : 0;
        });
        for (let j = 0; j < k; j++) {
          pos[j] = order[j]!;
          val[j] = d[base + order[j]! * s1]!;
        }
      }
      for (let j = 0; j < k; j++) {
        const w = o * k * I + j * I + i;
        values[w] = d[base + pos[j]! * s1]!;
        indices[w] = pos[j]!;
      }
    }
  }
}

/**
 * argmax of one row: the position of the largest value (the last of equals with `last`), or −1 − j where
 * a NaN at j comes first (one loop per rule: this is the hot loop of argmax on host memory). One compare
 * per element: !(v <= best) holds for a larger v and for NaN, which is told apart only then; the loop
 * steps one pointer (p, to end), and positions are recovered from it once per hit.
 */
function rowMax(d: StorageArray, base: number, s1: number, n: number, last: boolean): number {
  const best0 = d[base]!;
  if (best0 !== best0) return -1;
  if (s1 === 0) return last ? n - 1 : 0; // a broadcast row: n equal values
  let best = best0;
  let atP = base;
  const end = base + n * s1;
  if (last)
    for (let p = base + s1; p !== end; p += s1) {
      const v = d[p]!;
      if (!(v < best)) {
        if (v !== v) return -1 - (p - base) / s1;
        best = v;
        atP = p;
      }
    }
  else
    for (let p = base + s1; p !== end; p += s1) {
      const v = d[p]!;
      if (!(v <= best)) {
        if (v !== v) return -1 - (p - base) / s1;
        best = v;
        atP = p;
      }
    }
  return (atP - base) / s1;
}

/** rowMax's argmin. */
function rowMin(d: StorageArray, base: number, s1: number, n: number, last: boolean): number {
  const best0 = d[base]!;
  if (best0 !== best0) return -1;
  if (s1 === 0) return last ? n - 1 : 0;
  let best = best0;
  let atP = base;
  const end = base + n * s1;
  if (last)
    for (let p = base + s1; p !== end; p += s1) {
      const v = d[p]!;
      if (!(v > best)) {
        if (v !== v) return -1 - (p - base) / s1;
        best = v;
        atP = p;
      }
    }
  else
    for (let p = base + s1; p !== end; p += s1) {
      const v = d[p]!;
      if (!(v >= best)) {
        if (v !== v) return -1 - (p - base) / s1;
        best = v;
        atP = p;
      }
    }
  return (atP - base) / s1;
}

/**
 * The position of the largest (argmax) or smallest (argmin) element along axis 1 into out [O, I], one
 * sequential pass per row: the first among equals (the last with `lastIndex`), a NaN the extreme in both
 * modes (NumPy), the first NaN (the last with `lastIndex`). Rows are not empty (n ≥ 1).
 */
export function hostArgReduce(x: HostView, op: 'argmax' | 'argmin', lastIndex: boolean, out: Int32Array): void {
  const [O, n, I] = x.shape as [number, number, number];
  const [s0, s1, s2] = x.strides as [number, number, number];
  const d = x.data;
  const row = op === 'argmax' ? rowMax : rowMin;
  for (let o = 0; o < O; o++) {
    for (let i = 0; i < I; i++) {
      const base = x.offset + o * s0 + i * s2;
      let at = row(d, base, s1, n, lastIndex);
      const nan = at < 0 ? -1 - at : -1;
      if (nan >= 0) at = nan;
      // From the first NaN on, only a later NaN moves the position (lastIndex).
      if (nan >= 0 && lastIndex)
        for (let j = nan + 1, p = base + j * s1; j < n; j++, p += s1) if (d[p] !== d[p]) at = j;
      out[o * I + i] = at;
    }
  }
}
