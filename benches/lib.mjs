// Shared pieces of the benchmark harness: machine description, tinybench runs of a pair (PolyHAL vs
// its TensorFlow.js peer, interleaved in rounds so machine noise hits both alike), and result rows.
import os from 'node:os';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Bench } from 'tinybench';

const require = createRequire(import.meta.url);
export const versions = () => {
  const v = (name) => { try { return JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')).version; } catch { return 'n/a'; } };
  return { node: process.versions.node, v8: process.versions.v8, polyhal: v('@polyhal/hal'), 'tfjs-core': v('@tensorflow/tfjs-core'), tinybench: v('tinybench') };
};
export const machine = () => `${os.cpus()[0]?.model ?? 'cpu'} ×${os.cpus().length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.platform()} ${os.release()}`;

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { median: q(0.5), spread: q(0.75) - q(0.25), n: s.length };
};

/**
 * Times several named tasks (functions that force their result where a user would read it) in
 * `rounds` tinybench runs whose task order rotates, so machine drift hits every task alike. Returns
 * per task: median, spread (p75 − p25) over all samples, and the per-round medians; `errors` holds
 * the first line of each failed task's error.
 */
export async function group(tasks, { iterations = 10, rounds = 3, warmup = 3 } = {}) {
  const names = Object.keys(tasks);
  const samples = Object.fromEntries(names.map((n) => [n, []]));
  const perRound = Object.fromEntries(names.map((n) => [n, []]));
  const errors = {};
  for (let r = 0; r < rounds; r++) {
    const bench = new Bench({ iterations, warmupIterations: r === 0 ? warmup : Math.min(1, warmup), time: 0, warmupTime: 0, retainSamples: true });
    const order = names.map((_, i) => names[(i + r) % names.length]).filter((n) => !errors[n]);
    for (const n of order) bench.add(n, tasks[n]);
    await bench.run();
    for (const t of bench.tasks) {
      if (t.result?.state === 'errored' || t.result?.error) {
        errors[t.name] = String(t.result.error?.message ?? t.result.error).split('\n')[0];
        continue;
      }
      const xs = t.result?.latency?.samples ?? [];
      samples[t.name].push(...xs);
      perRound[t.name].push(stats(xs).median);
    }
  }
  const out = { errors };
  for (const n of names) if (!errors[n]) out[n] = { ...stats(samples[n]), rounds: perRound[n] };
  return out;
}

/**
 * Median over rounds of the per-round ratio a/b (each round times both back to back), which is
 * robust to a machine whose speed drifts between rounds.
 */
export const roundRatio = (a, b) => stats(a.rounds.map((x, i) => b.rounds[i] / x)).median;

/**
 * Times `ours` and `theirs` in `rounds` alternating tinybench runs; returns medians and the spread
 * (p75 − p25) over all samples.
 */
export async function pair(ours, theirs, options = {}) {
  const r = await group({ ours, theirs }, options);
  if (r.errors.ours) throw new Error(`PolyHAL failed: ${r.errors.ours}`);
  if (r.errors.theirs) return { ours: null, theirs: null, peerError: r.errors.theirs, oursFn: ours };
  return { ours: r.ours, theirs: r.theirs };
}

/** Times PolyHAL alone (when the peer cannot run the workload). */
export async function solo(ours, { iterations = 10, warmup = 2 } = {}) {
  const bench = new Bench({ iterations, warmupIterations: Math.min(2, warmup), time: 0, warmupTime: 0, retainSamples: true });
  bench.add('ours', ours);
  await bench.run();
  const s = [...bench.tasks[0].result.latency.samples].sort((a, b) => a - b);
  return { median: s[s.length >> 1], spread: s[Math.floor(s.length * 0.75)] - s[Math.floor(s.length * 0.25)], n: s.length };
}
