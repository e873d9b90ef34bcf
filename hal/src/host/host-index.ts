/**
 * Index kernels on host memory, for backends whose buffers the host can address (cpu's typed arrays,
 * wasm's linear memory): they implement the optional hooks oneHotKernel and tuplePositionsKernel
 * (hooks.ts). Operands come through their strides (HostView, host-scan.ts); results are contiguous.
 */
import type { HostView } from './host-scan.js';
import { contiguousStrides, sizeOf } from '../core/shape.js';

/**
 * oneHot: indices [N] (int32) → out [N, depth] (float32, zeroed here): 1 at i (i + depth when negative),
 * a row of zeros for an index outside [−depth, depth).
 */
export function hostOneHot(indices: HostView, depth: number, out: Float32Array): void {
  const d = indices.data;
  const s = indices.strides[0]!;
  const n = indices.shape[0]!;
  out.fill(0);
  for (let r = 0, p = indices.offset; r < n; r++, p += s) {
    const i = d[p]!;
    const j = i < 0 ? i + depth : i;
    if (j >= 0 && j < depth) out[r * depth + j] = 1;
  }
}

/**
 * Flat positions of index tuples: indices [L, q] (int32) into dims Q [q] of `batch` batches → out [L]
 * (int32): (l div (L / batch))·ΠQ + Σ_m c'_m·stride_m with c'_m = c_m (+ Q_m when negative) and row-major
 * strides of Q, or batch·ΠQ (one past the end) when some c_m lies outside [−Q_m, Q_m).
 */
export function hostTuplePositions(indices: HostView, dims: readonly number[], batch: number, out: Int32Array): void {
  const d = indices.data;
  const [L, q] = indices.shape as [number, number];
  const [s0, s1] = indices.strides as [number, number];
  const n = Int32Array.from(dims);
  const strides = Int32Array.from(contiguousStrides(dims));
  const inner = sizeOf(dims);
  const total = batch * inner;
  const per = L / batch;
  let l = 0;
  for (let b = 0, base = 0; b < batch; b++, base += inner) {
    for (let end = l + per, p0 = indices.offset + l * s0; l < end; l++, p0 += s0) {
      let pos = base;
      for (let m = 0, p = p0; m < q; m++, p += s1) {
        const c = d[p]!;
        const nm = n[m]!;
        if (c < -nm || c >= nm) {
          pos = total;
          break;
        }
        pos += (c < 0 ? c + nm : c) * strides[m]!;
      }
      out[l] = pos;
    }
  }
}
