/**
 * matmul tiles at the shapes of a transformer's linear layers (the ViT-S-like step: 12608 tokens of width 384, MLP
 * 1536): each shape on the backend's own choice ('auto') and on every forced tile with split-K 1, dispatch to
 * result over R queued products, the median of `--trials`; prints ms and TFLOP/s per tile, the best marked.
 *   node webgpu-tile-sweep.mjs [--shapes 12608x384x384,12608x384x1536,12608x1536x384,384x12608x384]
 *     [--tiles auto,large,large16,wide,wide8,tall,tall8,medium,medium8] [--reps 20] [--trials 5] [--json FILE]
 * A shape is MxKxN: [M, K]·[K, N], both operands row-major.
 */
import { writeFileSync } from 'node:fs';
import type { NDArray } from '@polyhal/hal';
import { createWebGpuBackend, type TileName } from '@polyhal/backend-webgpu';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const shapes = arg('shapes', '12608x384x384,12608x384x1536,12608x1536x384,384x12608x384').split(',');
const tiles = arg('tiles', 'auto,large,large16,wide,wide8,tall,tall8,medium,medium8').split(',');
const reps = Number(arg('reps', '20'));
const trials = Number(arg('trials', '5'));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const rows: Record<string, unknown>[] = [];
const backends = await Promise.all(
  tiles.map((t) =>
    createWebGpuBackend(t === 'auto' ? {} : { matmulTile: t as TileName, matmulSplitK: 1, maxPooledBytes: 2 ** 31 }),
  ),
);
console.log(`device: ${backends[0]!.deviceName}`);
for (const shape of shapes) {
  const [M, K, N] = shape.split('x').map(Number) as [number, number, number];
  const flop = 2 * M * K * N;
  const results: { tile: string; ms: number }[] = [];
  for (const [i, be] of backends.entries()) {
    const a = be.fromArray(
      Float32Array.from({ length: M * K }, (_, j) => Math.sin(j)),
      [M, K],
    );
    const b = be.fromArray(
      Float32Array.from({ length: K * N }, (_, j) => Math.cos(j)),
      [K, N],
    );
    const block = async (): Promise<number> => {
      const t0 = performance.now();
      let y: NDArray | null = null;
      for (let r = 0; r < reps; r++) {
        if (y) be.free(y);
        y = be.matmul(a, b);
      }
      await be.read(be.shrink(be.reshape(y!, [M * N]), [[0, 1]]));
      be.free(y!);
      return (performance.now() - t0) / reps;
    };
    await block();
    const times: number[] = [];
    for (let t = 0; t < trials; t++) times.push(await block());
    results.push({ tile: tiles[i]!, ms: median(times) });
    be.free(a);
    be.free(b);
  }
  const best = Math.min(...results.map((r) => r.ms));
  for (const r of results) {
    rows.push({ size: shape, variant: r.tile, ms: r.ms, tflops: flop / r.ms / 1e9 });
    const mark = r.ms === best ? ' *' : '';
    const tflops = (flop / r.ms / 1e9).toFixed(1);
    console.log(`${shape.padEnd(18)} ${r.tile.padEnd(8)} ${r.ms.toFixed(3).padStart(8)} ms ${tflops}${mark}`);
  }
}
const json = arg('json', '');
if (json) writeFileSync(json, `${JSON.stringify({ device: backends[0]!.deviceName, reps, trials, rows }, null, 1)}\n`);
for (const be of backends) be.dispose();
process.exit(0);
