// Rotating-round timing shared by the Node and browser benchmarks (tinybench only, no Node APIs).
import { Bench } from 'tinybench';

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
    const bench = new Bench({
      iterations,
      warmupIterations: r === 0 ? warmup : Math.min(1, warmup),
      time: 0,
      warmupTime: 0,
      retainSamples: true,
    });
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
