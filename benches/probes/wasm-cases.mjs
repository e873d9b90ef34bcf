// The wasm benchmark's cases, shared by Node (benches/probes/wasm.mjs) and Chromium (benches/probes/wasm-browser.mjs):
// matmul f32 N×N (GFLOP/s), add and relu over 1M and 16M elements, each PolyHAL build against
// TensorFlow.js's wasm backend (already set up by the caller) on the same inputs. Kernel time: inputs
// and outputs stay on the backend (both compute synchronously inside the call). Tasks are timed in
// rotating rounds; ratios are medians of per-round ratios (tfjs time / ours).
import { mulberry32 } from '@polyhal/hal';
import { group, roundRatio } from '../lib/rounds.mjs';

export const rand = (n, seed) => {
  const r = mulberry32(seed);
  return Float32Array.from({ length: n }, () => r() * 2 - 1);
};

/**
 * Runs every case. `builds`: name → PolyHAL wasm backend; `tf`: tfjs-core with the wasm backend set;
 * `peer`: its name in the printed lines; `log`: line printer. Returns one row per case and build.
 */
export async function wasmCases({
  tf,
  builds,
  peer = 'tfjs-wasm',
  log = console.log,
  sizes = [256, 512, 1024],
  elementwise = [1 << 20, 1 << 24],
}) {
  const results = [];
  async function compare(name, size, work, host, ours, theirs, { iterations, rounds = 6 }) {
    const inputs = Object.fromEntries(
      Object.entries(builds).map(([k, be]) => [k, host.map(([data, shape]) => be.fromArray(data, shape))]),
    );
    const tasks = { tfjs: theirs };
    for (const [k, be] of Object.entries(builds)) tasks[k] = () => ours(be, inputs[k]);
    const r = await group(tasks, { iterations, rounds, warmup: 3 });
    for (const [k, be] of Object.entries(builds)) {
      const p = r[k].median,
        t = r.tfjs.median;
      const row = { suite: name, size, build: k, polyhalMs: p, tfjsMs: t, ratio: roundRatio(r[k], r.tfjs), rounds };
      if (work) Object.assign(row, { polyhalGflops: work / (p * 1e6), tfjsGflops: work / (t * 1e6) });
      results.push(row);
      const g = (x) => (work ? ` (${(work / (x * 1e6)).toFixed(1)} GFLOP/s)` : '');
      log(
        `${name} ${size} [${k}]: polyhal ${p.toFixed(3)} ms${g(p)}, ${peer} ${t.toFixed(3)} ` +
          `ms${g(t)}, ratio ${row.ratio.toFixed(2)}x (median of ${rounds} round ratios)`,
      );
      for (const x of inputs[k]) be.free(x);
    }
  }
  for (const n of sizes) {
    const a = rand(n * n, 1),
      b = rand(n * n, 2);
    const ta = tf.tensor2d(a, [n, n]),
      tb = tf.tensor2d(b, [n, n]);
    await compare(
      'matmul',
      n,
      2 * n ** 3,
      [
        [a, [n, n]],
        [b, [n, n]],
      ],
      (be, [x, y]) => be.free(be.matmul(x, y)),
      () => tf.matMul(ta, tb).dispose(),
      { iterations: n >= 1024 ? 3 : n >= 512 ? 8 : 30 },
    );
    ta.dispose();
    tb.dispose();
  }
  for (const n of elementwise) {
    const a = rand(n, 3),
      b = rand(n, 4);
    const ta = tf.tensor1d(a),
      tb = tf.tensor1d(b);
    const iterations = n > 1 << 20 ? 5 : 40;
    await compare(
      'add',
      n,
      0,
      [
        [a, [n]],
        [b, [n]],
      ],
      (be, [x, y]) => be.free(be.add(x, y)),
      () => tf.add(ta, tb).dispose(),
      { iterations },
    );
    await compare(
      'relu',
      n,
      0,
      [[a, [n]]],
      (be, [x]) => be.free(be.relu(x)),
      () => tf.relu(ta).dispose(),
      { iterations },
    );
    ta.dispose();
    tb.dispose();
  }
  return results;
}
