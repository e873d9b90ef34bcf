/**
 * `profile(backend)`: where the time of a stretch of work (a training step) goes, op by op. It wraps any
 * backend in a Proxy that times each call of a public method — every op of the table (OP_METHODS) and
 * the storage methods (allocate, free, read, write, fromArray, ...) — between `start()` and `stop()`;
 * `stop()` returns a report: per method its calls, total milliseconds and share of the stretch, sorted
 * by total, plus the time spent outside backend calls (autograd and JavaScript).
 *
 * Nested calls are attributed to the outermost public call: a composite such as softmax that calls
 * max, exp and sum through the backend counts once, with all its time; the inner calls are counted in
 * a separate `innerCalls` column and get no time of their own. A call that returns a promise (read,
 * synchronize) is timed until it settles, and calls made while it is pending count as inside it.
 *
 * Asynchronous backends (no `readSync`: webgpu) queue work and run it later, so the time of a call is
 * not the time of its work. There the profiler records the stretch (each outermost call with its
 * arguments; frees are held back so that every input stays alive) and, in `stop()`, replays each
 * recorded call alone between two `synchronize()` calls; a call's time is that interval less one
 * synchronize round trip measured with nothing queued (`syncOverheadMs`). The replay repeats the
 * stretch's work, in-place updates included (an optimizer step applies twice), so profile a stretch
 * whose results are then discarded. `{ replay: true }` forces this mode on any backend.
 *
 * `{ groupByInputShape: true }` (PyTorch's `key_averages(group_by_input_shape=True)`) splits each method's row by
 * the shapes and dtypes of its array arguments, e.g. `matmul [12608,384]f32 [384,1536]f32`: which call of a
 * method is the slow one.
 */
import { type ComputeBackend, type DeviceBuffer, type NDArray, OP_METHODS } from '@polyhal/hal';

/** The public methods a profile times: every op of the table and the storage methods. */
export const PROFILED_METHODS: ReadonlySet<string> = new Set([
  ...OP_METHODS,
  'allocate',
  'deallocate',
  'free',
  'write',
  'copyToDevice',
  'read',
  'copyFromDevice',
  'readHandle',
  'readSync',
  'fromArray',
  'full',
  'assign',
  'synchronize',
]);

const FREES = new Set(['free', 'deallocate']);

/** One backend method's line of a ProfileReport. */
export interface ProfileRow {
  /** The backend method (under `groupByInputShape`, followed by its array arguments' [shape]dtype). */
  op: string;
  /** Outermost calls (the time below is theirs). */
  calls: number;
  /** Calls made inside another public call (their time is in the outer call's row). */
  innerCalls: number;
  /** Total milliseconds of the outermost calls. */
  ms: number;
  /** ms / totalMs. */
  share: number;
}

/** What Profiler.stop() returns: where the time of the profiled stretch went, per backend method. */
export interface ProfileReport {
  /** The backend's registry name. */
  backend: string;
  /** True when the calls were replayed one by one between synchronize() calls (asynchronous backends). */
  replayed: boolean;
  /** Σ rows' ms + outsideMs: the profiled stretch (replayed: as if every call ran alone). */
  totalMs: number;
  /** Wall time from start() to stop() (replayed: of the recording, before the replay). */
  wallMs: number;
  /** Time of the stretch outside any backend call (autograd, JavaScript). */
  outsideMs: number;
  /** Replayed: the synchronize() round trip with nothing queued, subtracted from each replayed call. */
  syncOverheadMs: number;
  /** Sorted by ms, largest first (then by calls); rows with only inner calls come last. */
  rows: ProfileRow[];
  /** A text table: op, calls, inner calls, total ms, share; the outside time and the total close it. */
  table(): string;
}

/** A backend wrapped by `profile`, with start/stop around the stretch to time. */
export interface Profiler {
  /** The wrapped backend: build and run everything through it (outside start()/stop() it only forwards). */
  readonly backend: ComputeBackend;
  /** Whether stop() replays the recorded calls (asynchronous backends, or `{ replay: true }`). */
  readonly replays: boolean;
  /** Waits for queued work, then starts timing. */
  start(): Promise<void>;
  /** Stops timing (replays the recording where `replays`) and returns the report. */
  stop(): Promise<ProfileReport>;
}

/** Options of `profile`. */
export interface ProfileOptions {
  /** Replay each call alone between synchronize() calls (default: when the backend has no readSync). */
  replay?: boolean;
  /** One row per method and argument shapes/dtypes (default false: one row per method). */
  groupByInputShape?: boolean;
}

interface Recorded {
  method: string;
  /** The row the call's time goes to (the method, or the method with its argument shapes). */
  key: string;
  args: unknown[];
}

type Fn = (...a: unknown[]) => unknown;
const isPromise = (v: unknown): v is Promise<unknown> =>
  typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
const bufferOf = (v: unknown): DeviceBuffer =>
  'buffer' in (v as object) ? (v as NDArray).buffer : (v as DeviceBuffer);
const isArray = (v: unknown): v is NDArray =>
  typeof v === 'object' && v !== null && 'shape' in v && 'buffer' in v && 'dtype' in v;
const DTYPE_SHORT: Record<string, string> = { float32: 'f32', float16: 'f16', int32: 'i32', bool: 'b', int8: 'i8' };

/** A call's row key grouped by input shape: the method, then each array argument's [shape]dtype. */
function shapeKey(method: string, args: readonly unknown[]): string {
  const parts: string[] = [method];
  const add = (v: unknown) => {
    if (isArray(v)) parts.push(`[${v.shape.join(',')}]${DTYPE_SHORT[v.dtype] ?? v.dtype}`);
  };
  for (const a of args) (Array.isArray(a) ? a : [a]).forEach(add);
  return parts.join(' ');
}

/** Wraps `be` so that the public calls between start() and stop() are timed; see the module comment. */
export function profile(be: ComputeBackend, o: ProfileOptions = {}): Profiler {
  const replays = o.replay ?? be.readSync === undefined;
  const stats = new Map<string, { calls: number; innerCalls: number; ms: number }>();
  const stat = (op: string) => {
    let s = stats.get(op);
    if (!s) stats.set(op, (s = { calls: 0, innerCalls: 0, ms: 0 }));
    return s;
  };
  let active = false;
  let depth = 0;
  let t0 = 0;
  let inCalls = 0; // ms inside outermost calls (replay: of the recording)
  const log: Recorded[] = []; // replay: the outermost calls in order
  const heldFrees: Recorded[] = []; // replay: frees made inside other calls, done after the replay

  const proxy = new Proxy(be, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      const fn = v as Fn;
      if (!active || typeof prop !== 'string' || !PROFILED_METHODS.has(prop)) return fn.bind(receiver);
      return (...args: unknown[]): unknown => {
        const key = o.groupByInputShape ? shapeKey(prop, args) : prop;
        const s = stat(key);
        if (depth > 0) {
          s.innerCalls++;
          if (replays && FREES.has(prop)) {
            heldFrees.push({ method: prop, key, args });
            return undefined;
          }
          depth++;
          try {
            return fn.apply(receiver, args);
          } finally {
            depth--;
          }
        }
        s.calls++;
        if (replays) {
          log.push({ method: prop, key, args });
          if (FREES.has(prop)) return undefined; // done in its place in the replay
        }
        const t = performance.now();
        const done = () => {
          const ms = performance.now() - t;
          inCalls += ms;
          if (!replays) s.ms += ms;
          depth--;
        };
        depth++;
        let out: unknown;
        try {
          out = fn.apply(receiver, args);
        } catch (e) {
          done();
          throw e;
        }
        if (!isPromise(out)) {
          done();
          return out;
        }
        return out.then(
          (r) => {
            done();
            return r;
          },
          (e: unknown) => {
            done();
            throw e;
          },
        );
      };
    },
  });

  /** Replays the log on `be`, each call alone; returns the synchronize round trip that was subtracted. */
  async function replay(): Promise<number> {
    await be.synchronize();
    const trips: number[] = [];
    for (let i = 0; i < 7; i++) {
      const t = performance.now();
      await be.synchronize();
      trips.push(performance.now() - t);
    }
    const trip = trips.sort((a, b) => a - b)[3]!;
    // A replayed call runs through this proxy: the buffers it allocates and does not free are freed after it.
    let fresh = new Set<DeviceBuffer>();
    const counting = new Proxy(be, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (typeof v !== 'function') return v;
        if (prop === 'allocate')
          return (...a: unknown[]) => {
            const b = (v as Fn).apply(receiver, a) as DeviceBuffer;
            fresh.add(b);
            return b;
          };
        if (prop === 'deallocate')
          return (b: DeviceBuffer) => {
            fresh.delete(b);
            (v as Fn).call(receiver, b);
          };
        return (v as Fn).bind(receiver);
      },
    });
    const freed = new Set<number>();
    for (const c of log) {
      fresh = new Set();
      const t = performance.now();
      if (FREES.has(c.method)) {
        const id = bufferOf(c.args[0]).id;
        if (!freed.has(id)) (be[c.method as 'free'] as Fn).apply(be, c.args);
        freed.add(id);
      } else {
        const out = (Reflect.get(be, c.method, counting) as Fn).apply(counting, c.args);
        if (isPromise(out)) await out;
      }
      await be.synchronize();
      stat(c.key).ms += Math.max(0, performance.now() - t - trip);
      for (const b of fresh) be.deallocate(b);
    }
    for (const c of heldFrees) {
      const id = bufferOf(c.args[0]).id;
      if (!freed.has(id)) (be[c.method as 'free'] as Fn).apply(be, c.args);
      freed.add(id);
    }
    return trip;
  }

  return {
    backend: proxy,
    replays,
    async start() {
      await be.synchronize();
      stats.clear();
      log.length = 0;
      heldFrees.length = 0;
      inCalls = 0;
      depth = 0;
      active = true;
      t0 = performance.now();
    },
    async stop() {
      const wallMs = performance.now() - t0;
      active = false;
      const outsideMs = Math.max(0, wallMs - inCalls);
      const syncOverheadMs = replays ? await replay() : 0;
      const opsMs = [...stats.values()].reduce((p, s) => p + s.ms, 0);
      const totalMs = opsMs + outsideMs;
      const rows = [...stats.entries()]
        .map(([op, s]) => ({ op, ...s, share: totalMs > 0 ? s.ms / totalMs : 0 }))
        .sort((a, b) => Number(b.calls > 0) - Number(a.calls > 0) || b.ms - a.ms || b.calls - a.calls);
      return {
        backend: be.name,
        replayed: replays,
        totalMs,
        wallMs,
        outsideMs,
        syncOverheadMs,
        rows,
        table: () => profileTable(rows, outsideMs, totalMs),
      };
    },
  };
}

function profileTable(rows: ProfileRow[], outsideMs: number, totalMs: number): string {
  const outside = '(outside backend calls)';
  const w = Math.max(outside.length, ...rows.map((r) => r.op.length));
  const pct = (ms: number) => `${totalMs > 0 ? ((100 * ms) / totalMs).toFixed(1) : '0.0'}%`;
  const line = (op: string, calls: string, inner: string, ms: string, share: string) =>
    `${op.padEnd(w)} ${calls.padStart(7)} ${inner.padStart(11)} ${ms.padStart(10)} ${share.padStart(7)}`;
  const sum = (k: 'calls' | 'innerCalls') => String(rows.reduce((p, r) => p + r[k], 0));
  return [
    line('op', 'calls', 'inner calls', 'total ms', 'share'),
    ...rows.map((r) =>
      r.calls > 0
        ? line(r.op, String(r.calls), String(r.innerCalls), r.ms.toFixed(3), pct(r.ms))
        : line(r.op, '0', String(r.innerCalls), '-', '-'),
    ),
    line(outside, '', '', outsideMs.toFixed(3), pct(outsideMs)),
    line('total', sum('calls'), sum('innerCalls'), totalMs.toFixed(3), pct(totalMs)),
  ].join('\n');
}
