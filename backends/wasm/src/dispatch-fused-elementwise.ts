/**
 * fusedElementwiseKernel of the WASM backend: a chain of float32 elementwise steps (hal's ElementwiseStep) in
 * one pass over memory (assembly/fused-elementwise.ts: blocks of 2,048 elements, each step on the block while it
 * is in L1). A strided input is first copied into the output, and the chain then runs there in place. The steps
 * go to the kernel as records in a temporary block of linear memory; an output of as many elements as a separate
 * op splits (elementwiseThreadThreshold) is split by element ranges across the worker pool, two parts per thread.
 */
import { contiguousStrides, type DeviceBuffer, type ElementwiseStep, type NDArray } from '@polyhal/hal';
import { isContiguous } from '@polyhal/hal/internal';
import type { WasmContext } from './context.js';
import { copyInto } from './dispatch-copy.js';
import { BINARY_CODES, UNARY_CODES } from './dispatch-elementwise.js';
import { QUEUE_PARTS } from './threads.js';

/** Bytes of one step record: kind (0 unary, 1 op(value, scalar), 2 op(scalar, value)), op code, scalar bits. */
const RECORD = 12;

/** out = the chain `steps` applied to x (float32, any view; steps checked by the HAL, scalars rounded). */
export function dispatchFusedElementwise(
  ctx: WasmContext,
  x: NDArray,
  steps: readonly ElementwiseStep[],
  out: DeviceBuffer,
): void {
  const n = x.shape.reduce((a, b) => a * b, 1);
  if (n === 0) return;
  let src: number;
  if (isContiguous(x)) src = ctx.ptr(x.buffer) + x.offset * 4;
  else {
    copyInto(ctx, x, out, contiguousStrides(x.shape), 0);
    src = ctx.ptr(out);
  }
  const dst = ctx.ptr(out);
  const bytes = steps.length * RECORD;
  const p = ctx.heap.alloc(bytes);
  try {
    const words = ctx.heap.i32();
    const floats = ctx.heap.f32();
    steps.forEach((s, i) => {
      const w = (p + i * RECORD) >>> 2;
      if (!('scalar' in s)) {
        words[w] = 0;
        words[w + 1] = UNARY_CODES[s.op]!;
      } else {
        words[w] = s.scalarFirst ? 2 : 1;
        words[w + 1] = BINARY_CODES[s.op]!;
        floats[w + 2] = s.scalar;
      }
    });
    const parts = ctx.pool && n >= ctx.elementwiseThreadThreshold ? ctx.pool.size * 2 : 1;
    const call = (a: number[]): void => ctx.k.fusedF32(a[0]!, a[1]!, a[2]!, a[3]!, a[4]!);
    if (parts === 1 || n < 16 * parts) {
      call([n, src, dst, p, steps.length]);
      return;
    }
    // element ranges in multiples of 8 (the kernels' vector width), so that each part's vector lanes line up
    const per = Math.ceil(n / parts / 8) * 8;
    const jobs: number[][] = [];
    for (let i0 = 0; i0 < n; i0 += per) jobs.push([Math.min(per, n - i0), src + i0 * 4, dst + i0 * 4, p, steps.length]);
    for (let w = 0; w < jobs.length; w += QUEUE_PARTS)
      ctx.pool!.runQueued('fusedF32', jobs.slice(w, w + QUEUE_PARTS), call);
  } finally {
    ctx.heap.release(p, bytes);
  }
}
