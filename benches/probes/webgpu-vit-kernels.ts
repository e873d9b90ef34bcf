/**
 * GPU time of the ViT-S-like step's slowest calls (`webgpu-vit-profile.ts` finds them), each alone at its step
 * shape: R calls queued, then one read; milliseconds per call (dispatch to result / R), the median of `--trials`.
 * Tokens 64×197 = 12608 rows of width 384 (MLP 1536); attention scores [64, 6, 197, 197].
 *   node webgpu-vit-kernels.mjs [--reps 20] [--trials 5] [--only name,name] [--json FILE] [--dawn-flags F]
 * Rows: layerNormBackward with parameter gradients; sum over the token axes ([64,197,384] → [384]); the weight
 * gradients x̂ᵀ·g ([384,12608]·[12608,N], operands as the transposed views autograd passes); the products of the
 * forward ([64,197,384]·[384,N]); an add with a head-permuted operand; softmax's broadcast sub; a same-shape mul.
 */
import { writeFileSync } from 'node:fs';
import type { NDArray } from '@polyhal/hal';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const reps = Number(arg('reps', '20'));
const trials = Number(arg('trials', '5'));
const only = arg('only', '').split(',').filter(Boolean);
const flags = arg('dawn-flags', '');
const be = await createWebGpuBackend({
  dawnFlags: flags ? [flags] : [],
  maxPooledBytes: 2 ** 32,
  memoryLimit: 2 ** 34,
});
console.log(`device: ${be.deviceName}`);
let seed = 1;
const rand = (shape: number[]): NDArray => {
  const n = shape.reduce((a, b) => a * b, 1);
  const h = new Float32Array(n);
  for (let i = 0; i < n; i++) h[i] = (((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) / 2 ** 24) * 2 - 1;
  return be.fromArray(h, shape);
};
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const T = 12608;
const x2 = rand([T, 384]);
const g2 = rand([T, 384]);
const mean = rand([T, 1]);
const rstd = rand([T, 1]);
const w = rand([384]);
const h1536 = rand([T, 1536]);
const w384 = rand([384, 384]);
const w1536 = rand([384, 1536]);
const heads = rand([64, 6, 197, 64]);
const scores = rand([64, 6, 197, 197]);
const scores2 = rand([64, 6, 197, 197]);
const rowMax = rand([64, 6, 197, 1]);
const x3 = be.reshape(x2, [64, 197, 384]);
const half = (x: NDArray): NDArray => be.cast(x, 'float16');
const [x2h, g2h, w384h, w1536h, h1536h, headsh, scoresh] = [x2, g2, w384, w1536, h1536, heads, scores].map(half);
const x3h = be.reshape(x2h!, [64, 197, 384]);
/** Each case returns the arrays one call makes (freed before the next call). */
const cases: Record<string, { flop?: number; bytes?: number; run: () => NDArray[] }> = {
  layerNormBackward: {
    bytes: 4 * T * 384 * 3,
    run: () => {
      const r = be.layerNormBackward(g2, x2, mean, rstd, w, { paramGrads: true });
      return [r.dx, r.dweight!, r.dbias!];
    },
  },
  'sum [64,197,384] axes 0,1': { bytes: 4 * T * 384, run: () => [be.sum(x3, [0, 1])] },
  'matmul dW [384,12608]·[12608,384]': {
    flop: 2 * 384 * 384 * T,
    run: () => [be.matmul(be.permute(x2, [1, 0]), g2)],
  },
  'matmul dW [1536,12608]·[12608,384]': {
    flop: 2 * 1536 * 384 * T,
    run: () => [be.matmul(be.permute(h1536, [1, 0]), g2)],
  },
  'matmul dW [384,12608]·[12608,1536]': {
    flop: 2 * 1536 * 384 * T,
    run: () => [be.matmul(be.permute(x2, [1, 0]), h1536)],
  },
  'matmul dW, A made contiguous first': {
    flop: 2 * 384 * 384 * T,
    run: () => {
      const at = be.contiguous(be.permute(x2, [1, 0]));
      const r = be.matmul(at, g2);
      be.free(at);
      return [r];
    },
  },
  'matmul [12608,384]·[384,384] (2-D)': { flop: 2 * 384 * 384 * T, run: () => [be.matmul(x2, w384)] },
  'matmul [64,197,384]·[384,384]': { flop: 2 * 384 * 384 * T, run: () => [be.matmul(x3, w384)] },
  'matmul [64,197,384]·[384,1536]': { flop: 2 * 1536 * 384 * T, run: () => [be.matmul(x3, w1536)] },
  'matmul attention q·kᵀ [64,6,197,64]·[64,6,64,197]': {
    flop: 2 * 384 * 197 * 197 * 64,
    run: () => [be.matmul(heads, be.permute(heads, [0, 1, 3, 2]))],
  },
  'matmul attention p·v [64,6,197,197]·[64,6,197,64]': {
    flop: 2 * 384 * 197 * 197 * 64,
    run: () => [be.matmul(scores, heads)],
  },
  'matmul attention pᵀ·g [64,6,197,197]ᵀ·[64,6,197,64]': {
    flop: 2 * 384 * 197 * 197 * 64,
    run: () => [be.matmul(be.permute(scores, [0, 1, 3, 2]), heads)],
  },
  'matmul g·Wᵀ [12608,384]·[384,384]ᵀ': {
    flop: 2 * 384 * 384 * T,
    run: () => [be.matmul(g2, be.permute(w384, [1, 0]))],
  },
  'f16 matmul [64,197,384]·[384,384]': { flop: 2 * 384 * 384 * T, run: () => [be.matmul(x3h, w384h!)] },
  'f16 matmul [12608,384]·[384,384] (2-D)': { flop: 2 * 384 * 384 * T, run: () => [be.matmul(x2h!, w384h!)] },
  'f16 matmul [12608,384]·[384,1536] (2-D)': { flop: 2 * 1536 * 384 * T, run: () => [be.matmul(x2h!, w1536h!)] },
  'f16 matmul dW [384,12608]·[12608,384]': {
    flop: 2 * 384 * 384 * T,
    run: () => [be.matmul(be.permute(x2h!, [1, 0]), g2h!)],
  },
  'f16 matmul dW [1536,12608]·[12608,384]': {
    flop: 2 * 1536 * 384 * T,
    run: () => [be.matmul(be.permute(h1536h!, [1, 0]), g2h!)],
  },
  'f16 matmul g·Wᵀ [12608,384]·[384,384]ᵀ': {
    flop: 2 * 384 * 384 * T,
    run: () => [be.matmul(g2h!, be.permute(w384h!, [1, 0]))],
  },
  'f16 matmul attention q·kᵀ': {
    flop: 2 * 384 * 197 * 197 * 64,
    run: () => [be.matmul(headsh!, be.permute(headsh!, [0, 1, 3, 2]))],
  },
  'f16 matmul attention p·v': { flop: 2 * 384 * 197 * 197 * 64, run: () => [be.matmul(scoresh!, headsh!)] },
  'cast [12608,384] f32→f16': { bytes: 6 * T * 384, run: () => [be.cast(x2, 'float16')] },
  'cast [12608,384] f16→f32': { bytes: 6 * T * 384, run: () => [be.cast(x2h!, 'float32')] },
  'add [64,197,384] + heads permuted': {
    bytes: 12 * T * 384,
    run: () => {
      const merged = be.reshape(be.permute(heads, [0, 2, 1, 3]), [64, 197, 384]); // a copy: freed with the sum
      return [be.add(x3, merged), merged];
    },
  },
  'contiguous of heads permuted': {
    bytes: 8 * T * 384,
    run: () => [be.contiguous(be.permute(heads, [0, 2, 1, 3]))],
  },
  'add [64,197,384] same layout': { bytes: 12 * T * 384, run: () => [be.add(x3, be.reshape(g2, [64, 197, 384]))] },
  'sub [64,6,197,197] - [64,6,197,1]': { bytes: 8 * 64 * 6 * 197 * 197, run: () => [be.sub(scores, rowMax)] },
  'mul [64,6,197,197] same shape': { bytes: 12 * 64 * 6 * 197 * 197, run: () => [be.mul(scores, scores2)] },
  'softmax [64,6,197,197]': { bytes: 8 * 64 * 6 * 197 * 197, run: () => [be.softmax(scores)] },
};
const rows: Record<string, unknown>[] = [];
for (const [name, c] of Object.entries(cases)) {
  if (only.length && !only.some((o) => name.startsWith(o))) continue;
  const block = async (): Promise<number> => {
    const t0 = performance.now();
    for (let r = 0; r < reps; r++) {
      const out = c.run();
      if (r < reps - 1) for (const o of out) be.free(o);
      else {
        await be.read(be.shrink(be.reshape(out[0]!, [out[0]!.shape.reduce((a, b) => a * b, 1)]), [[0, 1]]));
        for (const o of out) be.free(o);
      }
    }
    return (performance.now() - t0) / reps;
  };
  await block();
  const times: number[] = [];
  for (let t = 0; t < trials; t++) times.push(await block());
  const ms = median(times);
  const row = {
    case: name,
    ms,
    ...(c.flop ? { tflops: c.flop / ms / 1e9 } : {}),
    ...(c.bytes ? { gbps: c.bytes / ms / 1e6 } : {}),
  };
  rows.push(row);
  console.log(
    `${name.padEnd(40)} ${ms.toFixed(3).padStart(8)} ms` +
      (c.flop ? `  ${(c.flop / ms / 1e9).toFixed(1)} TFLOP/s` : '') +
      (c.bytes ? `  ${(c.bytes / ms / 1e6).toFixed(0)} GB/s` : ''),
  );
}
const json = arg('json', '');
if (json) writeFileSync(json, `${JSON.stringify({ device: be.deviceName, reps, trials, rows }, null, 1)}\n`);
be.dispose();
process.exit(0);
