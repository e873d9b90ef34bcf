// Copy kernels over a row plan with strided source and destination: plain copy (same dtype),
// float32 → int32 (truncate toward zero, saturate, NaN → 0) and int32 → float32. And fill.

export const COPY = 0, F32_TO_I32 = 1, I32_TO_F32 = 2;

export function copyRows(mode: i32, n: i32, rows: i32, x: usize, xStarts: usize, xStep: i32, out: usize, oStarts: usize, oStep: i32): void {
  const dx = <usize>(xStep << 2), dO = <usize>(oStep << 2);
  for (let r = 0; r < rows; r++) {
    let px = x + (<usize>load<i32>(xStarts + (<usize>r << 2)) << 2);
    let po = out + (<usize>load<i32>(oStarts + (<usize>r << 2)) << 2);
    if (mode == COPY && xStep == 1 && oStep == 1) {
      memory.copy(po, px, <usize>n << 2);
      continue;
    }
    for (let i = 0; i < n; i++) {
      if (mode == COPY) store<i32>(po, load<i32>(px));
      else if (mode == I32_TO_F32) store<f32>(po, <f32>load<i32>(px));
      else {
        const v = load<f32>(px);
        store<i32>(po, v != v ? 0 : v >= 2147483647.0 ? 2147483647 : v <= -2147483648.0 ? -2147483648 : <i32>v);
      }
      px += dx;
      po += dO;
    }
  }
}

export function fillF32(out: usize, n: i32, value: f32): void {
  const v = f32x4.splat(value);
  let i = 0;
  for (; i + 4 <= n; i += 4) v128.store(out + (<usize>i << 2), v);
  for (; i < n; i++) store<f32>(out + (<usize>i << 2), value);
}

export function fillI32(out: usize, n: i32, value: i32): void {
  for (let i = 0; i < n; i++) store<i32>(out + (<usize>i << 2), value);
}
