/**
 * Integer matmul on host memory (the integerMatmulKernel hook of backends whose buffers the host can
 * address: cpu's typed arrays, wasm's linear memory): out [...B, M, N] = a [...B, M, K] · b [...B, K, N]
 * over int32 storage, exact modulo 2^32 (Math.imul products, sums wrapped by the Int32Array stores).
 * Row-by-row (i, k, j) order: one a[i, k] against a row of b, so b and out are read and written along
 * their rows.
 */
import type { HostView } from './host-scan.js';

/**
 * The element offsets of each batch item of a [...B, M, K] · b [...B, K, N] product (batch dims already
 * broadcast to one shape; broadcast dims have stride 0): [offset of a, offset of b] per item, row-major.
 * Shared by the integer matmul kernels that run one batch item at a time.
 */
export function batchOffsets(
  a: { shape: readonly number[]; strides: readonly number[]; offset: number },
  b: { strides: readonly number[]; offset: number },
): [number, number][] {
  const batch = a.shape.slice(0, -2);
  const items = batch.reduce((p, d) => p * d, 1);
  const out: [number, number][] = [];
  for (let item = 0; item < items; item++) {
    let [offA, offB, rest] = [a.offset, b.offset, item];
    for (let d = batch.length - 1; d >= 0; d--) {
      const i = rest % batch[d]!;
      rest = Math.floor(rest / batch[d]!);
      offA += i * a.strides[d]!;
      offB += i * b.strides[d]!;
    }
    out.push([offA, offB]);
  }
  return out;
}

/**
 * out [...B, M, N] (contiguous) = a [...B, M, K] · b [...B, K, N] over int32 storage, wrapping modulo 2^32;
 * the batch dims already broadcast to one shape. Shapes are trusted (the HAL checked them).
 */
export function hostIntMatmul(a: HostView, b: HostView, out: Int32Array): void {
  const r = a.shape.length;
  const [M, K, N] = [a.shape[r - 2]!, a.shape[r - 1]!, b.shape[r - 1]!];
  const [sam, sak, sbk, sbn] = [a.strides[r - 2]!, a.strides[r - 1]!, b.strides[r - 2]!, b.strides[r - 1]!];
  const [A, B] = [a.data, b.data];
  const offsets = batchOffsets(a, b);
  out.fill(0, 0, offsets.length * M * N);
  for (const [item, [offA, offB]] of offsets.entries()) {
    for (let i = 0; i < M; i++) {
      const row = item * M * N + i * N;
      for (let k = 0; k < K; k++) {
        const x = A[offA + i * sam + k * sak]! | 0;
        if (x === 0) continue;
        let pb = offB + k * sbk;
        for (let j = 0; j < N; j++, pb += sbn) out[row + j] = out[row + j]! + Math.imul(x, B[pb]! | 0);
      }
    }
  }
}
