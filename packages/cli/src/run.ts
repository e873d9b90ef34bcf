/**
 * `polyhal run model.onnx [--backend X] [--input name=file.npy]... [--seed N] [--profile] [--save DIR]
 * [--graph-optimization basic|all]`: an
 * ONNX model on a PolyHAL backend through @polyhal/onnx's InferenceSession. Prints the inputs, each output's
 * dtype, dims and summary (min, max, mean, NaN count, first values) and the run's time; `--profile` times
 * every node (after a warm-up run) and adds the table and the per-op totals.
 * Exit code: 0 the model ran; 2 a typed error, one line naming the model file, the input or the node (a
 * file that is not a model, is truncated or claims more than it holds, a bad .npy, an input of another
 * name, dtype or shape, an op the runtime cannot run, a node that fails); 1 anything unexpected.
 */
import { statSync } from 'node:fs';
import { type Command, InvalidArgumentError as CliArgError, Option } from 'commander';
import { type ComputeBackend, PolyHalError } from '@polyhal/hal';
import { oneLineError } from '@polyhal/conformance';
import { type Feeds, InferenceSession, OnnxFeedError, type OutputTensor } from '@polyhal/onnx';
import { checkSaveDir, type LoadedInput, loadInputs, saveOutputs } from './npy.js';

/** What `polyhal run` was asked to do. */
export interface RunJob {
  model: string;
  backend: string;
  inputs: string[];
  seed: number;
  profile: boolean;
  save?: string;
  /** InferenceSession's graphOptimizationLevel (default 'all'). */
  optimization?: 'disabled' | 'basic' | 'extended' | 'all';
}

const seedFlag = (v: string): number => {
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v)))
    throw new CliArgError(`--seed must be a non-negative integer, got '${v}' (decimal digits)`);
  return Number(v);
};

interface RunFlags {
  backend: string;
  input?: string[];
  seed: number;
  profile?: boolean;
  save?: string;
  graphOptimization: NonNullable<RunJob['optimization']>;
}

/** Adds the `run` subcommand to `program`; its action hands the parsed job to `onRun`. */
export function addRunCommand(program: Command, onRun: (job: RunJob) => void): void {
  program
    .command('run')
    .description(
      "Run an ONNX model on a PolyHAL backend: prints the outputs' dtypes, dims and summaries, and with " +
        '--profile the time of every node.',
    )
    .argument('<model>', 'the .onnx file')
    .option('--backend <name>', 'auto, or a backend name (cpu, wasm, webgpu, reference)', 'auto')
    .option(
      '--input <name=file>',
      'the values of input name, from a .npy (or ONNX TensorProto .pb) file; repeatable. An input given no ' +
        'file gets seeded values (floats uniform in [-1, 1), integers 0) where the model fixes its dims',
      (v: string, prev: string[] | undefined) => [...(prev ?? []), v],
    )
    .option('--seed <n>', 'seed of the generated input values', seedFlag, 0)
    .option('--profile', 'after a warm-up run, time every node (one synchronize per node) and print the table')
    .option('--save <dir>', 'write each output as DIR/<output name>.npy')
    .addOption(
      new Option(
        '--graph-optimization <level>',
        "the session's graph rewrites: basic keeps every node but folded convs and hard swish; all (the default) " +
          'also fuses chains of elementwise nodes into one FusedElementwise node',
      )
        .choices(['disabled', 'basic', 'extended', 'all'])
        .default('all'),
    )
    .action((model: string, o: RunFlags) =>
      onRun({
        model,
        backend: o.backend,
        inputs: o.input ?? [],
        seed: o.seed,
        profile: o.profile === true,
        save: o.save,
        optimization: o.graphOptimization,
      }),
    );
}

const fmt = (x: number): string => (Number.isInteger(x) && Math.abs(x) < 1e15 ? String(x) : x.toPrecision(5));

/** One output's summary: min, max and mean of its finite values, NaN and ±Inf counts, first values. */
export function summarize(t: OutputTensor): string {
  const n = t.data.length;
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  let finite = 0;
  let nan = 0;
  for (let i = 0; i < n; i++) {
    const v = Number(t.data[i]);
    if (Number.isNaN(v)) nan++;
    else if (Number.isFinite(v)) {
      finite++;
      sum += v;
      if (v < min) min = v;
      if (v > max) max = v;
    }
  }
  const parts = [`${t.dtype} [${t.dims.join(', ')}]`];
  if (finite) parts.push(`min ${fmt(min)}`, `max ${fmt(max)}`, `mean ${fmt(sum / finite)}`);
  if (nan) parts.push(`${nan} NaN`);
  if (n - finite - nan) parts.push(`${n - finite - nan} ±Inf`);
  const first = Array.from(t.data.subarray(0, 8) as ArrayLike<number | bigint>, (v) => fmt(Number(v)));
  if (n) parts.push(`values [${first.join(', ')}${n > 8 ? ', ...' : ''}]`);
  return parts.join('  ');
}

/** One node's time in a profiled run. */
interface NodeTime {
  node: string;
  op: string;
  ms: number;
}

/**
 * A profiled run: after each node the backend is synchronized and the clock read, so each node's time is
 * its own work (asynchronous backends lose their overlap of nodes: the profiled run is slower).
 */
async function profiledRun(session: InferenceSession, be: ComputeBackend, feeds: Feeds): Promise<NodeTime[]> {
  const times: NodeTime[] = [];
  await be.synchronize();
  let last = performance.now();
  await session.run(feeds, {
    onNode: async (n) => {
      await be.synchronize();
      const now = performance.now();
      times.push({ node: [...n.path, n.node].join(' > '), op: n.op, ms: now - last });
      last = now;
    },
  });
  return times;
}

function printProfile(times: NodeTime[]): void {
  const total = times.reduce((s, t) => s + t.ms, 0);
  const pct = (ms: number): string => `${((100 * ms) / (total || 1)).toFixed(1).padStart(5)}%`;
  const width = Math.min(48, Math.max(4, ...times.map((t) => t.node.length)));
  console.log(`\ntime per node (execution order; ${times.length} nodes, ${total.toFixed(2)} ms):`);
  console.log(`${'#'.padStart(4)}  ${'node'.padEnd(width)}  ${'op'.padEnd(20)} ${'ms'.padStart(9)}  share`);
  times.forEach((t, i) =>
    console.log(
      `${String(i + 1).padStart(4)}  ${t.node.slice(0, width).padEnd(width)}  ${t.op.padEnd(20)} ` +
        `${t.ms.toFixed(3).padStart(9)} ${pct(t.ms)}`,
    ),
  );
  const byOp = new Map<string, { ms: number; count: number }>();
  for (const t of times) {
    const e = byOp.get(t.op) ?? { ms: 0, count: 0 };
    e.ms += t.ms;
    e.count++;
    byOp.set(t.op, e);
  }
  console.log('\ntime per op (sorted by total):');
  console.log(`${'op'.padEnd(20)} ${'nodes'.padStart(6)} ${'ms'.padStart(10)}  share`);
  for (const [op, e] of [...byOp].sort((a, b) => b[1].ms - a[1].ms))
    console.log(`${op.padEnd(20)} ${String(e.count).padStart(6)} ${e.ms.toFixed(3).padStart(10)} ${pct(e.ms)}`);
}

/** An error as the one line `polyhal run` prints: where it applies (the model, or an input's file), then it. */
function errorLine(job: RunJob, loaded: readonly LoadedInput[], e: unknown): string {
  if (e instanceof OnnxFeedError) {
    const file = loaded.find((l) => l.name === e.input)?.from;
    return oneLineError(`${job.model}: input '${e.input}'${file ? ` (from ${file})` : ''}`, e);
  }
  return oneLineError(job.model, e);
}

/** Runs the job; resolves with the exit code. */
export async function runModel(job: RunJob): Promise<number> {
  try {
    if (!statSync(job.model).isFile()) throw new Error('not a file');
    if (job.save !== undefined) checkSaveDir(job.save);
  } catch (e) {
    console.error(
      `error: ${e instanceof PolyHalError ? e.message : `${job.model}: cannot be read (${(e as Error).message})`}`,
    );
    return 2;
  }
  let session: InferenceSession | undefined;
  let loaded: LoadedInput[] = [];
  try {
    const t0 = performance.now();
    session = await InferenceSession.create(job.model, {
      backend: job.backend === 'auto' ? undefined : job.backend,
      graphOptimizationLevel: job.optimization ?? 'all',
    });
    const createMs = performance.now() - t0;
    if (session.selection && job.backend === 'auto') console.log(session.selection.toString());
    const be = session.backend;
    const { feeds, loaded: l } = loadInputs(job.inputs, session.inputMetadata, job.seed);
    loaded = l;
    console.log(
      `model: ${job.model} on ${be.name} (${be.deviceName}); loaded and checked in ${createMs.toFixed(0)} ms`,
    );
    for (const i of loaded) console.log(`  input ${i.name}: ${i.dtype} [${i.dims.join(', ')}] from ${i.from}`);
    const t1 = performance.now();
    let outputs = await session.run(feeds);
    const firstMs = performance.now() - t1;
    const stats = session.lastRun!;
    let timing = `first run ${firstMs.toFixed(1)} ms (plans every node)`;
    let times: NodeTime[] | undefined;
    if (job.profile) {
      const t2 = performance.now();
      outputs = await session.run(feeds);
      timing += `; second run ${(performance.now() - t2).toFixed(1)} ms`;
      times = await profiledRun(session, be, feeds);
    }
    const size = (b: number): string =>
      b < 2 ** 20 ? `${(b / 1024).toFixed(1)} KiB` : `${(b / 2 ** 20).toFixed(1)} MiB`;
    console.log(
      `${timing}; ${stats.deviceNodes} nodes on ${be.name}, ${stats.hostNodes} on the host, ` +
        `peak ${size(stats.peakBytes)} besides ${size(session.constantBytes)} of weights`,
    );
    console.log('outputs:');
    for (const name of session.outputNames) console.log(`  ${name}: ${summarize(outputs[name]!)}`);
    if (times) printProfile(times);
    if (job.save !== undefined) for (const p of saveOutputs(job.save, outputs)) console.log(`wrote ${p}`);
    return 0;
  } catch (e) {
    if (!(e instanceof PolyHalError)) throw e;
    console.error(`error: ${errorLine(job, loaded, e)}`);
    return 2;
  } finally {
    await session?.release();
  }
}
