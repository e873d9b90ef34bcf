/**
 * Fused softmax cross-entropy over rows: logits [N, C], labels [N, C] → loss [N] and optionally
 * grad = softmax − labels. One pass per row for the max, one for Σexp (float64), one for the outputs.
 * Label-0 terms follow the xlogy rule of hal/src/ops/index.ts (0 unless the log-probability is NaN).
 */
import type { Strided } from './strided.js';

export function softmaxCrossEntropyKernel(
  z: Strided<Float32Array>,
  y: Strided<Float32Array>,
  loss: Float32Array,
  grad: Float32Array | null,
): void {
  const [N, C] = z.shape as [number, number];
  const [zs0, zs1] = z.strides as [number, number];
  const [ys0, ys1] = y.strides as [number, number];
  const zd = z.data;
  const yd = y.data;
  for (let n = 0; n < N; n++) {
    const zr = z.offset + n * zs0;
    const yr = y.offset + n * ys0;
    let m = -Infinity;
    for (let c = 0; c < C; c++) {
      const v = zd[zr + c * zs1]!;
      if (v > m || v !== v) m = v;
    }
    let s = 0;
    for (let c = 0; c < C; c++) s += Math.exp(zd[zr + c * zs1]! - m);
    const lse = Math.log(s);
    let l = 0;
    for (let c = 0; c < C; c++) {
      const logp = zd[zr + c * zs1]! - m - lse;
      const lab = yd[yr + c * ys1]!;
      if (lab !== 0 || logp !== logp) l -= lab * logp; // xlogy: a label-0 term is 0 unless log p is NaN (ops.ts)
      if (grad) grad[n * C + c] = Math.exp(logp) - lab;
    }
    loss[n] = l;
  }
}
