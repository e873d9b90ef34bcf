/**
 * Fused scaled-dot-product attention on WebGPU (the attentionKernel and attentionBackwardKernel hooks; semantics:
 * hal/src/ops/attention-ops.ts), after FlashAttention-2 (Dao 2023):
 * - the forward as ONE dispatch for any sequence length (kernels/attention.ts: a workgroup per leading index and
 *   block of 64 query rows, k and v staged in workgroup memory in blocks of Bc key rows, as many as fit, an online
 *   softmax carried across the blocks);
 * - the backward as ONE dispatch where q, k, v, dOut, P and dS of a leading index fit in workgroup memory
 *   (kernels/attention-backward.ts), else as three (P recomputed, nothing of [L, S] stored): the statistics m, l, D
 *   of each query row into a float32 scratch [B, L, 3] from the pool (kernels/attention-backward-stats.ts), dk and
 *   dv per key row over blocks of query rows (kernels/attention-backward-kv.ts), dq per query row over blocks of
 *   key rows (kernels/attention-backward-q.ts).
 * The operands are read, and the forward's result written, through their strides (up to two leading dims: the
 * heads [N, H, L, D] as permuted views of [N, L, H, D] need no copy, and the result written as [N, L, H, dv] in
 * memory merges its heads without one). Declined (the HAL runs its composite): more than two leading dims; d or dv
 * past 64 in the forward and the tiled backward (their kernels keep rows of q, dOut and the sums in registers, d
 * and dv constants of each pipeline); blocks past the workgroup memory the adapter grants; grids past 65,535
 * workgroups a dimension. The kernels go through `batch.dispatch`, so a capture records them as any kernel (their
 * params are constants of the recording).
 */
import type { DeviceBuffer, NDArray } from '@polyhal/hal';
import type { CommandBatch } from './encoder.js';
import {
  ATTENTION_MAX_WIDTH,
  ATTENTION_THREADS,
  ATTENTION_WORDS,
  attentionWgsl,
  paddedWidth,
} from './kernels/attention.js';
import { attentionBackwardFloats, attentionBackwardWgsl } from './kernels/attention-backward.js';
import { attentionBackwardKvRowFloats, attentionBackwardKvWgsl } from './kernels/attention-backward-kv.js';
import { attentionBackwardQWgsl } from './kernels/attention-backward-q.js';
import { ATTENTION_STATS, attentionBackwardStatsWgsl } from './kernels/attention-backward-stats.js';
import { floatBits, grid } from './layout.js';
import type { BufferPool } from './pool.js';

/** What the attention dispatches need of the backend. */
export interface AttentionContext {
  readonly batch: CommandBatch;
  /**
   * Whether sequences past one block of workgroup memory run the tiled kernels (option tiledAttention, default
   * false: on an H100 the float32 ViT-S step took 170 ms with them, 147 ms with the composite); else declined.
   */
  readonly tiledAttention?: boolean;
  /** Storage buffers (the tiled backward's statistics scratch comes from it). */
  readonly pool: BufferPool;
  /** The GPU buffer of a HAL buffer. */
  gpu(buffer: DeviceBuffer): GPUBuffer;
}

/** The operands' sizes and the params of their layouts (kernels/attention.ts), or null past two leading dims. */
function layout(ops: NDArray[], v: NDArray, scale: number): { params: number[]; B: number; L: number } | null {
  const q = ops[0]!;
  const r = q.shape.length;
  if (r > 4) return null;
  const lead = q.shape.slice(0, r - 2);
  const [n0, n1] = [lead.length === 2 ? lead[0]! : 1, lead.at(-1) ?? 1];
  const [L, d] = [q.shape[r - 2]!, q.shape[r - 1]!];
  const [S, dv] = [v.shape[r - 2]!, v.shape[r - 1]!];
  const params = [L, S, d, dv, floatBits(scale), n1, n0 * n1, 0];
  for (let o = 0; o < 4; o++) {
    const x = ops[o];
    if (!x) {
      params.push(0, 0, 0, 0, 0);
      continue;
    }
    const s = x.strides;
    const lead0 = lead.length === 2 ? s[0]! : 0;
    const lead1 = lead.length >= 1 ? s[r - 3]! : 0;
    params.push(x.offset, lead0, lead1, s[r - 2]!, s[r - 1]!);
  }
  return { params, B: n0 * n1, L };
}

/** Workgroup memory of a kernel: a power of two of floats from 256, so few pipelines serve many shapes. */
const capOf = (floats: number): number => 2 ** Math.max(8, Math.ceil(Math.log2(Math.max(floats, 1))));

/**
 * Rows of a staged block of `rowFloats` floats each: all `rows` where they fit in the largest power of two of floats
 * within `maxWorkgroupBytes`, else as many as fit (0: not one).
 */
function blockRows(rows: number, rowFloats: number, maxWorkgroupBytes: number): number {
  const most = 2 ** Math.floor(Math.log2(Math.max(maxWorkgroupBytes / 4, 1)));
  return Math.min(rows, Math.floor(most / rowFloats));
}

/** Whether the per-row kernels take the shape: d, dv ≤ 64 and grids of ≤ 65,535 workgroups a dimension. */
function perRow(L: number, S: number, d: number, dv: number, B: number): boolean {
  const g = 65535 * ATTENTION_THREADS;
  return d <= ATTENTION_MAX_WIDTH && dv <= ATTENTION_MAX_WIDTH && B <= 65535 && L <= g && S <= g;
}

/** The forward into `out` at `outStrides` (from element 0); false (nothing encoded) where the shape is declined. */
export function dispatchAttention(
  ctx: AttentionContext,
  maxWorkgroupBytes: number,
  q: NDArray,
  k: NDArray,
  v: NDArray,
  scale: number,
  out: DeviceBuffer,
  outStrides: readonly number[],
): boolean {
  const outView: NDArray = {
    buffer: out,
    dtype: 'float32',
    shape: [...q.shape.slice(0, -1), v.shape.at(-1)!],
    strides: outStrides,
    offset: 0,
  };
  const lay = layout([q, k, v, outView], v, scale);
  if (!lay) return false;
  const [L, S, d, dv] = lay.params.slice(0, 4) as [number, number, number, number];
  const keyFloats = paddedWidth(d) + paddedWidth(dv);
  const Bc = blockRows(S, keyFloats, maxWorkgroupBytes);
  if (!perRow(L, S, d, dv, lay.B) || Bc < 1 || (Bc < S && !ctx.tiledAttention)) return false;
  lay.params[7] = Bc;
  const cap = capOf(Bc * keyFloats);
  const buffers = [q, k, v].map((x) => ctx.gpu(x.buffer));
  ctx.batch.dispatch(
    'attention',
    `attention/${cap}/${d}x${dv}`,
    () => attentionWgsl(cap, d, dv),
    ATTENTION_WORDS,
    lay.params,
    [...buffers, ctx.gpu(out)],
    [Math.ceil(lay.L / ATTENTION_THREADS), lay.B, 1],
    2 * lay.B * lay.L * S * (d + dv),
  );
  return true;
}

/**
 * attentionBackwardPacked: the one-dispatch backward writing dq, dk and dv into `out` [N, L, 3, H, D] (q, k, v the
 * [N, H, L, D] views of a packed qkv); false (nothing encoded) where they do not fit one workgroup's memory — the
 * HAL then runs attentionBackward (the tiled kernels, where enabled) and a stack.
 */
export function dispatchAttentionBackwardPacked(
  ctx: AttentionContext,
  maxWorkgroupBytes: number,
  q: NDArray,
  k: NDArray,
  v: NDArray,
  dOut: NDArray,
  scale: number,
  out: DeviceBuffer,
): boolean {
  const lay = layout([q, k, v, dOut], v, scale);
  if (!lay || q.shape.length !== 4) return false;
  return oneDispatchBackward(ctx, maxWorkgroupBytes, lay, [q, k, v, dOut], [out]);
}

/**
 * The backward as one dispatch (kernels/attention-backward.ts) into `outs` — dq, dk, dv, or one packed output —
 * where a leading index's operands, P and dS fit in `maxWorkgroupBytes`; false (nothing encoded) where they do not.
 */
function oneDispatchBackward(
  ctx: AttentionContext,
  maxWorkgroupBytes: number,
  lay: { params: number[]; B: number },
  ops: NDArray[],
  outs: DeviceBuffer[],
): boolean {
  const [L, S, d, dV] = lay.params.slice(0, 4) as [number, number, number, number];
  const cap = capOf(attentionBackwardFloats(L, S, d, dV));
  if (cap * 4 > maxWorkgroupBytes) return false;
  const packed = outs.length === 1;
  ctx.batch.dispatch(
    'attentionBackward',
    `attentionBackward/${cap}${packed ? '/packed' : ''}`,
    () => attentionBackwardWgsl(cap, packed),
    ATTENTION_WORDS,
    lay.params,
    [...ops.map((x) => ctx.gpu(x.buffer)), ...outs.map((b) => ctx.gpu(b))],
    [...grid(lay.B), 1],
    4 * lay.B * L * S * (d + dV),
  );
  return true;
}

/** The backward into the contiguous dq, dk, dv; false (nothing encoded) where the shape is declined. */
export function dispatchAttentionBackward(
  ctx: AttentionContext,
  maxWorkgroupBytes: number,
  q: NDArray,
  k: NDArray,
  v: NDArray,
  dOut: NDArray,
  scale: number,
  dq: DeviceBuffer,
  dk: DeviceBuffer,
  dv: DeviceBuffer,
): boolean {
  const lay = layout([q, k, v, dOut], v, scale);
  if (!lay) return false;
  if (oneDispatchBackward(ctx, maxWorkgroupBytes, lay, [q, k, v, dOut], [dq, dk, dv])) return true;
  const [L, S, d, dV] = lay.params.slice(0, 4) as [number, number, number, number];
  const buffers = [q, k, v, dOut].map((x) => ctx.gpu(x.buffer));
  // tiled: key blocks of Bc rows (passes 1 and 3), query blocks of Br rows (pass 2)
  if (!ctx.tiledAttention) return false;
  const keyFloats = paddedWidth(d) + paddedWidth(dV);
  const Bc = blockRows(S, keyFloats, maxWorkgroupBytes);
  const Br = blockRows(L, attentionBackwardKvRowFloats(d, dV), maxWorkgroupBytes);
  if (!perRow(L, S, d, dV, lay.B) || Bc < 1 || Br < 1) return false;
  const [capK, capQ] = [capOf(Bc * keyFloats), capOf(Br * attentionBackwardKvRowFloats(d, dV))];
  const withBlock = (rows: number): number[] => lay.params.map((x, w) => (w === 7 ? rows : x));
  const [queryGroups, keyGroups] = [Math.ceil(L / ATTENTION_THREADS), Math.ceil(S / ATTENTION_THREADS)];
  const bytes = lay.B * L * ATTENTION_STATS * 4;
  const stats = ctx.pool.acquire(bytes);
  try {
    const pairs = lay.B * L * S;
    ctx.batch.dispatch(
      'attentionBackward',
      `attentionBackward/stats/${capK}/${d}x${dV}`,
      () => attentionBackwardStatsWgsl(capK, d, dV),
      ATTENTION_WORDS,
      withBlock(Bc),
      [...buffers, stats],
      [queryGroups, lay.B, 1],
      2 * pairs * (d + dV),
    );
    ctx.batch.dispatch(
      'attentionBackward',
      `attentionBackward/kv/${capQ}/${d}x${dV}`,
      () => attentionBackwardKvWgsl(capQ, d, dV),
      ATTENTION_WORDS,
      withBlock(Br),
      [...buffers, stats, ctx.gpu(dk), ctx.gpu(dv)],
      [keyGroups, lay.B, 1],
      4 * pairs * (d + dV),
    );
    ctx.batch.dispatch(
      'attentionBackward',
      `attentionBackward/q/${capK}/${d}x${dV}`,
      () => attentionBackwardQWgsl(capK, d, dV),
      ATTENTION_WORDS,
      withBlock(Bc),
      [...buffers, stats, ctx.gpu(dq)],
      [queryGroups, lay.B, 1],
      2 * pairs * (2 * d + dV),
    );
  } finally {
    // Later commands run after these in queue order, so the scratch may be handed out again at once.
    ctx.pool.release(stats, bytes);
  }
  return true;
}
