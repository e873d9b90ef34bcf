/**
 * The main job: train a model on real MNIST digits on any PolyHAL backend.
 * polyhal [--backend auto|cpu|wasm|webgpu|all] [--model mlp|cnn|vit] [--epochs N] [--batch-size N] [--seed N]
 * [--lr X] [--amp] [--compile] [--profile] [--quantize] [--json FILE]
 * `--profile` times one training step op by op on each selected backend, prints the table and exits
 * without training; with --compile it also measures the compiled step (profile.ts).
 * `polyhal run model.onnx [...]` runs an ONNX model instead (run.ts).
 * Bad input (unknown backend, non-positive numbers, numbers not in decimal such as `0x1`, malformed flags,
 * a batch larger than the training set) prints a clear message and exits 2. A training step with a
 * non-finite loss (a diverging run) stops training with a message naming the step, and exits 1.
 */
import { Command, CommanderError, InvalidArgumentError as CliArgError, Option } from 'commander';
import cliProgress from 'cli-progress';
import { createBackend, PolyHalError, registeredBackends, UnknownBackendError } from '@polyhal/hal';
import '@polyhal/backend-cpu';
import '@polyhal/backend-wasm';
import '@polyhal/backend-webgpu';
import { loadMnist } from './mnist.js';
import { formatQuantized, quantizedReport } from './quantized.js';
import { checkWritable, type EpochRecord, type RunRecord, writeRecord } from './record.js';
import { addRunCommand, type RunJob, runModel } from './run.js';
import { profileRun } from './profile.js';
import { float16Emulation, type ModelKind, NonFiniteLossError, train, type TrainResult } from './train.js';

/** Per-step losses of two backends may drift apart by float32 rounding; beyond this they disagree. */
export const LOSS_TOLERANCE = 0.05;

/**
 * The one number rule of every numeric flag: decimal only. Integers are digits (`64`); numbers are digits
 * with an optional fraction and exponent (`0.001`, `.001`, `1e-3`). Hex, octal and binary forms, blanks,
 * '', 'Infinity' and a dangling exponent are refused alike (commander prints the message; exit 2).
 */
const numberFlag =
  (name: string, kind: 'positive integer' | 'non-negative integer' | 'positive number') =>
  (v: string): number => {
    const integer = kind !== 'positive number';
    const n = Number(v);
    const decimal = integer ? /^-?\d+$/.test(v) : /^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(v);
    const hint = integer ? 'decimal digits' : 'decimal, e.g. 0.001 or 1e-3';
    if (!decimal) throw new CliArgError(`${name} must be a ${kind}, got '${v}' (${hint})`);
    if (!Number.isFinite(n) || (integer && !Number.isSafeInteger(n)) || (kind !== 'non-negative integer' && n <= 0))
      throw new CliArgError(`${name} must be a ${kind}, got '${v}'`);
    return n;
  };
const positiveInt = (name: string) => numberFlag(name, 'positive integer');
const nonNegativeInt = (name: string) => numberFlag(name, 'non-negative integer');
const positiveFloat = (name: string) => numberFlag(name, 'positive number');

interface Cli {
  backend: string;
  model: ModelKind;
  epochs?: number;
  batchSize: number;
  seed: number;
  lr?: number;
  train: number;
  test: number;
  profile?: boolean;
  quantize?: boolean;
  amp?: boolean;
  compile?: boolean;
  json?: string;
}

async function runOne(
  name: string,
  o: Cli,
  epochs: number,
  data: ReturnType<typeof loadMnist>,
  quiet = false,
): Promise<{ name: string; device: string; result: TrainResult; perEpoch: EpochRecord[] }> {
  const { backend, report } = await createBackend({ backend: name === 'auto' ? undefined : name });
  if (!quiet || name === 'auto') console.log(report.toString());
  const emulated = o.amp ? float16Emulation(backend) : null;
  if (emulated) console.log(emulated);
  const bar = new cliProgress.SingleBar(
    {
      format: `{backend} epoch {epoch}/{epochs} [{bar}] {value}/{total} batches | loss {loss} | {sps} samples/s`,
      hideCursor: true,
      noTTYOutput: true,
      notTTYSchedule: 10_000,
      stream: process.stdout,
    },
    cliProgress.Presets.shades_classic,
  );
  let epochStart = performance.now();
  let lastAccuracy = 0;
  const perEpoch: EpochRecord[] = [];
  try {
    const result = await train(backend, data, {
      model: o.model,
      epochs,
      batchSize: o.batchSize,
      seed: o.seed,
      lr: o.lr!,
      amp: o.amp === true,
      compile: o.compile === true,
      onStep: (epoch, step, steps, loss, samples) => {
        if (step === 1) {
          epochStart = performance.now();
          bar.start(steps, 0, { backend: report.chosen, epoch: epoch + 1, epochs, loss: '-', sps: '-' });
        }
        const sps = samples / ((performance.now() - epochStart) / 1000);
        bar.update(step, { loss: loss.toFixed(4), sps: sps.toFixed(0) });
      },
      onEpoch: (epoch, acc, meanLoss) => {
        bar.stop();
        lastAccuracy = acc;
        perEpoch.push({ epoch: epoch + 1, meanLoss, testAccuracy: acc });
        console.log(`epoch ${epoch + 1}/${epochs}: mean loss ${meanLoss.toFixed(4)}, test accuracy ${acc.toFixed(4)}`);
      },
      afterTraining: o.quantize
        ? async (model) => {
            const q = await quantizedReport(model, o.model, backend, data, lastAccuracy);
            for (const line of formatQuantized(q, report.chosen)) console.log(line);
          }
        : undefined,
    });
    return { name: report.chosen, device: backend.deviceName, result, perEpoch };
  } finally {
    bar.stop();
    backend.dispose();
  }
}

async function main(argv: string[]): Promise<number> {
  const program = new Command()
    .name('polyhal')
    .description('Train a model on real MNIST digits (8,000 train / 2,000 test) on a PolyHAL backend.')
    .addOption(new Option('--backend <name>', 'auto, all, or a backend name (cpu, wasm, webgpu)').default('auto'))
    .addOption(new Option('--model <kind>', 'model').choices(['mlp', 'cnn', 'vit']).default('mlp'))
    .option('--epochs <n>', 'epochs (default: 12 for mlp, 8 for cnn, 40 for vit)', positiveInt('--epochs'))
    .option('--batch-size <n>', 'batch size', positiveInt('--batch-size'), 64)
    .option('--seed <n>', 'seed for the split, the initial weights and the shuffling', nonNegativeInt('--seed'), 0)
    .option('--lr <x>', 'Adam learning rate (default: 0.001 for mlp and vit, 0.003 for cnn)', positiveFloat('--lr'))
    .option('--train <n>', 'training digits', positiveInt('--train'), 8000)
    .option('--test <n>', 'test digits', positiveInt('--test'), 2000)
    .option(
      '--amp',
      'mixed precision: products in float16 (autocast), dynamic loss scaling (GradScaler), float32 weights',
    )
    .option(
      '--compile',
      'record the whole training step once and replay it (webgpu; the same bits as eager steps; elsewhere as called)',
    )
    .option(
      '--profile',
      'time one training step op by op on each selected backend, print the table and exit; with --compile also ' +
        "the compiled step's traces, replays, kernels per replay, fused elementwise ops, kernels per step and " +
        'whole-step times against eager steps (the table times an eager step, whose calls the trace records; a ' +
        'replayed step calls no backend method, so it is timed only whole)',
    )
    .option(
      '--quantize',
      'after training: int8 post-training quantization of the Linear layers; prints int8 test accuracy and ' +
        'inference digits/s (batch 256 and 1) against float32',
    )
    .option(
      '--json <file>',
      "write the run's figures (per-epoch loss and test accuracy, seconds, peak memory, device) as JSON; " +
        "with --profile the profile's (per-method rows, step times, the compiled step's counts)",
    )
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) })
    // the main job's options come before a subcommand; `polyhal run ...` takes its own
    .enablePositionalOptions()
    .usage('[options]\n       polyhal run <model> [options]')
    .action(() => {});
  let job: RunJob | undefined;
  addRunCommand(program, (j) => {
    job = j;
  });
  for (const c of program.commands) c.exitOverride().configureOutput({ writeErr: (s) => process.stderr.write(s) });
  try {
    program.parse(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError)
      return e.code === 'commander.helpDisplayed' || e.code === 'commander.version' ? 0 : 2;
    throw e;
  }
  if (job) return runModel(job);
  const o = program.opts<Cli>();
  const known = registeredBackends();
  if (o.backend !== 'auto' && o.backend !== 'all' && !known.includes(o.backend)) {
    console.error(`error: unknown backend '${o.backend}'; available: auto, all, ${known.join(', ')}`);
    return 2;
  }
  if (o.train + o.test > 10000) {
    console.error(
      `error: --train + --test must be at most 10000 (the mnist package ships 10,000 digits), got ${o.train + o.test}`,
    );
    return 2;
  }
  if (o.batchSize > o.train) {
    console.error(
      `error: --batch-size (${o.batchSize}) must be at most --train (${o.train}): no full batch, so ` +
        `no training step would run`,
    );
    return 2;
  }
  if (o.compile && o.amp) {
    console.error('error: --compile does not combine with --amp (GradScaler reads the device every step)');
    return 2;
  }
  if (o.json !== undefined) {
    try {
      checkWritable(o.json);
    } catch (e) {
      console.error(`error: ${(e as Error).message}`);
      return 2;
    }
  }
  const epochs = o.epochs ?? { mlp: 12, cnn: 8, vit: 40 }[o.model];
  o.lr ??= o.model === 'cnn' ? 3e-3 : 1e-3;
  const record = (r: Awaited<ReturnType<typeof runOne>>): RunRecord => ({
    model: o.model,
    backend: r.name,
    device: r.device,
    epochs,
    batchSize: o.batchSize,
    lr: o.lr!,
    seed: o.seed,
    amp: o.amp === true,
    compile: o.compile === true,
    ...(r.result.compiled ? { compiled: r.result.compiled } : {}),
    train: data.trainSize,
    test: data.testSize,
    testAccuracy: r.result.testAccuracy,
    finalLoss: r.result.finalLoss,
    seconds: r.result.seconds,
    samplesPerSecond: r.result.samplesPerSecond,
    peakBytes: r.result.peakBytes,
    perEpoch: r.perEpoch,
    runtime: `Node ${process.version} (${process.platform}-${process.arch})`,
    date: new Date().toISOString(),
  });
  const data = loadMnist(o.train, o.test, o.seed);
  console.log(
    `MNIST: ${data.trainSize} train / ${data.testSize} test digits; model ${o.model}; ${epochs} ` +
      `epochs; batch ${o.batchSize}; ${o.model === 'vit' ? 'AdamW' : 'Adam'} lr ${o.lr}; seed ${o.seed}` +
      (o.amp ? '; mixed precision (float16 autocast + GradScaler)' : '') +
      (o.compile ? '; compiled step (recorded once, replayed)' : ''),
  );
  if (o.profile) {
    const { model, batchSize, seed, json } = o;
    const job = { model, epochs, batchSize, seed, lr: o.lr!, amp: o.amp === true, compile: o.compile === true, json };
    return profileRun(job, data, o.backend === 'all' ? ['cpu', ...known.filter((n) => n !== 'cpu')] : [o.backend]);
  }

  if (o.backend !== 'all') {
    const run = await runOne(o.backend, o, epochs, data);
    const { name, result } = run;
    if (o.json !== undefined) writeRecord(o.json, [record(run)]);
    console.log(
      `trained in ${result.seconds.toFixed(1)} s (${result.samplesPerSecond.toFixed(0)} samples/s), ` +
        `final loss ${result.finalLoss.toFixed(4)}, peak device memory ${(result.peakBytes / 2 ** 20).toFixed(1)} MiB`,
    );
    console.log(`test accuracy: ${result.testAccuracy.toFixed(4)} (backend: ${name})`);
    return 0;
  }

  // --backend all: the same model from the same initial weights on every backend that starts here.
  const runs: Awaited<ReturnType<typeof runOne>>[] = [];
  for (const name of ['cpu', ...known.filter((n) => n !== 'cpu')]) {
    try {
      runs.push(await runOne(name, o, epochs, data, true));
    } catch (e) {
      if (e instanceof NonFiniteLossError) throw e;
      console.log(`${name}: not run — ${(e as Error).message}`);
    }
  }
  const cpu = runs.find((r) => r.name === 'cpu')!;
  console.log(
    '\nbackend   device                                             wall s  samples/s  final loss  ' +
      'test acc  peak MiB  max |Δloss| vs cpu',
  );
  let worst = 0;
  for (const r of runs) {
    const d = Math.max(0, ...r.result.losses.map((l, i) => Math.abs(l - cpu.result.losses[i]!)));
    worst = Math.max(worst, d);
    console.log(
      `${r.name.padEnd(9)} ${r.device.slice(0, 50).padEnd(50)} ` +
        `${r.result.seconds.toFixed(1).padStart(7)} ` +
        `${r.result.samplesPerSecond.toFixed(0).padStart(10)} ` +
        `${r.result.finalLoss.toFixed(4).padStart(11)} ` +
        `${r.result.testAccuracy.toFixed(4).padStart(9)} ` +
        `${(r.result.peakBytes / 2 ** 20).toFixed(1).padStart(9)} ${d.toExponential(2).padStart(19)}`,
    );
  }
  console.log(
    worst <= LOSS_TOLERANCE
      ? `per-step losses agree within ${LOSS_TOLERANCE}`
      : `per-step losses DISAGREE: ${worst} > ${LOSS_TOLERANCE}`,
  );
  if (o.json !== undefined) writeRecord(o.json, runs.map(record));
  const last = runs[runs.length - 1]!;
  console.log(`test accuracy: ${last.result.testAccuracy.toFixed(4)} (backend: ${last.name})`);
  return worst <= LOSS_TOLERANCE ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    if (e instanceof NonFiniteLossError) {
      console.error(`error: ${e.message}`);
      process.exit(1);
    }
    if (e instanceof UnknownBackendError || e instanceof PolyHalError) {
      console.error(`error: ${(e as Error).message}`);
      process.exit(2);
    }
    console.error(e);
    process.exit(1);
  },
);
