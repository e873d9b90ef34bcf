// Fused training kernels: Adam/AdamW and SGD updates in place (contiguous operands), and softmax
// cross-entropy over rows (contiguous logits and labels [N, C]).

export function adamF32(n: i32, p: usize, g: usize, m: usize, v: usize, lr: f32, b1: f32, b2: f32, eps: f32,
    decay: f32, c1: f32, c2: f32, omb1: f32, omb2: f32): void {
  for (let i = 0; i < n; i++) {
    const o = <usize>i << 2;
    const gv = load<f32>(g + o);
    const mi = b1 * load<f32>(m + o) + omb1 * gv;
    const vi = b2 * load<f32>(v + o) + omb2 * gv * gv;
    store<f32>(m + o, mi);
    store<f32>(v + o, vi);
    store<f32>(p + o, load<f32>(p + o) * decay - (lr * (mi * c1)) / (Mathf.sqrt(vi * c2) + eps));
  }
}

export function sgdF32(n: i32, p: usize, g: usize, vel: usize, lr: f32, momentum: f32, wd: f32): void {
  for (let i = 0; i < n; i++) {
    const o = <usize>i << 2;
    let d = load<f32>(g + o) + wd * load<f32>(p + o);
    if (vel) {
      d = momentum * load<f32>(vel + o) + d;
      store<f32>(vel + o, d);
    }
    store<f32>(p + o, load<f32>(p + o) - lr * d);
  }
}

export function softmaxCrossEntropyF32(N: i32, C: i32, z: usize, y: usize, loss: usize, grad: usize): void {
  for (let n = 0; n < N; n++) {
    const zr = z + (<usize>(n * C) << 2);
    const yr = y + (<usize>(n * C) << 2);
    let m: f32 = -Infinity;
    for (let c = 0; c < C; c++) {
      const v = load<f32>(zr + (<usize>c << 2));
      if (v > m || v != v) m = v;
    }
    let s: f64 = 0;
    for (let c = 0; c < C; c++) s += Math.exp(<f64>(load<f32>(zr + (<usize>c << 2)) - m));
    const lse = Math.log(s);
    let l: f64 = 0;
    for (let c = 0; c < C; c++) {
      const logp = <f64>(load<f32>(zr + (<usize>c << 2)) - m) - lse;
      const lab = <f64>load<f32>(yr + (<usize>c << 2));
      // xlogy: a label-0 term is 0 unless log p is NaN (hal/src/ops/index.ts)
      if (lab != 0 || logp != logp) l -= lab * logp;
      if (grad) store<f32>(grad + (<usize>(n * C + c) << 2), <f32>(Math.exp(logp) - lab));
    }
    store<f32>(loss + (<usize>n << 2), <f32>l);
  }
}
