// Does Dataset.mapParallel help? A CPU-heavy per-sample map (a 28×28 image: 40 passes of a 3×3 box blur, then a
// shift) over --n samples, inline (Dataset.map) against worker threads, alone and feeding a consumer that keeps the
// main thread busy (a simulated training step of `--step` ms per batch of 32). A light map shows the per-sample
// cost of the round trip. Prints samples/s per variant, the median of `--repeats` runs.
// Per sample: 32 samples in flight per worker (a step blocks the main thread, so the workers need queued work);
// per batch: mapParallel after batch(32), 2 batches in flight per worker. A pass starts and ends its workers.
// Usage: node benches/probes/dataset-workers.mjs [--workers 1,2] [--step 20] [--repeats 3] [--n 1024] (after a build)
import { availableParallelism } from 'node:os';
import { Dataset } from '@polyhal/autograd';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const workerCounts = arg('workers', '1,2').split(',').map(Number);
const stepMs = Number(arg('step', '20'));
const repeats = Number(arg('repeats', '3'));
const N = Number(arg('n', '1024'));
const samples = Array.from({ length: N }, (_, i) => ({
  x: Float32Array.from({ length: 784 }, (_, k) => ((i * 7919 + k * 104729) % 1000) / 1000),
  y: i % 10,
}));

// Self-contained (rebuilt in each worker from its source): per image, `passes` 3×3 box blurs, then a shift by the
// image's own offsets. Takes a sample { x: Float32Array(784), y } or a batch { x: { data, shape: [n, 784] }, y }.
const augment = (s) => {
  const PASSES = 40;
  const one = (img) => {
    let a = Float32Array.from(img);
    let b = new Float32Array(784);
    for (let pass = 0; pass < PASSES; pass++) {
      for (let r = 0; r < 28; r++)
        for (let c = 0; c < 28; c++) {
          let sum = 0;
          let n = 0;
          for (let dr = -1; dr <= 1; dr++)
            for (let dc = -1; dc <= 1; dc++) {
              const rr = r + dr;
              const cc = c + dc;
              if (rr >= 0 && rr < 28 && cc >= 0 && cc < 28) {
                sum += a[rr * 28 + cc];
                n++;
              }
            }
          b[r * 28 + c] = sum / n;
        }
      [a, b] = [b, a];
    }
    const dx = Math.floor(img[0] * 5) - 2;
    const dy = Math.floor(img[1] * 5) - 2;
    const out = new Float32Array(784);
    for (let r = 0; r < 28; r++)
      for (let c = 0; c < 28; c++) {
        const rr = r - dy;
        const cc = c - dx;
        out[r * 28 + c] = rr >= 0 && rr < 28 && cc >= 0 && cc < 28 ? a[rr * 28 + cc] : 0;
      }
    return out;
  };
  if (!s.x.shape) return { x: one(s.x), y: s.y };
  const n = s.x.shape[0];
  const data = new Float32Array(n * 784);
  for (let i = 0; i < n; i++) data.set(one(s.x.data.subarray(i * 784, (i + 1) * 784)), i * 784);
  return { x: { data, shape: s.x.shape }, y: s.y };
};
const light = (s) => ({ x: s.x, y: s.y + 1 });

const busy = (ms) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

async function samplesPerSecond(makeBatches, consume) {
  const times = [];
  for (let r = 0; r < repeats; r++) {
    const t0 = performance.now();
    let n = 0;
    for await (const b of makeBatches()) {
      n += b.x.shape[0];
      if (consume) busy(stepMs);
    }
    if (n !== N) throw new Error(`saw ${n} samples`);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return N / (times[Math.floor(times.length / 2)] / 1000);
}

const base = () => Dataset.fromArray(samples);
const rows = [];
const t0 = performance.now();
for (let i = 0; i < 5; i++)
  await Dataset.fromArray([{ x: 1 }])
    .mapParallel((s) => s, { workers: 1 })
    .toArray();
const startMs = (performance.now() - t0) / 5;
for (const [mapName, fn] of [
  ['augment (40 blur passes)', augment],
  ['light', light],
]) {
  for (const consume of [false, true]) {
    if (mapName === 'light' && consume) continue;
    const label = `${mapName}${consume ? ` + ${stepMs} ms step/batch` : ''}`;
    const add = async (variant, make) => rows.push([label, variant, await samplesPerSecond(make, consume)]);
    await add('inline: map', () => base().map(fn).batch(32));
    for (const w of workerCounts) {
      const perSample = { workers: w, inFlight: 32 };
      await add(`mapParallel ${w} worker(s), per sample`, () => base().mapParallel(fn, perSample).batch(32));
      const perBatch = { workers: w, inFlight: 2 };
      await add(`mapParallel ${w} worker(s), per batch`, () => base().batch(32).mapParallel(fn, perBatch));
    }
  }
}
console.log(`cores: ${availableParallelism()}, node ${process.version}, ${N} samples, batch 32, median of ${repeats}`);
console.log(`a pass's worker start and stop (1 worker, 1 sample): ${startMs.toFixed(1)} ms`);
for (const [label, variant, sps] of rows)
  console.log(`${label.padEnd(40)} ${variant.padEnd(38)} ${sps.toFixed(0).padStart(7)} samples/s`);
