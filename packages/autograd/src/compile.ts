/**
 * `compile(fn)`: a function of tensors captured once per input signature and replayed after, without the
 * JavaScript of its ops (the HAL's capture, hal/src/capture.ts; the idea of CUDA Graphs, `torch.compile`'s
 * "reduce-overhead" mode, `jax.jit`). On a backend that captures (webgpu) the first call of a signature runs fn
 * while the backend records its kernels; later calls copy the inputs into the recording, replay it in a few
 * submissions and return copies of its outputs. Elsewhere (cpu, wasm: they compute as called) fn runs as is.
 *
 * ```ts
 * const step = compile((x: Tensor, y: Tensor) => {
 *   opt.zeroGrad();
 *   const loss = lossFn(model.forward(x), y);
 *   loss.backward();
 *   opt.step();
 *   return loss;
 * });
 * const l0 = step(x0, y0); // traced: runs eagerly while recording
 * const l1 = step(x1, y1); // replayed: the same kernels, the same bits as an eager step, no per-op JavaScript
 * step.release();          // gives back what the recordings hold
 * ```
 *
 * What it captures: a synchronous function (InvalidArgumentError for one that returns a promise) of inference, or
 * a whole training step — forward, backward, gradient clipping by norm (clipGradNorm computes on the device) and
 * the optimizer's step (every optimizer of optim.ts and optim-adaptive.ts). The gradients fn leaves on the leaves
 * (the parameters) are recorded too: each replay sets them, replacing the ones a leaf has where fn zeroed them
 * with `optimizer.zeroGrad()` and adding to them otherwise, as backward does. A trace that added into gradients
 * that existed before fn is not kept (zero them first, inside fn or before). Each call returns new tensors without
 * a graph (the caller's, to dispose); the tensors fn makes and does not return are disposed after it (as in
 * `scope`); inputs are copied in, never aliased. Weights are read where they live: a weight updated in place is
 * seen by the next replay, a disposed one makes it throw UseAfterFreeError.
 *
 * What a replay re-runs on the host (`stats.recording`): one callback per live section, in trace order, before the
 * kernels — per optimizer step one (it checks the parameters and the state, as step does: a disposed parameter is
 * a UseAfterFreeError; and advances stepCount), per random draw one (a Dropout layer's forward advances its offset,
 * `rand`/`randn`/`randint`/`randLike` advance the global generator) — and the params of the kernels those sections
 * made (the optimizer's update kernels take the step's learning rate, read from the optimizer at the replay, so a
 * scheduler stepped between calls is followed, and its step count; a random kernel takes its stream position). So
 * a replay computes the same bits as the eager call: the masks of dropout and the generator's draws advance per
 * replay exactly as eager. Everything else is fixed at the trace: other host numbers fn computes (a learning rate
 * changed inside fn, a `seed` option, a layer's train/eval mode, a value read from the device — a read makes the
 * trace refused) are the trace's. Call schedulers outside fn. An optimizer's state is created once, at the trace
 * (its zeros are not recorded); disposing it or moving it makes the next replay throw UseAfterFreeError (release the
 * compiled function). Up to `maxSignatures` recordings are kept (the least recently used goes first).
 */
import {
  type CapturedWork,
  type ComputeBackend,
  InvalidArgumentError,
  type NDArray,
  type ReplayOptions,
} from '@polyhal/hal';
import { FAMILIES, isWholeBuffer } from '@polyhal/hal/internal';
import { observeLeafGrads } from './backward.js';
import { liveSectionCount, observeZeroGrad } from './live.js';
import { generatorState } from './random.js';
import { keep, scope } from './scope.js';
import { Tensor } from './tensor.js';

/** Options of `compile`. */
export interface CompileOptions {
  /** Recordings kept (one per input signature: shapes and dtypes); default 8. */
  readonly maxSignatures?: number;
}

/** What a compiled function has done. */
export interface CompileStats {
  /** Calls that recorded a new signature. */
  traces: number;
  /** Calls that replayed a recording. */
  replays: number;
  /** Calls that ran fn as is (a backend without capture, a refused signature). */
  eager: number;
  /** Why signatures were not captured (e.g. "a read of buffer #12 during the capture"). */
  refused: string[];
  /**
   * What one replay of the recording traced or replayed last re-runs: its kernels and copies, the host callbacks
   * (one per optimizer step and per random draw of fn) and the kernels whose params those recompute; null before
   * the first recording (and on a backend without capture).
   */
  recording: { kernels: number; copies: number; callbacks: number; liveKernels: number } | null;
}

/** A compiled function: call it as fn; `release()` frees its recordings. */
export interface CompiledFunction<A extends Tensor[], R extends Tensor | Tensor[]> {
  (...inputs: A): R;
  /** Counts of traced, replayed and eager calls, and the reasons of refusals. */
  readonly stats: Readonly<CompileStats>;
  /** Frees every recording (later calls trace again). */
  release(): void;
  /** The function compiled, as given (what `exportOnnx` of @polyhal/onnx traces). */
  readonly fn: (...inputs: A) => R;
}

interface Recording {
  readonly work: CapturedWork;
  /** The outputs' shapes, and whether fn returned one tensor or an array. */
  readonly shapes: readonly (readonly number[])[];
  readonly single: boolean;
  /** The leaves whose gradients the recording computes (its outputs after fn's). */
  readonly leaves: readonly Tensor[];
  /** The leaves whose gradients fn zeroes before computing them (a replay replaces their gradients). */
  readonly zeroed: ReadonlySet<Tensor>;
  /** The leaves fn leaves without a gradient although it zeroed or computed one (a replay frees theirs). */
  readonly cleared: readonly Tensor[];
  /** What a replay's caller does next: copies every output, reads the small results (ReplayOptions). */
  readonly next: ReplayOptions;
}

/** fn's results of at most this many elements (a loss, a batch's scores) are copied toward the host by each replay. */
const READ_AHEAD_ELEMENTS = 1 << 16;

/** The ReplayOptions of a recording with these result shapes and `leaves` gradient outputs after them. */
function nextAfterReplay(shapes: readonly (readonly number[])[], leaves: number): ReplayOptions {
  const results = shapes.map((_, i) => i);
  return {
    copyOutputs: [...results, ...Array.from({ length: leaves }, (_, k) => shapes.length + k)],
    readOutputs: results.filter((i) => shapes[i]!.reduce((p, d) => p * d, 1) <= READ_AHEAD_ELEMENTS),
  };
}

/**
 * The HAL's random methods (randomUniform, randomNormal, bernoulli): on a backend whose capture has no live
 * sections (no captureLive), a function that calls one is not captured.
 */
const RANDOM_METHODS = Object.keys(FAMILIES.random);

/** Runs `run` with the backend's random methods watched; returns its result and whether one was called. */
function watchingRandom<T>(be: ComputeBackend, run: () => T): { result: T; random: boolean } {
  const seen = { random: false };
  const own = be as unknown as Record<string, unknown>;
  for (const m of RANDOM_METHODS) {
    const orig = own[m] as (...a: unknown[]) => unknown;
    own[m] = (...a: unknown[]) => {
      seen.random = true;
      return orig.apply(be, a);
    };
  }
  const before = generatorState();
  try {
    const result = run();
    const after = generatorState();
    return { result, random: seen.random || after.seed !== before.seed || after.offset !== before.offset };
  } finally {
    for (const m of RANDOM_METHODS) delete own[m];
  }
}

/** Gives `leaf` the gradient `g` (a new array), added to the one it has (as backward accumulates) unless `replace`. */
function setGrad(be: ComputeBackend, leaf: Tensor, g: NDArray, replace = false): void {
  if (replace && leaf.grad) {
    leaf.grad.dispose();
    leaf.grad = null;
  }
  if (leaf.grad) {
    const sum = be.add(leaf.grad.value, g);
    be.free(g);
    leaf.grad.dispose();
    leaf.grad = keep(new Tensor(be, sum));
  } else leaf.grad = keep(new Tensor(be, g));
}

const asList = (r: unknown): Tensor[] | null =>
  r instanceof Tensor ? [r] : Array.isArray(r) && r.every((t) => t instanceof Tensor) ? (r as Tensor[]) : null;

/**
 * Compiles `fn` (a synchronous function of tensors on one backend returning a tensor or an array of tensors)
 * into a function that records its kernels once per input signature and replays them after. See the module's
 * comment. InvalidArgumentError for a non-function, inputs that are not live tensors of one backend, or a result
 * that is not tensors.
 */
export function compile<A extends Tensor[], R extends Tensor | Tensor[]>(
  fn: (...inputs: A) => R,
  options: CompileOptions = {},
): CompiledFunction<A, R> {
  if (typeof fn !== 'function') throw new InvalidArgumentError('compile: fn must be a function');
  const max = options.maxSignatures ?? 8;
  if (!Number.isInteger(max) || max < 1)
    throw new InvalidArgumentError(`compile: maxSignatures must be a positive integer, got ${String(max)}`);
  const recordings = new Map<string, Recording>();
  const refused = new Map<string, string>();
  const stats: CompileStats = { traces: 0, replays: 0, eager: 0, refused: [], recording: null };
  const describe = (w: CapturedWork): CompileStats['recording'] => ({
    kernels: w.kernels,
    copies: w.copies,
    callbacks: w.callbacks ?? 0,
    liveKernels: w.liveKernels ?? 0,
  });

  const eager = (inputs: A): R => {
    stats.eager++;
    return scope(() => fn(...inputs));
  };

  const call = (...inputs: A): R => {
    if (inputs.some((t) => !(t instanceof Tensor) || t.isDisposed))
      throw new InvalidArgumentError('compile: a compiled function takes live tensors');
    const be = inputs[0]?.backend;
    if (!be || inputs.some((t) => t.backend !== be))
      throw new InvalidArgumentError('compile: the inputs must be tensors of one backend');
    if (!be.beginCapture) return eager(inputs);
    const key = `${be.id}|${JSON.stringify(inputs.map((t) => [t.shape, t.dtype]))}`;
    if (refused.has(key)) return eager(inputs);
    const rec = recordings.get(key);
    if (rec) {
      recordings.delete(key); // most recently used last
      recordings.set(key, rec);
      stats.replays++;
      // views are made whole first (the recording copies whole buffers in)
      const temps = inputs.map((t) => (isWholeBuffer(t.value) ? null : be.contiguous(t.value)));
      try {
        rec.work.replay(
          inputs.map((t, i) => temps[i] ?? t.value),
          rec.next,
        );
      } finally {
        for (const w of temps) if (w) be.free(w);
      }
      stats.recording = describe(rec.work);
      for (const leaf of rec.cleared) {
        leaf.grad?.dispose();
        leaf.grad = null;
      }
      const outs = rec.shapes.map((s, i) => new Tensor(be, rec.work.copyOutput(i, s)));
      rec.leaves.forEach((leaf, k) =>
        setGrad(be, leaf, rec.work.copyOutput(rec.shapes.length + k, leaf.shape), rec.zeroed.has(leaf)),
      );
      return (rec.single ? outs[0] : outs) as R;
    }
    return trace(be, key, inputs);
  };

  const trace = (be: ComputeBackend, key: string, inputs: A): R => {
    stats.traces++;
    // the recording's own inputs: copies, so that a replay never writes an array of the caller's
    const copies = inputs.map((t) => new Tensor(be, be.contiguous(t.value))) as A;
    const firstId = copies[0]!.id; // tensors made from here on are the trace's own
    be.beginCapture!(copies.map((t) => t.value.buffer));
    let outs: Tensor[] = [];
    let random = false;
    let single = true;
    // the recording's outputs: fn's results and the leaves' gradients, read where the trace left them (their
    // tensors are disposed below, so that no array of the caller's is a replay's output), or copies made inside
    // the recording of what is not the trace's own or not a whole buffer
    const slots: NDArray[] = [];
    const extra: NDArray[] = [];
    const slotOf = (t: Tensor): NDArray => {
      if (t.id >= firstId && isWholeBuffer(t.value)) return t.value;
      const c = be.contiguous(t.value);
      extra.push(c);
      return c;
    };
    const leaves = new Map<Tensor, boolean>(); // leaf → whether backward added into a gradient it had
    const zeroed = new Set<Tensor>(); // leaves whose gradients fn freed (optimizer.zeroGrad) before backward
    const prev = observeLeafGrads((leaf, accumulated) => leaves.set(leaf, (leaves.get(leaf) ?? false) || accumulated));
    const freed = new Set<Tensor>(); // every leaf whose gradient fn freed
    const prevZero = observeZeroGrad((params) => {
      for (const p of params) {
        freed.add(p);
        if (!leaves.has(p)) zeroed.add(p);
      }
    });
    try {
      // a backend with live sections replays optimizer steps and random draws as eager calls make them; on
      // another, a function that makes them is not kept (its recording would repeat their numbers)
      const run = () => scope(() => fn(...copies));
      const sections = liveSectionCount();
      const watched = be.captureLive ? { result: run(), random: false } : watchingRandom(be, run);
      if (!be.captureLive && liveSectionCount() !== sections) watched.random = true;
      if (watched.result instanceof Promise)
        throw new InvalidArgumentError('compile: fn returned a promise; a compiled function must be synchronous');
      const list = asList(watched.result);
      if (!list || list.some((t) => t.backend !== be || t.isDisposed))
        throw new InvalidArgumentError('compile: fn must return a live tensor, or an array of them, on its backend');
      outs = list;
      random = watched.random;
      single = watched.result instanceof Tensor;
      for (const t of outs) slots.push(slotOf(t));
      for (const leaf of [...leaves.keys()]) if (!leaf.grad) leaves.delete(leaf); // freed after backward
      for (const leaf of leaves.keys()) slots.push(slotOf(leaf.grad!));
    } catch (e) {
      observeLeafGrads(prev);
      observeZeroGrad(prevZero);
      be.abortCapture!();
      for (const c of extra) be.free(c);
      for (const t of new Set([...copies, ...outs])) if (t.id >= firstId) t.dispose();
      throw e;
    } finally {
      observeLeafGrads(prev);
      observeZeroGrad(prevZero);
    }
    const r = be.endCapture!(slots.map((s) => s.buffer));
    for (const c of extra) be.free(c);
    const shapes = outs.map((t) => t.shape);
    const accumulated = [...leaves.values()].some((a) => a);
    let results: Tensor[];
    if ('broken' in r || random || accumulated) {
      const why =
        'broken' in r
          ? r.broken
          : random
            ? 'fn draws random numbers or steps an optimizer, which this backend cannot replay (no captureLive)'
            : 'backward added into gradients the leaves had (zero them before a compiled call): not kept';
      if ('work' in r) r.work.release();
      if (!accumulated) refused.set(key, why); // with gradients zeroed, the next call traces again
      stats.refused.push(why);
      results = outs; // as an eager call returns them; the leaves keep the gradients backward left
    } else {
      if (recordings.size >= max) {
        const [oldest, old] = recordings.entries().next().value!;
        recordings.delete(oldest);
        old.work.release();
      }
      const list = [...leaves.keys()];
      const cleared = [...freed].filter((leaf) => !leaf.grad);
      const next = nextAfterReplay(shapes, list.length);
      recordings.set(key, { work: r.work, shapes, single, leaves: list, zeroed, cleared, next });
      stats.recording = describe(r.work);
      results = shapes.map((s, i) => new Tensor(be, r.work.copyOutput(i, s)));
      list.forEach((leaf, k) => {
        leaf.grad!.dispose();
        leaf.grad = null;
        setGrad(be, leaf, r.work.copyOutput(outs.length + k, leaf.shape));
      });
      for (const t of new Set(outs)) if (t.id >= firstId) t.dispose();
    }
    for (const t of copies) if (!results.includes(t)) t.dispose();
    return (single ? results[0] : results) as R;
  };

  return Object.assign(call, {
    stats,
    fn,
    release(): void {
      for (const r of recordings.values()) r.work.release();
      recordings.clear();
    },
  }) as CompiledFunction<A, R>;
}
