/**
 * The random fill of the WASM backend: philoxF32 (assembly/random.ts, four Philox blocks per i32x4
 * step) over the whole buffer, split across the thread pool by element ranges from
 * `elementwiseThreadThreshold` elements (each range starts its own block and word of the stream).
 */
import type { DeviceBuffer } from '@polyhal/hal';
import type { PhiloxStream } from '@polyhal/hal/internal';
import type { WasmContext } from './context.js';

/** philoxF32's arguments for out[start, start + len): out pointer, n, key, block (low, high), skip. */
function philoxArgs(ptr: number, s: PhiloxStream, start: number, len: number): number[] {
  const t = s.skip + start;
  const lo = s.block[0] + Math.floor(t / 4); // below 2^53: the carry into the high word is exact
  return [ptr + start * 4, len, s.key[0], s.key[1], lo % 2 ** 32, s.block[1] + Math.floor(lo / 2 ** 32), t % 4];
}

export function dispatchPhilox(ctx: WasmContext, out: DeviceBuffer, s: PhiloxStream): void {
  const n = out.size;
  const ptr = ctx.ptr(out);
  const call = (a: number[]): void => (ctx.k.philoxF32 as (...x: number[]) => void)(...a);
  const parts = ctx.pool && n >= ctx.elementwiseThreadThreshold ? ctx.pool.size : 1;
  if (parts === 1) {
    call(philoxArgs(ptr, s, 0, n));
    return;
  }
  const per = Math.ceil(n / parts / 16) * 16;
  const jobs: number[][] = [];
  for (let i = 0; i < n; i += per) jobs.push(philoxArgs(ptr, s, i, Math.min(per, n - i)));
  ctx.pool!.run('philoxF32', jobs, call);
}
