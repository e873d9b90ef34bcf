/**
 * Batched GEMM on float32: C[b] = A[b] · B[b] for strided A [.., M, K] and B [.., K, N] (transposed
 * operands are just other strides). Goto/van de Geijn structure: K is cut into KC-deep blocks, B is
 * packed into 4-column panels and A into 4-row panels (packing absorbs any strides, so transposes
 * cost nothing extra), and a 4×4 register-blocked micro-kernel with 16 scalar float64 accumulators
 * runs over panel pairs that stay in L1.
 */
import { planMatmulBatch } from '@polyhal/hal/internal';
import type { Strided } from './strided.js';

const KC = 256;
const MC = 64;
const packA = new Float64Array(MC * KC);
let packB = new Float64Array(0);

export function matmulKernel(a: Strided<Float32Array>, b: Strided<Float32Array>, out: Float32Array): void {
  const r = a.shape.length;
  const M = a.shape[r - 2]!;
  const K = a.shape[r - 1]!;
  const N = b.shape[r - 1]!;
  if (M === 0 || N === 0) return;
  const batch = planMatmulBatch(a, b);
  let t = 0;
  for (let row = 0; row < batch.rows; row++) {
    for (let i = 0; i < batch.n; i++, t++) {
      const aOff = batch.starts[0]![row]! + i * batch.step[0]!;
      const bOff = batch.starts[1]![row]! + i * batch.step[1]!;
      gemm(
        M,
        N,
        K,
        a.data,
        aOff,
        a.strides[r - 2]!,
        a.strides[r - 1]!,
        b.data,
        bOff,
        b.strides[r - 2]!,
        b.strides[r - 1]!,
        out,
        t * M * N,
      );
    }
  }
}

function gemm(
  M: number,
  N: number,
  K: number,
  A: Float32Array,
  aOff: number,
  sam: number,
  sak: number,
  B: Float32Array,
  bOff: number,
  sbk: number,
  sbn: number,
  C: Float32Array,
  cOff: number,
): void {
  C.fill(0, cOff, cOff + M * N);
  const NP = (N + 3) >> 2;
  if (packB.length < NP * 4 * KC) packB = new Float64Array(NP * 4 * KC);
  for (let k0 = 0; k0 < K; k0 += KC) {
    const kc = Math.min(KC, K - k0);
    // Pack B[k0:k0+kc, :] into panels of 4 columns: panel jp holds kc rows of 4 contiguous values.
    for (let jp = 0; jp < NP; jp++) {
      let p = jp * kc * 4;
      for (let k = 0; k < kc; k++) {
        const src = bOff + (k0 + k) * sbk;
        for (let jj = 0; jj < 4; jj++, p++) {
          const j = jp * 4 + jj;
          packB[p] = j < N ? B[src + j * sbn]! : 0;
        }
      }
    }
    for (let i0 = 0; i0 < M; i0 += MC) {
      const mc = Math.min(MC, M - i0);
      const MP = (mc + 3) >> 2;
      // Pack A[i0:i0+mc, k0:k0+kc] into panels of 4 rows: panel ip holds kc columns of 4 values.
      for (let ip = 0; ip < MP; ip++) {
        let p = ip * kc * 4;
        for (let k = 0; k < kc; k++) {
          const src = aOff + (k0 + k) * sak;
          for (let ii = 0; ii < 4; ii++, p++) {
            const i = i0 + ip * 4 + ii;
            packA[p] = i < M ? A[src + i * sam]! : 0;
          }
        }
      }
      for (let jp = 0; jp < NP; jp++) {
        const cols = Math.min(4, N - jp * 4);
        for (let ip = 0; ip < MP; ip++) {
          const rows = Math.min(4, mc - ip * 4);
          micro4x4(kc, packA, ip * kc * 4, packB, jp * kc * 4, C, cOff + (i0 + ip * 4) * N + jp * 4, N, rows, cols);
        }
      }
    }
  }
}

/** C[0:rows, 0:cols] += Ap(4×kc) · Bp(kc×4), row stride ldc. */
function micro4x4(
  kc: number,
  ap: Float64Array,
  pa: number,
  bp: Float64Array,
  pb: number,
  C: Float32Array,
  c: number,
  ldc: number,
  rows: number,
  cols: number,
): void {
  let c00 = 0,
    c01 = 0,
    c02 = 0,
    c03 = 0;
  let c10 = 0,
    c11 = 0,
    c12 = 0,
    c13 = 0;
  let c20 = 0,
    c21 = 0,
    c22 = 0,
    c23 = 0;
  let c30 = 0,
    c31 = 0,
    c32 = 0,
    c33 = 0;
  for (let k = 0; k < kc; k++, pa += 4, pb += 4) {
    const b0 = bp[pb]!,
      b1 = bp[pb + 1]!,
      b2 = bp[pb + 2]!,
      b3 = bp[pb + 3]!;
    const a0 = ap[pa]!;
    c00 += a0 * b0;
    c01 += a0 * b1;
    c02 += a0 * b2;
    c03 += a0 * b3;
    const a1 = ap[pa + 1]!;
    c10 += a1 * b0;
    c11 += a1 * b1;
    c12 += a1 * b2;
    c13 += a1 * b3;
    const a2 = ap[pa + 2]!;
    c20 += a2 * b0;
    c21 += a2 * b1;
    c22 += a2 * b2;
    c23 += a2 * b3;
    const a3 = ap[pa + 3]!;
    c30 += a3 * b0;
    c31 += a3 * b1;
    c32 += a3 * b2;
    c33 += a3 * b3;
  }
  if (rows === 4 && cols === 4) {
    C[c] += c00;
    C[c + 1] += c01;
    C[c + 2] += c02;
    C[c + 3] += c03;
    c += ldc;
    C[c] += c10;
    C[c + 1] += c11;
    C[c + 2] += c12;
    C[c + 3] += c13;
    c += ldc;
    C[c] += c20;
    C[c + 1] += c21;
    C[c + 2] += c22;
    C[c + 3] += c23;
    c += ldc;
    C[c] += c30;
    C[c + 1] += c31;
    C[c + 2] += c32;
    C[c + 3] += c33;
    return;
  }
  const acc = [c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33];
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) C[c + i * ldc + j]! += acc[i * 4 + j]!;
}
