// Shared pieces of the benchmark harness: machine description, tinybench runs of a pair (PolyHAL vs
// its TensorFlow.js peer, interleaved in rounds so machine noise hits both alike), and result rows.
import os from 'node:os';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { Bench } from 'tinybench';
import { group } from './rounds.mjs';

export { group, roundRatio } from './rounds.mjs';

const require = createRequire(import.meta.url);
export const versions = () => {
  // A package's version from its package.json, found above its entry file (exports may hide package.json).
  const v = (name) => {
    try {
      for (let dir = dirname(require.resolve(name)); dir !== dirname(dir); dir = dirname(dir)) {
        const file = join(dir, 'package.json');
        if (existsSync(file)) {
          const pkg = JSON.parse(readFileSync(file, 'utf8'));
          if (pkg.name === name) return pkg.version;
        }
      }
    } catch {
      /* not installed */
    }
    return 'n/a';
  };
  return {
    node: process.versions.node,
    v8: process.versions.v8,
    polyhal: v('@polyhal/hal'),
    'tfjs-core': v('@tensorflow/tfjs-core'),
    tinybench: v('tinybench'),
  };
};
export const machine = () =>
  `${os.cpus()[0]?.model ?? 'cpu'} ×${os.cpus().length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
  `${os.platform()} ${os.release()}`;

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
  const bench = new Bench({
    iterations,
    warmupIterations: Math.min(2, warmup),
    time: 0,
    warmupTime: 0,
    retainSamples: true,
  });
  bench.add('ours', ours);
  await bench.run();
  const s = [...bench.tasks[0].result.latency.samples].sort((a, b) => a - b);
  return {
    median: s[s.length >> 1],
    spread: s[Math.floor(s.length * 0.75)] - s[Math.floor(s.length * 0.25)],
    n: s.length,
  };
}
