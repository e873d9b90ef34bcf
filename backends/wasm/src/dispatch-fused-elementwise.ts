/**
 * fusedElementwiseKernel of the WASM backend: a chain of float32 elementwise steps (hal's ElementwiseStep) in
 * one pass over memory (assembly/fused-elementwise.ts: blocks of 2,048 elements, each step on the block while it
 * is in L1). A strided input is first copied into the output, and the chain then runs there in place. An array
 * operand is read in place when it runs along the chain (contiguous), repeats one element, or repeats one
 * contiguous row (a bias broadcast over rows: its period); any other view is first made contiguous by
 * `materialize`. The steps go to the kernel as records in a temporary block of linear memory; an output of as
 * many elements as a separate op splits (elementwiseThreadThreshold) is split by element ranges across the
 * worker pool, two parts per thread.
 */
import { contiguousStrides, type DeviceBuffer, type ElementwiseStep, type NDArray } from '@polyhal/hal';
import { coalesce, isContiguous } from '@polyhal/hal/internal';
import type { WasmContext } from './context.js';
import { copyInto } from './dispatch-copy.js';
import { BINARY_CODES, UNARY_CODES } from './dispatch-elementwise.js';
import { QUEUE_PARTS } from './threads.js';

/** Bytes of one step record: kind, op code, then the scalar's bits or the array's address and period. */
const RECORD = 16;

/** Makes a view contiguous (a fresh array) and frees it: what an array operand of another layout needs. */
export interface Materializer {
  contiguous(a: NDArray): NDArray;
  free(a: NDArray): void;
}

/**
 * The period of an array operand of the chain's shape: chain element e reads element e % period from its offset
 * (0: always element 0; n: contiguous), or null for a view that is neither (it is made contiguous first).
 */
function period(a: NDArray, n: number): number | null {
  const c = coalesce(a.shape, [a.strides]);
  const s = c.strides[0]!;
  const r = c.shape.length;
  if (s.every((v) => v === 0)) return 0;
  if (r === 1 && s[0] === 1) return n;
  if (r === 2 && s[0] === 0 && s[1] === 1) return c.shape[1]!;
  return null;
}

/** out = the chain `steps` applied to x (float32, any view; steps checked by the HAL, scalars rounded). */
export function dispatchFusedElementwise(
  ctx: WasmContext,
  x: NDArray,
  steps: readonly ElementwiseStep[],
  out: DeviceBuffer,
  materialize?: Materializer,
): void {
  const n = x.shape.reduce((a, b) => a * b, 1);
  if (n === 0) return;
  const temps: NDArray[] = [];
  // array operands: (address, period), made contiguous first where neither runs along the chain nor repeats
  const operands = steps.map((s) => {
    if (!('array' in s)) return null;
    let a = s.array;
    let p = period(a, n);
    if (p === null) {
      if (!materialize) throw new Error('fusedElementwise: a strided array operand needs a materializer');
      a = materialize.contiguous(a);
      temps.push(a);
      p = n;
    }
    return { at: ctx.ptr(a.buffer) + a.offset * 4, period: p };
  });
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
      if ('array' in s) {
        words[w] = s.arrayFirst ? 4 : 3;
        words[w + 1] = BINARY_CODES[s.op]!;
        words[w + 2] = operands[i]!.at | 0;
        words[w + 3] = operands[i]!.period;
      } else if ('scalar' in s) {
        words[w] = s.scalarFirst ? 2 : 1;
        words[w + 1] = BINARY_CODES[s.op]!;
        floats[w + 2] = s.scalar;
      } else {
        words[w] = 0;
        words[w + 1] = UNARY_CODES[s.op]!;
      }
    });
    const parts = ctx.pool && n >= ctx.elementwiseThreadThreshold ? ctx.pool.size * 2 : 1;
    const call = (a: number[]): void => ctx.k.fusedF32(a[0]!, a[1]!, a[2]!, a[3]!, a[4]!, a[5]!);
    if (parts === 1 || n < 16 * parts) {
      call([n, src, dst, p, steps.length, 0]);
      return;
    }
    // element ranges in multiples of 8 (the kernels' vector width), so that each part's vector lanes line up
    const per = Math.ceil(n / parts / 8) * 8;
    const jobs: number[][] = [];
    for (let i0 = 0; i0 < n; i0 += per)
      jobs.push([Math.min(per, n - i0), src + i0 * 4, dst + i0 * 4, p, steps.length, i0]);
    for (let w = 0; w < jobs.length; w += QUEUE_PARTS)
      ctx.pool!.runQueued('fusedF32', jobs.slice(w, w + QUEUE_PARTS), call);
  } finally {
    ctx.heap.release(p, bytes);
    for (const t of temps) materialize!.free(t);
  }
}
