/**
 * Fused scaled-dot-product attention on WebGPU (the attentionKernel and attentionBackwardKernel hooks; semantics:
 * hal/src/ops/attention-ops.ts): the forward as ONE dispatch (kernels/attention.ts: a workgroup per leading index
 * and block of 64 query rows, k and v staged in workgroup memory, an online softmax) and the backward as ONE
 * dispatch (kernels/attention-backward.ts: a workgroup per leading index holding its q, k, v, dOut, P and dS).
 * The operands are read, and the forward's result written, through their strides (up to two leading dims: the
 * heads [N, H, L, D] as permuted views of [N, L, H, D] need no copy, and the result written as [N, L, H, dv] in
 * memory merges its heads without one); shapes past the workgroup memory the adapter grants, past d, dv ≤ 64 in the
 * forward, or of more leading dims are declined, and the HAL runs its composite. The kernels go through
 * `batch.dispatch`, so a capture records them as any kernel (their params are constants of the recording).
 */
import type { DeviceBuffer, NDArray } from '@polyhal/hal';
import type { CommandBatch } from './encoder.js';
import { ATTENTION_MAX_WIDTH, ATTENTION_THREADS, ATTENTION_WORDS, attentionWgsl } from './kernels/attention.js';
import { attentionBackwardFloats, attentionBackwardWgsl } from './kernels/attention-backward.js';
import { floatBits, grid } from './layout.js';

/** What the attention dispatches need of the backend. */
export interface AttentionContext {
  readonly batch: CommandBatch;
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
  const [S, d, dv] = [lay.params[1]!, lay.params[2]!, lay.params[3]!];
  const cap = capOf(S * (d + dv));
  if (d > ATTENTION_MAX_WIDTH || dv > ATTENTION_MAX_WIDTH || cap * 4 > maxWorkgroupBytes || lay.B > 65535) return false;
  const buffers = [q, k, v].map((x) => ctx.gpu(x.buffer));
  ctx.batch.dispatch(
    'attention',
    `attention/${cap}`,
    () => attentionWgsl(cap),
    ATTENTION_WORDS,
    lay.params,
    [...buffers, ctx.gpu(out)],
    [Math.ceil(lay.L / ATTENTION_THREADS), lay.B, 1],
    2 * lay.B * lay.L * S * (d + dv),
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
  const [L, S, d, dV] = lay.params.slice(0, 4) as [number, number, number, number];
  const cap = capOf(attentionBackwardFloats(L, S, d, dV));
  if (cap * 4 > maxWorkgroupBytes) return false;
  const buffers = [q, k, v, dOut].map((x) => ctx.gpu(x.buffer));
  ctx.batch.dispatch(
    'attentionBackward',
    `attentionBackward/${cap}`,
    () => attentionBackwardWgsl(cap),
    ATTENTION_WORDS,
    lay.params,
    [...buffers, ctx.gpu(dq), ctx.gpu(dk), ctx.gpu(dv)],
    [...grid(lay.B), 1],
    4 * lay.B * L * S * (d + dV),
  );
  return true;
}
