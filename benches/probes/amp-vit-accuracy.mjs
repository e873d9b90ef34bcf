// `polyhal --amp` against float32 on the ViT: the main job's test accuracy with and without --amp, per backend and
// seed, every other option alike. One row per backend and seed (JSON on stdout), to file with
//   node benches/lib/file-result.mjs out.json --machine node-2core --suite amp-vit \
//     --entry benches/probes/amp-vit-accuracy.mjs --card '...'
// Training: `npm run build` first; each configuration is one `polyhal --model vit --json` run (niced, one at a
// time). The default 40 epochs take about half an hour a run on cpu on a 2-core machine, so the options shorten
// it (default 6 epochs of 8,000 digits, 2,000 test digits) for every configuration alike.
//   node benches/probes/amp-vit-accuracy.mjs --backends cpu,wasm,webgpu --seeds 0,1 [--epochs 6] > out.json
// --records DIR builds the rows from `polyhal --json` records already in DIR (any *.json holding { runs }) instead.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';

const program = new Command()
  .name('amp-vit-accuracy')
  .option('--backends <list>', 'comma list of backends', 'cpu,wasm,webgpu')
  .option('--seeds <list>', 'comma list of seeds', '0')
  .option('--epochs <n>', 'epochs of every run', '6')
  .option('--train <n>', 'training digits', '8000')
  .option('--test <n>', 'test digits', '2000')
  .option('--records <dir>', 'build the rows from the polyhal --json records in this folder (no training)')
  .parse();
const o = program.opts();

/** Every run of the records in `dir`. */
const recordsIn = (dir) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .flatMap((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')).runs ?? []);

/** Trains every configuration (float32 and --amp for each backend and seed); returns their records' runs. */
function train() {
  const dir = mkdtempSync(join(tmpdir(), 'amp-vit-'));
  try {
    for (const seed of o.seeds.split(','))
      for (const backend of o.backends.split(','))
        for (const amp of [false, true]) {
          const args = ['-n', '10', process.execPath, 'packages/cli/dist/main.js', '--model', 'vit'];
          args.push('--backend', backend, '--seed', seed, '--epochs', o.epochs, '--train', o.train, '--test', o.test);
          args.push('--json', join(dir, `vit-${backend}-s${seed}-${amp ? 'amp' : 'fp32'}.json`));
          if (amp) args.push('--amp');
          const r = spawnSync('nice', args, { stdio: ['ignore', 'ignore', 'inherit'] });
          if (r.status !== 0) throw new Error(`polyhal ${args.slice(3).join(' ')} exited ${r.status}`);
          console.error(`done: ${backend} seed ${seed}${amp ? ' --amp' : ''}`);
        }
    return recordsIn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const runs = (o.records ? recordsIn(o.records) : train()).filter((r) => r.model === 'vit');
const key = (r) => [r.backend, r.seed, r.epochs, r.train, r.test, r.batchSize, r.lr].join('|');
const pairs = new Map();
for (const r of runs) {
  const p = pairs.get(key(r)) ?? {};
  p[r.amp === true ? 'amp' : 'float32'] = r;
  pairs.set(key(r), p);
}
const points = (x) => Math.round(x * 1e4) / 100;
const rows = [...pairs.values()]
  .filter((p) => p.amp && p.float32)
  .map(({ amp, float32 }) => ({
    config: `${float32.backend} seed ${float32.seed}, ${float32.epochs} epochs of ${float32.train} digits`,
    model: 'vit',
    backend: float32.backend,
    seed: float32.seed,
    epochs: float32.epochs,
    train: float32.train,
    test: float32.test,
    batchSize: float32.batchSize,
    lr: float32.lr,
    float32Accuracy: float32.testAccuracy,
    ampAccuracy: amp.testAccuracy,
    differencePoints: points(amp.testAccuracy - float32.testAccuracy),
    float32FinalLoss: float32.finalLoss,
    ampFinalLoss: amp.finalLoss,
    float32EpochLoss: float32.perEpoch.map((e) => Math.round(e.meanLoss * 1e4) / 1e4),
    ampEpochLoss: amp.perEpoch.map((e) => Math.round(e.meanLoss * 1e4) / 1e4),
    float32Seconds: Math.round(float32.seconds * 10) / 10,
    ampSeconds: Math.round(amp.seconds * 10) / 10,
    device: float32.device,
    runtime: float32.runtime,
    date: [amp.date, float32.date].sort().at(-1),
  }))
  .sort((a, b) => a.backend.localeCompare(b.backend) || a.seed - b.seed);
console.log(JSON.stringify({ rows }, null, 2));
