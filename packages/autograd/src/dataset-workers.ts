/**
 * Dataset.mapParallel: a map run in worker threads (Node's worker_threads, a browser's Worker), order preserved.
 * The function travels as its source text (or as a module to import), samples and results by structured clone;
 * typed arrays in results are transferred, not copied.
 */
import { describeValue, InvalidArgumentError, isNodeLike, nodeBuiltin, PolyHalError } from '@polyhal/hal';
import type { UrlLike } from './dom-types.js';

/**
 * The map of mapParallel: a self-contained function (an arrow or function expression that uses only its argument
 * and globals: it is rebuilt in each worker from its source text, so closures and imports are not there), or
 * `{ module, export }`: a module URL (`new URL('./augment.js', import.meta.url)`) whose export (default
 * `default`) is the function, for code that needs imports.
 */
export type WorkerFn<T, U> = ((sample: T) => U | Promise<U>) | { module: string | UrlLike; export?: string };

/** Options of Dataset.mapParallel. */
export interface MapParallelOptions {
  /**
   * Worker threads (default: the CPU count less one, at least 1). 0 runs the map inline on this thread, as does
   * a runtime without workers.
   */
  workers?: number;
  /** Samples handed to each worker ahead of its results (default 2), so that no worker waits for the next one. */
  inFlight?: number;
}

/** An error in a mapParallel worker: `fn` threw on sample `index` (null: the worker failed to start or died). */
export class DatasetWorkerError extends PolyHalError {
  constructor(
    message: string,
    /** The index (in the pass) of the sample whose map failed, or null. */
    readonly index: number | null,
    /** The name of the original error in the worker (TypeError, ...). */
    readonly causeName: string,
  ) {
    super(message);
  }
}

let live = 0;

/** Number of mapParallel worker threads alive now (0 once every pass has ended: for tests and diagnostics). */
export function liveDatasetWorkers(): number {
  return live;
}

const WORKER_SOURCE = `
let fn;
let ready;
const bufs = (v, out, depth) => {
  if (depth > 4 || v === null || typeof v !== 'object') return out;
  if (ArrayBuffer.isView(v)) {
    if (!(typeof SharedArrayBuffer !== 'undefined' && v.buffer instanceof SharedArrayBuffer)) out.add(v.buffer);
  } else if (Array.isArray(v)) for (const e of v) bufs(e, out, depth + 1);
  else if (Object.getPrototypeOf(v) === Object.prototype) for (const e of Object.values(v)) bufs(e, out, depth + 1);
  return out;
};
const fail = (e) => ({ name: (e && e.name) || 'Error', message: String((e && e.message) || e) });
const onMessage = (d, post) => {
  if (d.type === 'init') {
    ready = (async () => {
      if (d.source !== undefined) fn = (0, eval)('(' + d.source + ')');
      else fn = (await import(d.url))[d.exportName];
      if (typeof fn !== 'function') throw new TypeError('not a function: ' + typeof fn);
    })();
    ready.then(() => post({ type: 'ready' }), (e) => post({ type: 'init-error', error: fail(e) }));
    return;
  }
  ready
    .then(() => fn(d.value))
    .then((v) => post({ type: 'result', i: d.i, value: v }, [...bufs(v, new Set(), 0)]))
    .catch((e) => post({ type: 'error', i: d.i, error: fail(e) }));
};
// Runs as a script or as a module (a Node worker's eval source follows the parent's --input-type).
(async () => {
  const p = typeof process !== 'undefined' && process.versions && process.versions.node ? process : null;
  if (p) {
    const id = 'node:worker_threads';
    const load = async () => (typeof require === 'function' ? require(id) : import(id));
    const wt = p.getBuiltinModule ? p.getBuiltinModule(id) : await load();
    if (wt.parentPort) {
      wt.parentPort.on('message', (d) => onMessage(d, (m, t) => wt.parentPort.postMessage(m, t)));
      return;
    }
  }
  self.onmessage = (e) => onMessage(e.data, (m, t) => self.postMessage(m, t));
})();
`;

type Reply =
  | { type: 'ready' }
  | { type: 'init-error'; error: { name: string; message: string } }
  | { type: 'result'; i: number; value: unknown }
  | { type: 'error'; i: number; error: { name: string; message: string } };

interface Slot {
  post(m: unknown): void;
  terminate(): Promise<void>;
  ref(busy: boolean): void;
  pending: Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>;
}

interface NodeWorker {
  postMessage(m: unknown): void;
  terminate(): Promise<number>;
  on(event: string, f: (v: never) => void): void;
  ref(): void;
  unref(): void;
}

/** A typed array view that does not span its buffer, copied (a clone would copy the whole buffer). */
function compact(v: unknown, depth = 0): unknown {
  if (depth > 4 || v === null || typeof v !== 'object') return v;
  if (ArrayBuffer.isView(v)) {
    const t = v as unknown as { byteLength: number; buffer: ArrayBufferLike; slice(): unknown };
    return t.byteLength === t.buffer.byteLength || typeof t.slice !== 'function' ? v : t.slice();
  }
  if (Array.isArray(v)) return v.map((e) => compact(e, depth + 1));
  if (Object.getPrototypeOf(v) === Object.prototype)
    return Object.fromEntries(Object.entries(v).map(([k, e]) => [k, compact(e, depth + 1)]));
  return v;
}

/** Starts one worker and resolves once it has built `fn`; DatasetWorkerError when it cannot. */
async function startWorker(init: Record<string, unknown>): Promise<Slot | null> {
  const pending: Slot['pending'] = new Map();
  let onReply: (r: Reply) => void = () => {};
  const died = (e: { message?: string }): void => {
    for (const [i, p] of pending) {
      const what = i < 0 ? 'failed to start' : `died on sample ${i}`; // -1: the start
      p.reject(
        new DatasetWorkerError(`Dataset.mapParallel: the worker ${what}: ${e?.message}`, i < 0 ? null : i, 'Error'),
      );
    }
    pending.clear();
  };
  let slot: Slot;
  if (isNodeLike()) {
    const wt = await nodeBuiltin<{ Worker: new (src: string, o: { eval: boolean }) => NodeWorker }>('worker_threads');
    if (!wt) return null;
    const w = new wt.Worker(WORKER_SOURCE, { eval: true });
    live++;
    let exited = false;
    let onExit = (): void => {};
    const exit = new Promise<void>((resolve) => {
      onExit = resolve;
    });
    w.on('message', (r: never) => onReply(r));
    w.on('error', died);
    w.on('exit', () => {
      exited = true;
      live--;
      died({ message: 'the worker exited' });
      onExit();
    });
    slot = {
      post: (m) => w.postMessage(m),
      // Until its 'exit' event, a timer keeps the event loop alive: the worker is unref'd when idle, and neither
      // it nor terminate()'s promise then holds the loop, so a program whose last await is this pass would exit
      // with an unsettled top-level await (code 13; seen about 1 run in 10). At most 5 s, then it is left to end.
      terminate: async () => {
        if (exited) return;
        let timer: ReturnType<typeof setTimeout> | undefined;
        const limit = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, 5000);
        });
        void w.terminate();
        await Promise.race([exit, limit]);
        clearTimeout(timer);
      },
      ref: (busy) => (busy ? w.ref() : w.unref()),
      pending,
    };
  } else {
    const g = globalThis as { Worker?: new (url: string) => Worker };
    if (!g.Worker) return null;
    const url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' }));
    const w = new g.Worker(url);
    live++;
    let ended = false;
    w.onmessage = (e) => onReply(e.data as Reply);
    w.onerror = (e) => died(e);
    slot = {
      post: (m) => w.postMessage(m),
      terminate: async () => {
        if (ended) return;
        ended = true;
        w.terminate();
        URL.revokeObjectURL(url);
        live--;
      },
      ref: () => {},
      pending,
    };
  }
  const ready = new Promise<void>((resolve, reject) => {
    onReply = (r) => {
      if (r.type === 'ready') resolve();
      else if (r.type === 'init-error')
        reject(
          new DatasetWorkerError(
            `Dataset.mapParallel: fn could not be built in a worker: ${r.error.name}: ${r.error.message} ` +
              '(pass a self-contained arrow or function expression, or { module })',
            null,
            r.error.name,
          ),
        );
    };
    pending.set(-1, { resolve: () => {}, reject });
  });
  slot.post(init);
  try {
    await ready;
  } catch (e) {
    await slot.terminate();
    throw e;
  }
  pending.delete(-1);
  onReply = (r) => {
    if (r.type !== 'result' && r.type !== 'error') return;
    const p = pending.get(r.i);
    if (!p) return;
    pending.delete(r.i);
    if (pending.size === 0) slot.ref(false);
    if (r.type === 'result') p.resolve(r.value);
    else
      p.reject(
        new DatasetWorkerError(
          `Dataset.mapParallel: fn threw on sample ${r.i}: ${r.error.name}: ${r.error.message}`,
          r.i,
          r.error.name,
        ),
      );
  };
  slot.ref(false);
  return slot;
}

function initOf<T, U>(fn: WorkerFn<T, U>): Record<string, unknown> {
  if (typeof fn === 'function') return { type: 'init', source: fn.toString() };
  if (fn !== null && typeof fn === 'object' && (typeof fn.module === 'string' || fn.module instanceof URL))
    return { type: 'init', url: String(fn.module), exportName: fn.export ?? 'default' };
  throw new InvalidArgumentError(
    `Dataset.mapParallel: fn must be a function or { module, export }, got ${describeValue(fn)}`,
  );
}

async function defaultWorkers(): Promise<number> {
  const os = await nodeBuiltin<{ availableParallelism?: () => number; cpus(): unknown[] }>('os');
  const nav = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator;
  const cores = os ? (os.availableParallelism?.() ?? os.cpus().length) : (nav?.hardwareConcurrency ?? 1);
  return Math.max(1, cores - 1);
}

/** The inline form: `fn` on this thread, its errors as DatasetWorkerError with the sample index. */
async function* inlineStream<T, U>(src: AsyncIterable<T>, fn: WorkerFn<T, U>): AsyncGenerator<U> {
  const f =
    typeof fn === 'function'
      ? fn
      : ((await import(/* webpackIgnore: true */ /* @vite-ignore */ String(fn.module)))[fn.export ?? 'default'] as (
          s: T,
        ) => U);
  let i = 0;
  for await (const s of src) {
    try {
      yield await f(s);
    } catch (e) {
      const err = e as { name?: string; message?: string };
      throw new DatasetWorkerError(
        `Dataset.mapParallel: fn threw on sample ${i}: ${err?.name}: ${err?.message}`,
        i,
        err?.name ?? 'Error',
      );
    }
    i++;
  }
}

/** mapParallel's pass: samples dealt to the least busy worker, results yielded in order; workers end with the pass. */
export async function* mapParallelStream<T, U>(
  src: AsyncIterable<T>,
  fn: WorkerFn<T, U>,
  options: MapParallelOptions,
): AsyncGenerator<U> {
  const init = initOf(fn);
  const { workers = await defaultWorkers(), inFlight = 2 } = options ?? {};
  for (const [k, v, lo] of [
    ['workers', workers, 0],
    ['inFlight', inFlight, 1],
  ] as const)
    if (!Number.isInteger(v) || v < lo)
      throw new InvalidArgumentError(`Dataset.mapParallel: ${k} must be an integer ≥ ${lo}, got ${describeValue(v)}`);
  const hasWorkers = isNodeLike() || typeof (globalThis as { Worker?: unknown }).Worker === 'function';
  if (workers === 0 || !hasWorkers) {
    yield* inlineStream(src, fn);
    return;
  }
  const slots: Slot[] = [];
  const it = src[Symbol.asyncIterator]();
  let srcDone = false;
  try {
    const started = await Promise.allSettled(Array.from({ length: workers }, () => startWorker(init)));
    for (const s of started) if (s.status === 'fulfilled' && s.value) slots.push(s.value);
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    if (slots.length === 0) {
      yield* inlineStream({ [Symbol.asyncIterator]: () => it }, fn);
      return;
    }
    const queue: Promise<unknown>[] = [];
    let i = 0;
    const pump = async (): Promise<void> => {
      while (!srcDone && queue.length < slots.length * inFlight) {
        const r = await it.next();
        if (r.done) {
          srcDone = true;
          return;
        }
        const slot = slots.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
        const index = i++;
        const p = new Promise((resolve, reject) => slot.pending.set(index, { resolve, reject }));
        p.catch(() => {}); // awaited in order below; an early stop leaves it unobserved
        if (slot.pending.size === 1) slot.ref(true);
        try {
          slot.post({ type: 'item', i: index, value: compact(r.value) });
        } catch (e) {
          const err = e as { name?: string; message?: string };
          const msg = `Dataset.mapParallel: sample ${index} cannot be sent to a worker: ${err?.name}: ${err?.message}`;
          throw new DatasetWorkerError(msg, index, err?.name ?? 'Error');
        }
        queue.push(p);
      }
    };
    await pump();
    while (queue.length > 0) {
      const v = (await queue.shift()!) as U;
      yield v;
      await pump();
    }
  } finally {
    await Promise.all(slots.map((s) => s.terminate()));
    if (!srcDone) await it.return?.();
  }
}
