/**
 * `polyhal --profile`: where the time of one training step goes, op by op, on each selected backend (`profile` of
 * @polyhal/autograd), and with `--compile` what the compiled step does: its traces and replays, the kernels one
 * replay runs, the elementwise ops the capture fused (webgpu), kernels dispatched per step and whole-step times,
 * eager against compiled. `--json FILE` writes the same figures (ProfileRecord).
 *
 * The per-method table times an eager step: under --compile that is what the trace runs (the trace executes fn's
 * calls while the backend records them). A replayed step calls no HAL method (it encodes the recorded kernels in
 * a few submissions), so it has no per-method row: it is timed as a whole, as are eager steps for comparison.
 * Profiling the trace itself would not say more: on webgpu the profiler replays each recorded call alone after
 * the step, which runs them unfused, outside the capture, and applies the optimizer's update a second time.
 */
import { writeFileSync } from 'node:fs';
import { type CompileStats, profile, type ProfileReport, type ProfileRow, type Tensor } from '@polyhal/autograd';
import { type ComputeBackend, createBackend } from '@polyhal/hal';
import type { MnistSplit } from './mnist.js';
import { float16Emulation, makeTrainer, type ModelKind, type TrainOptions } from './train.js';

type StepOptions = Omit<TrainOptions, 'onStep' | 'onEpoch' | 'afterTraining'>;

/** Steps timed whole after the first (eager: after a warm-up step; compiled: after the trace). */
const TIMED = 3;

/** What webgpu's kernelStats() counts (cpu and wasm have none). */
interface KernelCounts {
  dispatches: number;
  fusedOps?: number;
  fusedKernels?: number;
  planFused?: number;
  planMerged?: number;
}
const kernelCounts = (be: ComputeBackend): KernelCounts | null =>
  (be as { kernelStats?: () => KernelCounts }).kernelStats?.() ?? null;

/** One step timed whole: its loss, wall ms (ended by synchronize()) and kernelStats() deltas (null: not counted). */
interface TimedStep {
  loss: number;
  ms: number;
  kernels: { dispatches: number; fusedOps: number; fusedKernels: number; planFused: number; planMerged: number } | null;
}

async function timedStep(
  be: ComputeBackend,
  step: (x: Tensor, y: Tensor) => Promise<number>,
  x: Tensor,
  y: Tensor,
): Promise<TimedStep> {
  const k0 = kernelCounts(be);
  const t0 = performance.now();
  const loss = await step(x, y);
  await be.synchronize();
  const ms = performance.now() - t0;
  const k1 = kernelCounts(be);
  const d = (k: keyof KernelCounts) => (k1?.[k] ?? 0) - (k0?.[k] ?? 0);
  const kernels =
    k0 && k1
      ? {
          dispatches: d('dispatches'),
          fusedOps: d('fusedOps'),
          fusedKernels: d('fusedKernels'),
          planFused: d('planFused'),
          planMerged: d('planMerged'),
        }
      : null;
  return { loss, ms, kernels };
}

/** Runs `each` on the loader's batches, epoch after epoch, until it returns false. */
async function eachBatch(
  loader: AsyncIterable<{ x: Tensor; y: Tensor }>,
  each: (x: Tensor, y: Tensor) => Promise<boolean>,
): Promise<void> {
  for (;;) for await (const { x, y } of loader) if (!(await each(x, y))) return;
}

const median = (v: readonly number[]): number => [...v].sort((a, b) => a - b)[v.length >> 1]!;

/** What --profile --compile measures of the compiled step (`compile` of @polyhal/autograd). */
export interface CompiledStepProfile {
  /** compile's stats after the compiled steps: calls that traced, replayed, ran as called; refusals' reasons. */
  traces: number;
  replays: number;
  eager: number;
  refused: string[];
  /** What one replay re-runs (stats.recording): kernels, copies, host callbacks, live kernels; null: nothing kept. */
  recording: CompileStats['recording'];
  /** Compiled steps run: the first (the trace, where the backend captures) and TIMED after it. */
  steps: number;
  /** Whole-step wall ms, each ended by synchronize(): the first compiled step and the median of the later ones. */
  stepMs: { first: number; later: number };
  /** Kernels dispatched by the first compiled step and by a later one (median), kernelStats() deltas; null: none. */
  kernels: { first: number; later: number } | null;
  /**
   * During the first step: elementwise ops the capture deferred and the kernels encoded for them, and the kernels
   * the recording's plan folded into others when the capture ended (`folded`, webgpu's planFused) and ran inside
   * others' dispatches (`merged`, independent kernels merged horizontally: webgpu's planMerged); null: none.
   */
  fusion: { deferred: number; kernels: number; folded: number; merged: number } | null;
  /** Each compiled step's loss, and the eager steps' on the same batches (the warm-up and timed eager steps). */
  losses: number[];
  eagerLosses: number[];
}

export interface StepProfile {
  /** The op-by-op report of the profiled (eager) step. */
  report: ProfileReport;
  /** Wall time of an unprofiled eager step (median of TIMED, each ended by synchronize()), in ms. */
  stepMs: number;
  /** Kernels an unprofiled eager step dispatches (kernelStats() delta, median); null where not counted. */
  kernels: number | null;
  /** --compile: the compiled step's figures. */
  compiled?: CompiledStepProfile;
}

/**
 * Times one training step of `o.model` op by op: one warm-up step, TIMED unprofiled steps (their median is
 * `stepMs`), then the profiled step; that model is discarded afterwards (on asynchronous backends the profile
 * replays the step's calls, optimizer update included). With `o.compile`, a second model from the same seed then
 * runs the compiled step on the same first batches (the trace, then TIMED replays), each timed whole.
 */
export async function profileStep(backend: ComputeBackend, data: MnistSplit, o: StepOptions): Promise<StepProfile> {
  const p = profile(backend);
  const t = makeTrainer(p.backend, data, { ...o, compile: false });
  const eager: TimedStep[] = [];
  let report: ProfileReport | undefined;
  try {
    await eachBatch(t.loader, async (x, y) => {
      if (eager.length <= TIMED) {
        eager.push(await timedStep(backend, t.step, x, y));
        return true;
      }
      await p.start();
      await t.step(x, y);
      report = await p.stop();
      return false;
    });
  } finally {
    t.dispose();
  }
  const timed = eager.slice(1);
  const kernels = timed.every((s) => s.kernels) ? median(timed.map((s) => s.kernels!.dispatches)) : null;
  const out: StepProfile = { report: report!, stepMs: median(timed.map((s) => s.ms)), kernels };
  if (o.compile)
    out.compiled = await compiledSteps(
      backend,
      data,
      o,
      eager.map((s) => s.loss),
    );
  return out;
}

/** The compiled step on a fresh model: as many steps as `eagerLosses` from the loader's first batch, each timed. */
async function compiledSteps(
  backend: ComputeBackend,
  data: MnistSplit,
  o: StepOptions,
  eagerLosses: number[],
): Promise<CompiledStepProfile> {
  const t = makeTrainer(backend, data, { ...o, compile: true });
  const runs: TimedStep[] = [];
  try {
    await eachBatch(t.loader, async (x, y) => {
      runs.push(await timedStep(backend, t.step, x, y));
      return runs.length < eagerLosses.length;
    });
    const { traces, replays, eager, refused, recording } = t.compiled!.stats;
    const [first, ...later] = runs as [TimedStep, ...TimedStep[]];
    const k = first.kernels;
    return {
      traces,
      replays,
      eager,
      refused: [...refused],
      recording: recording && { ...recording },
      steps: runs.length,
      stepMs: { first: first.ms, later: median(later.map((s) => s.ms)) },
      kernels: k ? { first: k.dispatches, later: median(later.map((s) => s.kernels!.dispatches)) } : null,
      fusion:
        k && traces > 0
          ? { deferred: k.fusedOps, kernels: k.fusedKernels, folded: k.planFused, merged: k.planMerged }
          : null,
      losses: runs.map((s) => s.loss),
      eagerLosses,
    };
  } finally {
    t.dispose();
  }
}

/** `n word(s)`. */
const count = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The lines --profile --compile prints about the compiled step (after the table of the eager step). */
export function compiledLines(
  c: CompiledStepProfile,
  backend: string,
  eagerMs: number,
  eagerKernels: number | null,
): string[] {
  const ms = (v: number) => `${v.toFixed(1)} ms`;
  const copies = (n: number): string => (n === 1 ? '1 copy' : `${n} copies`);
  const calls = `traces ${c.traces}, replays ${c.replays}, eager calls ${c.eager}`;
  const lines = [`compiled step (--compile): ${c.steps} steps on the batches of the eager steps above`];
  const r = c.recording;
  if (c.traces === 0)
    lines.push(`  ${calls}: ${backend} computes as called, so compile runs the step as called (nothing recorded)`);
  else if (r)
    lines.push(
      `  ${calls}; one replay runs ${count(r.kernels, 'kernel')} (captured) and ${copies(r.copies)}, ` +
        `with ${count(r.callbacks, 'host callback')} and ${count(r.liveKernels, 'live kernel')}`,
    );
  else lines.push(`  ${calls}; nothing recorded`);
  for (const why of c.refused) lines.push(`  refused: ${why}`);
  if (c.fusion)
    lines.push(
      `  the capture deferred ${count(c.fusion.deferred, 'elementwise op')} and encoded ` +
        `${count(c.fusion.kernels, 'kernel')} for them; its plan folded ${count(c.fusion.folded, 'kernel')} ` +
        `into others and ran ${count(c.fusion.merged, 'kernel')} inside others' dispatches (independent ones merged)`,
    );
  const [first, rest] = c.replays > 0 ? ['traced', 'replayed'] : ['first', 'later'];
  const note = c.traces > 0 ? ` (the first step: it also creates the optimizer's state)` : '';
  lines.push(
    c.kernels && eagerKernels !== null
      ? `  kernels dispatched per step (kernelStats, the input's preparation included): eager ${eagerKernels}, ` +
          `${first} ${c.kernels.first}, ${rest} ${c.kernels.later}`
      : `  kernels dispatched per step: not counted (${backend} has no kernelStats)`,
    `  whole-step times, each ended by synchronize(): eager ${ms(eagerMs)} (median of ${TIMED}), ${first} ` +
      `${ms(c.stepMs.first)}${note}, ${rest} ${ms(c.stepMs.later)} (median of ${c.steps - 1})`,
  );
  const d = Math.max(...c.losses.map((l, i) => Math.abs(l - c.eagerLosses[i]!)));
  lines.push(
    d === 0
      ? `  the ${c.steps} compiled steps' losses equal the eager steps' on the same batches`
      : `  the compiled steps' losses differ from the eager steps' by up to ${d.toExponential(2)}`,
  );
  if (c.replays > 0)
    lines.push(
      '  the table above times the calls of an eager step, which the trace records; a replayed step calls no ' +
        'backend method: it is timed only whole',
    );
  return lines;
}

/** One backend's --profile figures, as --json FILE writes them (`{ "profiles": [...] }`). */
export interface ProfileRecord {
  model: ModelKind;
  backend: string;
  /** The backend's deviceName. */
  device: string;
  batchSize: number;
  lr: number;
  seed: number;
  amp: boolean;
  compile: boolean;
  /** Median wall ms of the unprofiled eager steps (each ended by synchronize()), after a warm-up step. */
  stepMs: number;
  /** Kernels an eager step dispatches (kernelStats() delta); null where the backend counts none. */
  kernels: number | null;
  /** The profiled step (ProfileReport): Σ rows' ms + outsideMs; calls replayed alone (asynchronous backends). */
  profiledMs: number;
  outsideMs: number;
  replayed: boolean;
  syncOverheadMs: number;
  /** Per backend method: outermost calls, inner calls, total ms and share of profiledMs. */
  rows: ProfileRow[];
  /** --compile: the compiled step's figures. */
  compiled?: CompiledStepProfile;
  /** `process.version` and the platform. */
  runtime: string;
  /** ISO date of the end of the profile. */
  date: string;
}

/** What profileRun needs of the command line. */
export interface ProfileJob extends StepOptions {
  /** --json FILE (checked writable before). */
  json?: string;
}

/**
 * --profile: on each backend of `names`, profileStep; prints the table sorted by total time (and with --compile
 * the compiled step's figures), writes the records to `job.json` if given, and exits without training.
 * Asynchronous backends (webgpu) get a synchronize() after each replayed call, so their profiled step is slower
 * than an unprofiled one; the output says so. A backend that does not start is skipped (unless it is the only
 * one: its error propagates).
 */
export async function profileRun(job: ProfileJob, data: MnistSplit, names: string[]): Promise<number> {
  const records: ProfileRecord[] = [];
  for (const name of names) {
    let created: Awaited<ReturnType<typeof createBackend>>;
    try {
      created = await createBackend({ backend: name === 'auto' ? undefined : name });
    } catch (e) {
      if (names.length === 1) throw e;
      console.log(`${name}: not run — ${(e as Error).message}`);
      continue;
    }
    const { backend, report: selection } = created;
    if (name === 'auto') console.log(selection.toString());
    const emulated = job.amp ? float16Emulation(backend) : null;
    if (emulated) console.log(emulated);
    try {
      const { json: _, ...o } = job;
      const { report, stepMs, kernels, compiled } = await profileStep(backend, data, o);
      console.log(
        `\nprofile of one training step: ${o.model} on ${backend.name} (${backend.deviceName}), batch ${o.batchSize}`,
      );
      console.log(
        `unprofiled step: ${stepMs.toFixed(1)} ms (median of ${TIMED}, after a warm-up step); ` +
          `profiled step: ${report.totalMs.toFixed(1)} ms` +
          (kernels === null ? '' : `; ${kernels} kernels dispatched per step`),
      );
      if (report.replayed)
        console.log(
          `${backend.name} runs queued work asynchronously: each call of the step was replayed alone between ` +
            `two synchronize() calls (less their round trip with nothing queued, ` +
            `${report.syncOverheadMs.toFixed(3)} ms), so the profiled step is slower than an unprofiled one`,
        );
      console.log(report.table());
      if (compiled) for (const line of compiledLines(compiled, backend.name, stepMs, kernels)) console.log(line);
      const { totalMs: profiledMs, outsideMs, replayed, syncOverheadMs, rows } = report;
      records.push({
        model: o.model,
        backend: backend.name,
        device: backend.deviceName,
        batchSize: o.batchSize,
        lr: o.lr,
        seed: o.seed,
        amp: o.amp === true,
        compile: o.compile === true,
        stepMs,
        kernels,
        profiledMs,
        outsideMs,
        replayed,
        syncOverheadMs,
        rows,
        ...(compiled ? { compiled } : {}),
        runtime: `Node ${process.version} (${process.platform}-${process.arch})`,
        date: new Date().toISOString(),
      });
    } finally {
      backend.dispose();
    }
  }
  if (job.json !== undefined) writeFileSync(job.json, `${JSON.stringify({ profiles: records }, null, 2)}\n`);
  return 0;
}
