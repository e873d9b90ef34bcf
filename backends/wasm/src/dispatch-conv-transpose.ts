/**
 * convTranspose dispatch of the WASM backend: float32 transposed convolutions over 1 or 2 spatial axes on
 * assembly/conv-transpose.ts, instead of the HAL's composite (the matmul wᵀ · x into a [N, O·K, P] temporary,
 * then col2im: a permutation where stride = kernel, else a pad and an add per tap). The kernel writes each
 * tap's channel sums straight into y: stored where no two taps reach one output (e.g. stride = kernel), else
 * added tap by tap (the composite's order); y is zero-filled first unless the taps cover it. Per batch item and
 * group one call, its parts split across the pool: by input rows where no two input rows reach one output row
 * ((kh − 1)·dh < sh), else by output channels (whole blocks of 4).
 * 1-D transposed convolutions run as 2-D ones of height 1. Operands are checked as the composite checks them
 * (typed errors); 3-D windows, empty shapes and the padding forms the composite rejects (a padding mode, a
 * crop past the full output) return null, and the backend falls back to the composite, which throws.
 */
import { type ConvTransposeOptions, type DeviceBuffer, type NDArray, viewOf } from '@polyhal/hal';
import { convTransposeWindow2d } from '@polyhal/hal/internal';
import type { WasmContext } from './context.js';
import { type ConvBackend, rowMajor } from './dispatch-conv.js';

// assembly/conv-transpose.ts's parameter block (CT_*), in i32 words.
const CT_WORDS = 18;

/**
 * convTranspose(x, w, o) on the wasm kernel: x [N, C, ...in] float32, w [C, O/groups, ...k] float32 →
 * [N, O, (in − 1)·s − before − after + d·(k − 1) + outputPadding + 1]; null where the composite should run.
 */
export function convTransposeOnWasm(
  be: ConvBackend,
  ctx: WasmContext,
  x: NDArray,
  w: NDArray,
  o: ConvTransposeOptions,
): NDArray | null {
  const g = convTransposeWindow2d(be, x, w, o);
  if (!g) return null;
  const { N, C, O, groups, output: out, outputPadding, P, H, W, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl } = g;
  const total = N * O * P;
  if (total * C * kh * kw === 0 || total >= 2 ** 31 || N * C * H * W >= 2 ** 31) return null;
  const Cg = C / groups;
  const Og = O / groups;
  const K = kh * kw;
  const temps: NDArray[] = [];
  const dense = (a: NDArray): NDArray => rowMajor(be, a, temps);
  const wBytes = Cg * Og * K * 4;
  // no two taps reach one output: the kernel reads w in place; else w packed per tap
  const disjoint = (kh - 1) * dh < sh && (kw - 1) * dw < sw;
  const packedBytes = disjoint ? 16 : wBytes * groups;
  // no two input rows reach one output row: the rows split across the pool; else the output channels
  const byRows = (kh - 1) * dh < sh;
  const work = Cg * Og * K * H * W;
  const parts = ctx.pool && work >= ctx.threadThreshold ? Math.min(ctx.pool.size, byRows ? H : Og) : 1;
  // per part, one input row's channels copied (assembly/conv-transpose.ts's packedRow: W rounded up to 8, plus 8
  // where that is a multiple of 256)
  const w8 = Math.ceil(W / 8) * 8;
  const scratchBytes = Cg * (w8 % 256 === 0 ? w8 + 8 : w8) * 4;
  const scratch: number[] = [];
  let [packed, block] = [0, 0]; // (0: not allocated; the heap starts past 0)
  let y: DeviceBuffer | null = null;
  try {
    const xc = dense(x);
    const wc = dense(w);
    y = be.allocate(total, 'float32');
    packed = ctx.heap.alloc(packedBytes);
    block = ctx.heap.alloc(CT_WORDS * 4);
    for (let p = 0; p < parts; p++) scratch.push(ctx.heap.alloc(scratchBytes));
    const [px, pw, py] = [ctx.ptr(xc.buffer) + xc.offset * 4, ctx.ptr(wc.buffer) + wc.offset * 4, ctx.ptr(y)];
    // zeros where no tap lands, unless the taps cover y (stride = kernel, no dilation, no output padding)
    const covered = [0, 1].every((a) => [sh, sw][a] === [kh, kw][a] && ([dh, dw][a] === 1 || [kh, kw][a] === 1));
    if (!covered || outputPadding.some((p) => p > 0)) ctx.k.fillF32(py, total, 0);
    if (!disjoint)
      for (let q = 0; q < groups; q++) ctx.k.convTransposePackW(pw + q * wBytes, Cg, Og, K, packed + q * wBytes);
    const geo = [Cg, Og, H, W, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl];
    for (let n = 0; n < N; n++)
      for (let q = 0; q < groups; q++) {
        const xq = px + (n * C + q * Cg) * H * W * 4;
        const yq = py + (n * O + q * Og) * P * 4;
        const wq = pw + q * wBytes;
        // (pointers ≥ 2^31 keep their bits: ToInt32)
        ctx.heap.i32().set([...geo, xq, disjoint ? 0 : packed + q * wBytes, yq, wq], block >>> 2);
        if (parts === 1) {
          ctx.k.convTranspose(block, 0, Og, 0, H, scratch[0]!);
          continue;
        }
        const span = byRows ? H : Og;
        const each = byRows ? Math.ceil(H / parts) : Math.ceil(Og / parts / 4) * 4; // whole 4-channel blocks
        const jobs: number[][] = [];
        for (let p = 0; p < parts && p * each < span; p++) {
          const [a, b] = [p * each, Math.min(span, (p + 1) * each)];
          jobs.push(byRows ? [block, 0, Og, a, b, scratch[p]!] : [block, a, b, 0, H, scratch[p]!]);
        }
        ctx.pool!.run('convTranspose', jobs, (j) => ctx.k.convTranspose(j[0]!, j[1]!, j[2]!, j[3]!, j[4]!, j[5]!));
      }
  } catch (e) {
    if (y) be.deallocate(y);
    throw e;
  } finally {
    for (const s of scratch) ctx.heap.release(s, scratchBytes);
    if (block) ctx.heap.release(block, CT_WORDS * 4);
    if (packed) ctx.heap.release(packed, packedBytes);
    for (const t of temps) be.free(t);
  }
  return viewOf(y, [N, O, ...out]);
}
