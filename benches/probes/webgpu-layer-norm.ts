/**
 * layerNorm's forward and backward (dx with the parameter gradients) with a workgroup per row, their row sums as a
 * tree in workgroup memory ('workgroup') or through subgroup operations ('subgroup': kernels/workgroup-sum.ts), two
 * backends on one GPU in one process, in turn, at ViT-S's [12608, 384] and the main job's ViT [1088, 64]. ms from
 * the first of `reps` queued calls to a synchronize, median of `--trials`; the results of the two compared (max
 * abs difference).
 *   node webgpu-layer-norm.mjs [--trials 9] [--json FILE]
 */
import { writeFileSync } from 'node:fs';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';
import { type ComputeBackend, mulberry32 } from '@polyhal/hal';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const trials = Number(arg('trials', '9'));
const KERNELS = ['workgroup', 'subgroup'] as const;
const backends: ComputeBackend[] = [];
for (const layerNormKernel of KERNELS) backends.push(await createWebGpuBackend({ layerNormKernel }));
const rows: Record<string, unknown>[] = [];
const emit = (row: Record<string, unknown>): void => {
  rows.push(row);
  console.log(JSON.stringify(row));
};
emit({ event: 'device', deviceName: backends[0]!.deviceName });
const values = (n: number, seed: number): Float32Array => {
  const rand = mulberry32(seed);
  return Float32Array.from({ length: n }, () => 4 * rand() - 2);
};
const med = (xs: number[]): number => [...xs].sort((x, y) => x - y)[xs.length >> 1]!;
for (const [R, D] of [
  [12608, 384],
  [1088, 64],
] as const) {
  const sets = backends.map((be) => {
    const x = be.fromArray(values(R * D, 1), [R, D]);
    const g = be.fromArray(values(R * D, 2), [R, D]);
    const w = be.fromArray(values(D, 3), [D]);
    const b = be.fromArray(values(D, 4), [D]);
    const { y, mean, rstd } = be.layerNorm(x, w, b);
    return { be, x, g, w, b, y, mean, rstd };
  });
  const forward = (s: (typeof sets)[number]): void => {
    const r = s.be.layerNorm(s.x, s.w, s.b);
    for (const a of [r.y, r.mean, r.rstd]) s.be.free(a);
  };
  const backward = (s: (typeof sets)[number]): void => {
    const r = s.be.layerNormBackward(s.g, s.x, s.mean, s.rstd, s.w, { paramGrads: true });
    for (const a of [r.dx, r.dweight!, r.dbias!]) s.be.free(a);
  };
  // agreement: forward y and backward dx of the two
  const dxs = await Promise.all(
    sets.map(async (s) => {
      const r = s.be.layerNormBackward(s.g, s.x, s.mean, s.rstd, s.w, { paramGrads: true });
      return (await s.be.read(r.dx)) as Float32Array;
    }),
  );
  const ys = await Promise.all(sets.map(async (s) => (await s.be.read(s.y)) as Float32Array));
  const maxDiff = (a: Float32Array, b: Float32Array): number =>
    a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i]!)), 0);
  const reps = R > 5000 ? 50 : 200;
  for (const [what, fn] of [
    ['forward', forward],
    ['backward', backward],
  ] as const) {
    const time = async (s: (typeof sets)[number]): Promise<number> => {
      const t0 = performance.now();
      for (let i = 0; i < reps; i++) fn(s);
      await s.be.synchronize();
      return ((performance.now() - t0) / reps) * 1000;
    };
    for (let w = 0; w < 3; w++) for (const s of sets) await time(s);
    const t: number[][] = sets.map(() => []);
    for (let i = 0; i < trials; i++) for (const [j, s] of sets.entries()) t[j]!.push(await time(s));
    const us = Object.fromEntries(KERNELS.map((k, j) => [k, med(t[j]!)]));
    emit({
      event: 'layerNorm',
      product: `${what} [${R}, ${D}]`,
      rows: R,
      D,
      us,
      workgroupOverSubgroup: us.workgroup! / us.subgroup!,
      maxDiff: what === 'forward' ? maxDiff(ys[0]!, ys[1]!) : maxDiff(dxs[0]!, dxs[1]!),
    });
  }
  for (const s of sets) for (const a of [s.x, s.g, s.w, s.b, s.y, s.mean, s.rstd]) s.be.free(a);
}
for (const be of backends) be.dispose();
const json = arg('json', '');
if (json) writeFileSync(json, `${JSON.stringify({ rows }, null, 2)}\n`);
process.exit(0);
