// The MNIST ConvNet's accuracy, tfjs against PolyHAL, over repeated runs (issue #37: "the same or better accuracy
// after the same epochs with the same initializers"). One run trains one twin of examples/tfjs-ports at the bench
// size (SIZES.mnist.bench: 1,200 digits, 400 held out, batch 64, 3 epochs) on the same digits; tfjs draws its
// weights and shuffles unseeded, PolyHAL's run r uses seed seedStart + r for both. Not a suite of `npm run bench`
// (tfjs-cpu takes minutes per run): run it by hand, one library at a time, and compare the two files of runs.
//   node benches/suites/tfjs-ports-accuracy.mjs --library tfjs --runs 12 --out tfjs.jsonl
//   node benches/suites/tfjs-ports-accuracy.mjs --library polyhal --runs 24 --out polyhal.jsonl
//   node benches/suites/tfjs-ports-accuracy.mjs --stats tfjs.jsonl,polyhal.jsonl
// Each run appends one JSON line { library, backend, seed, valAccuracy, valLoss, loss, ms } to --out (and prints
// it); --stats prints per library the final validation accuracies, mean and standard deviation, and PolyHAL
// against tfjs: the difference of means with its 95 % interval, Welch's t-test, a permutation test, and
// non-inferiority tests (PolyHAL below tfjs by 0.01 or 0.02 or more) (benches/suites/tfjs-ports-stats.mjs).
import { appendFileSync, readFileSync } from 'node:fs';
import { Command } from 'commander';
import { mnistData } from '../../examples/tfjs-ports/data.mjs';
import * as mnistPolyhal from '../../examples/tfjs-ports/mnist.polyhal.mjs';
import * as mnistTfjs from '../../examples/tfjs-ports/mnist.tfjs.mjs';
import { backends, SIZES } from '../../examples/tfjs-ports/run.mjs';
import { mean, nonInferiority, permutation, std, welch } from './tfjs-ports-stats.mjs';

/** One training run of `library` ('tfjs' or 'polyhal') on `data`: the twin's per-epoch figures. */
async function runOnce(library, backend, data, seed) {
  const s = SIZES.mnist.bench;
  const opts = { epochs: s.epochs, batchSize: s.batchSize };
  if (library === 'tfjs') {
    const model = mnistTfjs.getModel();
    const figures = mnistTfjs.figures(await mnistTfjs.train(model, data, opts));
    model.dispose();
    return figures;
  }
  const model = mnistPolyhal.getModel(backend, seed);
  const figures = mnistPolyhal.figures(await mnistPolyhal.train(model, data, { ...opts, seed }));
  model.dispose();
  return figures;
}

const fixed = (v, d = 4) => Number(v.toFixed(d));

/** The statistics of the runs in `files` (JSON lines): per library, then PolyHAL − tfjs. */
function report(files) {
  const runs = files.flatMap((f) =>
    readFileSync(f, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l)),
  );
  const final = (lib) => runs.filter((r) => r.library === lib).map((r) => r.valAccuracy.at(-1));
  const out = {};
  for (const lib of ['tfjs', 'polyhal']) {
    const xs = final(lib);
    out[lib] = { n: xs.length, valAccuracy: xs.map((v) => fixed(v, 4)), mean: fixed(mean(xs)), std: fixed(std(xs)) };
  }
  const [a, b] = [final('polyhal'), final('tfjs')];
  if (a.length > 1 && b.length > 1) {
    const w = welch(a, b);
    out.polyhalMinusTfjs = {
      diff: fixed(w.diff),
      ci95: w.ci95.map((v) => fixed(v)),
      welch: { t: fixed(w.t, 3), df: fixed(w.df, 1), p: fixed(w.p, 4), pOneSidedBelow: fixed(w.pLess, 4) },
      permutation: { p: fixed(permutation(a, b).p, 4), rounds: 100_000 },
      nonInferiority: [0.01, 0.02].map((m) => ({ margin: m, p: fixed(nonInferiority(a, b, m).p, 4) })),
    };
  }
  return out;
}

const o = new Command()
  .option('--library <name>', 'tfjs or polyhal', 'polyhal')
  .option('--runs <n>', 'training runs', '10')
  .option('--seed-start <n>', "PolyHAL's first seed (run r uses seedStart + r)", '1')
  .option('--backend <name>', 'cpu or wasm (PolyHAL and tfjs alike)', 'cpu')
  .option('--out <file>', 'append each run as a JSON line to this file')
  .option('--stats <files>', 'comma list of JSON-line files: print the statistics and exit')
  .parse()
  .opts();
if (o.stats) {
  console.log(JSON.stringify(report(o.stats.split(',')), null, 2));
  process.exit(0);
}
if (!['tfjs', 'polyhal'].includes(o.library)) throw new Error(`--library must be tfjs or polyhal, got ${o.library}`);
const be = await backends(o.backend);
const data = mnistData(SIZES.mnist.bench.data);
for (let r = 0; r < Number(o.runs); r++) {
  const seed = o.library === 'polyhal' ? Number(o.seedStart) + r : null;
  const t0 = performance.now();
  const f = await runOnce(o.library, be, data, seed);
  const line = JSON.stringify({
    library: o.library,
    backend: o.backend,
    seed,
    valAccuracy: f.valAccuracy.map((v) => fixed(v)),
    valLoss: f.valLoss.map((v) => fixed(v)),
    loss: f.loss.map((v) => fixed(v)),
    ms: Math.round(performance.now() - t0),
  });
  console.log(line);
  if (o.out) appendFileSync(o.out, `${line}\n`);
}
be.dispose();
process.exit(0);
