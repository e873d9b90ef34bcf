/**
 * Philox4x32-10 uniforms on WebGPU (the randomUniformKernel hook; kernels/random.ts): one dispatch, one invocation
 * per block of four. Inside a live section of a capture (capture.ts) whose values give a stream
 * (LiveValues.stream), the kernel's stream is live: each replay reads the stream at its captured position shifted
 * by the section's offset now less its offset at capture (and the seed now), so that a dropout mask or a `rand`
 * drawn from a generator advances per replay as the eager call would.
 */
import type { DeviceBuffer } from '@polyhal/hal';
import { type PhiloxStream, philoxStream } from '@polyhal/hal/internal';
import type { LiveContext } from './capture.js';
import type { CommandBatch } from './encoder.js';
import { flat } from './kernel-params.js';
import { PHILOX_WORDS, philoxWgsl } from './kernels/random.js';

/** What the random dispatch needs of its backend. */
export interface RandomContext {
  readonly batch: CommandBatch;
  readonly gpu: (buffer: DeviceBuffer) => GPUBuffer;
  /** The running capture's live section and patch registration, null without a capture. */
  readonly live: () => LiveContext | null;
}

/** The kernel's params (n, key, block, skip) and grid for `n` uniforms of stream `s`. */
function philoxCall(n: number, s: PhiloxStream): { params: number[]; groups: [number, number, number] } {
  return {
    params: [n, s.key[0], s.key[1], s.block[0], s.block[1], s.skip],
    groups: flat(Math.ceil((n + s.skip) / 4)),
  };
}

/** The stream position of out[0]: 4·block + skip. */
const positionOf = (s: PhiloxStream): number => (s.block[1] * 2 ** 32 + s.block[0]) * 4 + s.skip;

/** Fills `out` with the uniforms of stream `s` (validated by the HAL). */
export function dispatchPhilox(ctx: RandomContext, out: DeviceBuffer, s: PhiloxStream): void {
  const n = out.size;
  const { params, groups } = philoxCall(n, s);
  ctx.batch.dispatch('randomUniform', 'philox', philoxWgsl, PHILOX_WORDS, params, [ctx.gpu(out)], groups);
  const capture = ctx.live();
  const stream = capture?.values?.stream;
  if (!capture || !stream) return;
  const at = stream();
  const position = positionOf(s);
  capture.patch(() => {
    const now = stream();
    return philoxCall(n, philoxStream('randomUniform', now.seed, position + now.offset - at.offset, n));
  });
}
