/**
 * Worker threads for the WASM backend: N−1 workers instantiate the threaded kernels on the same
 * shared linear memory and split a GEMM (by rows), a large elementwise op (by rows or element
 * ranges) or a large strided copy (by its outermost dim) with the calling thread. Jobs and completion go
 * through a small SharedArrayBuffer with Atomics (wait/notify; each side polls briefly before it sleeps), so a
 * call blocks until every part is done — which the JS main thread may do in Node, Deno and Bun, and in browsers
 * only inside a Worker.
 * Node uses worker_threads; browsers use Web Workers (cross-origin isolated pages only).
 *
 * Failures never hang the calling thread: a worker catches a trap (or any error) of its kernel,
 * records it in its control slot and still signals completion; a worker whose serving loop ends for
 * any other reason (an error outside the kernel, `process.exit`) marks itself dead and, if it held a
 * part, signals too. The calling thread waits in bounded slices, checks every pending worker's
 * liveness flag between them, and throws WasmKernelError naming the kernel, the worker and the cause.
 * A worker found dead (by its flag or by its `exit`/`error` event) gets no further parts: they run on
 * the calling thread, so later ops stay correct. Only a worker killed from outside in the middle of a
 * part (`terminate()` by other code, a browser killing it) cannot be noticed by a blocked thread.
 *
 * Control words (Int32Array): [0] generation (−1: stop), [1] completion counter (a wake-up signal
 * only), then one slot of SLOT words per participant: 13 kernel arguments, the kernel's index, the
 * part's state, the liveness flag, the error message's length and up to MSG_CHARS UTF-16 code units.
 * Arguments are i32 words: pointers at or above 2^31 are stored as negative words with the same bits,
 * and a kernel's i32 parameter (ToInt32) receives exactly those bits (usize on the wasm side).
 */
import { PolyHalError } from '@polyhal/hal';
import { isNodeLike, nodeBuiltin } from '@polyhal/hal/internal';

/** A wasm kernel that trapped (or a worker that failed or died) while running a part of an op. */
export class WasmKernelError extends PolyHalError {
  constructor(
    /** The kernel's export name in the module. */
    readonly kernel: string,
    /** The participant: 0 is the calling thread, 1… the workers. */
    readonly thread: number,
    /** The trap's or the worker's message. */
    readonly reason: string,
  ) {
    super(`wasm: kernel ${kernel} failed on ${thread === 0 ? 'the calling thread' : `worker ${thread}`}: ${reason}`);
  }
}

/** Control words 2 and 3: the next queued part to claim, and how many are queued. */
const NEXT = 2;
const COUNT = 3;
/** Parts a queued job may hold (13 argument words each, after the slots). */
export const QUEUE_PARTS = 64;
/** A slot's KIND above this: a queued job of kernel KIND − QUEUED; words 0 and 1 the thread's argument. */
const QUEUED = 64;
const KIND = 13;
const STATE = 14;
const ALIVE = 15;
const MSG_LEN = 16;
const MSG = 17;
const MSG_CHARS = 111;
const SLOT = MSG + MSG_CHARS; // 128 words
/** Part states. */
const IDLE = 0,
  RUNNING = 1,
  DONE = 2,
  FAILED = 3;
/** How long the calling thread blocks before it checks the workers' liveness again (ms). */
const WAIT_SLICE_MS = 50;
/**
 * How long a worker polls for its next part before it sleeps in Atomics.wait, at most (ms): a model's ops come back
 * to back, and a sleeping worker takes tens of microseconds to wake (a round trip of two tiny parts: 10-13 µs
 * sleeping, 1.5-2 µs polling). The poll adapts (adaptSpin): where the other thread shares this one's core (a busy
 * machine), polling only delays it, and the polls stop finding anything.
 */
const WORKER_SPIN_MS = 0.05;
/** How long the calling thread polls for the workers' parts to end before it sleeps, at most (ms). */
const CALLER_SPIN_MS = 0.02;
/** The shortest poll (ms): enough for a part that ends right away to be seen without sleeping. */
const MIN_SPIN_MS = 0.002;

/**
 * The next poll length: doubled (up to `max`) after a poll that found its event, halved (down to MIN_SPIN_MS)
 * after one that timed out.
 */
export function adaptSpin(spin: number, found: boolean, max: number): number {
  return found ? Math.min(max, spin * 2) : Math.max(MIN_SPIN_MS, spin / 2);
}

/** How long a worker may take to start (instantiate the kernels) before the pool gives up (ms). */
const START_TIMEOUT_MS = 30_000;

/** Kernels a worker can run: the job's kind selects the export; its arguments fill the slot. */
export const JOB_KERNELS = [
  'gemm',
  'binaryF32',
  'binaryI32',
  'unaryF32',
  'unaryI32',
  'copyNd',
  'philoxF32',
  'compareF32',
  'where32',
  'gemmI16',
  'convGemm',
  'depthwiseConv',
  'gemmCols',
  'convTranspose',
  'resizeNearest',
  'softmaxF32',
  'convDirect',
  'convPackA',
  'fusedF32',
  'gemmBatched',
] as const;
export type JobKernel = (typeof JOB_KERNELS)[number];

// The worker: instantiate on the shared memory, then serve jobs until the generation goes negative.
const WORKER_SOURCE = `
const SLOT = ${SLOT}, KIND = ${KIND}, STATE = ${STATE}, ALIVE = ${ALIVE},
MSG_LEN = ${MSG_LEN}, MSG = ${MSG}, MSG_CHARS = ${MSG_CHARS};
const RUNNING = ${RUNNING}, DONE = ${DONE}, FAILED = ${FAILED};
const SPIN_MS = ${WORKER_SPIN_MS}, MIN_SPIN_MS = ${MIN_SPIN_MS};
const NEXT = ${NEXT}, COUNT = ${COUNT}, QUEUED = ${QUEUED};
let ctrl = null, s = 0, busy = false, queue = 0;
const record = (e) => {
  const m = String((e && e.message) || e).slice(0, MSG_CHARS);
  for (let i = 0; i < m.length; i++) ctrl[s + MSG + i] = m.charCodeAt(i);
  ctrl[s + MSG_LEN] = m.length;
};
const signal = (state) => {
  busy = false;
  Atomics.store(ctrl, s + STATE, state);
  Atomics.add(ctrl, 1, 1);
  Atomics.notify(ctrl, 1);
};
// The serving loop has ended (an error outside a kernel, process.exit, stop): never hang the caller.
const died = (e) => {
  if (!ctrl || Atomics.load(ctrl, s + ALIVE) === 0) return;
  Atomics.store(ctrl, s + ALIVE, 0);
  if (busy) {
    record(e || new Error('the worker exited'));
    signal(FAILED);
  } else Atomics.notify(ctrl, 1);
};
const serve = (exports) => {
  const kernels = ${JSON.stringify(JOB_KERNELS)}.map((name) => exports[name]);
  let gen = 0, spin = SPIN_MS;
  for (;;) {
    // poll a while for the next job, then sleep until one comes; the poll adapts as the pool's adaptSpin
    const until = performance.now() + spin;
    let found = true;
    for (let i = 1; Atomics.load(ctrl, 0) === gen; i++) {
      if ((i & 63) === 0 && performance.now() > until) {
        Atomics.wait(ctrl, 0, gen);
        found = false;
        break;
      }
    }
    spin = found ? Math.min(SPIN_MS, spin * 2) : Math.max(MIN_SPIN_MS, spin / 2);
    gen = Atomics.load(ctrl, 0);
    if (gen < 0) return;
    if (Atomics.load(ctrl, s + STATE) !== RUNNING) continue; // no part for this worker in this job
    busy = true;
    let state = DONE;
    try {
      const kind = ctrl[s + KIND];
      if (kind > QUEUED) {
        // a queued job: claim parts until none is left; argument word ctrl[s] (if ≥ 0) becomes ctrl[s + 1]
        const kernel = kernels[kind - QUEUED - 1], at = ctrl[s], mine = ctrl[s + 1], count = ctrl[COUNT];
        const a = new Array(13);
        for (let i = Atomics.add(ctrl, NEXT, 1); i < count; i = Atomics.add(ctrl, NEXT, 1)) {
          for (let j = 0; j < 13; j++) a[j] = ctrl[queue + i * 13 + j];
          if (at >= 0) a[at] = mine;
          kernel(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12]);
        }
      } else
        // Every kernel takes at most 13 arguments; extra ones are ignored by the call.
        kernels[kind - 1](ctrl[s], ctrl[s + 1], ctrl[s + 2], ctrl[s + 3], ctrl[s + 4], ctrl[s + 5], ctrl[s + 6],
          ctrl[s + 7], ctrl[s + 8], ctrl[s + 9], ctrl[s + 10], ctrl[s + 11], ctrl[s + 12]);
    } catch (e) {
      record(e);
      state = FAILED;
    }
    signal(state);
  }
};
// Synchronous instantiation where allowed (workers): WebAssembly.instantiate queues behind other modules'
// background compilation (seconds beside onnxruntime-web's module in one process).
const instantiate = (module, imports) => {
  try {
    return Promise.resolve(new WebAssembly.Instance(module, imports));
  } catch {
    return WebAssembly.instantiate(module, imports);
  }
};
const start = (data, reply) => {
  instantiate(data.module, { env: { memory: data.memory, abort() { throw new Error('wasm abort'); } } })
  .then((inst) => {
    ctrl = new Int32Array(data.ctrl);
    s = 4 + data.slot * SLOT;
    queue = data.queue;
    Atomics.store(ctrl, s + ALIVE, 1);
    reply('ready');
    let error;
    try {
      serve(inst.exports);
    } catch (e) {
      error = e;
      throw e;
    } finally {
      died(error);
    }
  }, (e) => reply('error: ' + ((e && e.message) || e)));
};
if (typeof require === 'function' && require('worker_threads').parentPort) {
  const { parentPort } = require('worker_threads');
  process.on('exit', () => died(new Error('the worker exited')));
  parentPort.once('message', (d) => start(d, (m) => parentPort.postMessage(m)));
} else {
  self.addEventListener('error', (e) => died(e.error || new Error(e.message)));
  self.onmessage = (e) => start(e.data, (m) => self.postMessage(m));
}
`;

interface WorkerLike {
  postMessage(m: unknown): void;
  terminate(): unknown;
}

/** The part of Node's worker_threads.Worker used here. */
interface NodeWorker extends WorkerLike {
  unref(): void;
  on(event: 'message' | 'error' | 'exit', fn: (v: never) => void): void;
  once(event: 'message', fn: (v: never) => void): void;
}

/** The part of a Web Worker used here. */
interface WebWorker extends WorkerLike {
  onmessage: ((e: { data: unknown }) => void) | null;
  onerror: ((e: { message?: string }) => void) | null;
}

/** Whether this thread may block in Atomics.wait (false on a browser's main thread). */
export function canBlock(): boolean {
  if (typeof SharedArrayBuffer === 'undefined') return false;
  try {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 1, 0);
    return true;
  } catch {
    return false;
  }
}

export class ThreadPool {
  private readonly ctrl: Int32Array;
  private generation = 0;
  /** The calling thread's current poll for the parts' end (ms; adaptSpin). */
  private spin = CALLER_SPIN_MS;
  /** Workers known to be dead (by their liveness flag or their exit/error event), by slot. */
  private readonly dead: boolean[];

  private constructor(
    private readonly workers: WorkerLike[],
    sab: SharedArrayBuffer,
    dead: boolean[],
  ) {
    this.ctrl = new Int32Array(sab);
    this.dead = dead;
  }

  /** Total participants of a job: the workers plus the calling thread. */
  get size(): number {
    return this.workers.length + 1;
  }

  /** Workers that are still serving (dead ones' parts run on the calling thread). */
  get liveWorkers(): number {
    return this.workers.filter((_, i) => !this.isDead(i + 1)).length;
  }

  static async create(module: WebAssembly.Module, memory: WebAssembly.Memory, threads: number): Promise<ThreadPool> {
    const sab = new SharedArrayBuffer(4 * (4 + threads * SLOT + QUEUE_PARTS * 13));
    const workers: WorkerLike[] = [];
    const dead: boolean[] = new Array<boolean>(threads).fill(false);
    const g = globalThis as { Worker?: new (url: string) => WebWorker };
    try {
      for (let slot = 1; slot < threads; slot++) {
        await new Promise<void>((resolve, reject) => {
          const data = { module, memory, ctrl: sab, slot, queue: 4 + threads * SLOT };
          const timer = setTimeout(
            () => reject(new Error(`worker ${slot} did not start within ${START_TIMEOUT_MS / 1000} s`)),
            START_TIMEOUT_MS,
          );
          const settle = (m: unknown): void => {
            clearTimeout(timer);
            if (m === 'ready') resolve();
            else reject(new Error(`worker ${slot} failed to start: ${String(m)}`));
          };
          const failed = (e: { message?: string }): void => {
            dead[slot] = true;
            settle(e?.message ?? 'error');
          };
          if (isNodeLike()) {
            nodeBuiltin<{ Worker: new (src: string, o: { eval: boolean }) => NodeWorker }>('worker_threads').then(
              (wt) => {
                const { Worker } = wt!;
                const w = new Worker(WORKER_SOURCE, { eval: true });
                w.unref(); // idle workers never keep the process alive
                w.once('message', settle); // once: a lasting 'message' listener would keep the process alive
                w.on('error', failed); // also after start: a listener keeps a worker's error from crashing the process
                w.on('exit', () => (dead[slot] = true));
                w.postMessage(data);
                workers.push(w);
              },
              reject,
            );
          } else if (g.Worker) {
            const url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' }));
            const w = new g.Worker(url);
            w.onmessage = (e) => settle(e.data);
            w.onerror = failed;
            w.postMessage(data);
            workers.push(w);
          } else {
            clearTimeout(timer);
            reject(new Error('no worker API in this runtime'));
          }
        });
      }
    } catch (e) {
      for (const w of workers) void w.terminate();
      throw e;
    }
    return new ThreadPool(workers, sab, dead);
  }

  private isDead(w: number): boolean {
    if (!this.dead[w] && Atomics.load(this.ctrl, 4 + w * SLOT + ALIVE) === 0) this.dead[w] = true;
    return this.dead[w]!;
  }

  /**
   * Runs the parts of one job: part 0 on the calling thread via `local`, parts 1.. on the workers,
   * each as a call of `kernel` with the part's arguments (at most 13 numbers; for gemm [M, N, K, a,
   * sam, sak, b, sbk, sbn, c, scratch, rowStart, rowEnd]); the parts of dead workers also run on the
   * calling thread, through `local`. Returns when every part is done; throws WasmKernelError (after
   * every part has ended) when any part trapped or its worker failed or died.
   */
  run(kernel: JobKernel, parts: number[][], local: (part: number[]) => void): void {
    const ctrl = this.ctrl;
    const kind = JOB_KERNELS.indexOf(kernel) + 1;
    const sent: number[] = [];
    const orphans: number[][] = [];
    for (let w = 1; w < this.size; w++) {
      const s = 4 + w * SLOT;
      const part = parts[w];
      if (part && this.isDead(w)) orphans.push(part);
      else if (part) {
        ctrl.set(part, s);
        ctrl[s + KIND] = kind;
        ctrl[s + MSG_LEN] = 0;
        Atomics.store(ctrl, s + STATE, RUNNING);
        sent.push(w);
      } else Atomics.store(ctrl, s + STATE, IDLE);
    }
    this.wake(sent);
    const failures: WasmKernelError[] = [];
    try {
      for (const part of parts[0] ? [parts[0], ...orphans] : orphans) local(part);
    } catch (e) {
      failures.push(new WasmKernelError(kernel, 0, e instanceof Error ? e.message : String(e)));
    } finally {
      this.wait(sent);
    }
    this.collect(kernel, sent, failures);
  }

  /**
   * Runs the parts of one job (at most QUEUE_PARTS, each at most 13 numbers) as a queue that the calling thread
   * and every live worker claim from until it is empty, so that a thread the system holds back takes fewer parts
   * (split ops otherwise wait for their slowest part). `perThread`, when given, replaces argument `index` of
   * each part with the claiming thread's own value (values[0] the calling thread's, values[w] worker w's): a
   * scratch block per thread; only threads with a value take parts. Returns when every part is done; throws
   * WasmKernelError as `run`.
   */
  runQueued(
    kernel: JobKernel,
    parts: number[][],
    local: (part: number[]) => void,
    perThread?: { index: number; values: readonly number[] },
  ): void {
    if (parts.length > QUEUE_PARTS) throw new RangeError(`runQueued: ${parts.length} parts, at most ${QUEUE_PARTS}`);
    const ctrl = this.ctrl;
    const queue = 4 + this.size * SLOT;
    parts.forEach((p, i) => ctrl.set(p, queue + i * 13));
    ctrl[COUNT] = parts.length;
    Atomics.store(ctrl, NEXT, 0);
    const kind = QUEUED + JOB_KERNELS.indexOf(kernel) + 1;
    const sent: number[] = [];
    // the workers that have a value of their own (all, without perThread), at most one per part beyond the first
    const threads = perThread ? Math.min(this.size, perThread.values.length) : this.size;
    for (let w = 1; w < this.size; w++) {
      const s = 4 + w * SLOT;
      if (w >= threads || this.isDead(w) || sent.length + 1 >= parts.length) {
        Atomics.store(ctrl, s + STATE, IDLE);
        continue;
      }
      ctrl[s] = perThread ? perThread.index : -1;
      ctrl[s + 1] = perThread ? perThread.values[w]! : 0;
      ctrl[s + KIND] = kind;
      ctrl[s + MSG_LEN] = 0;
      Atomics.store(ctrl, s + STATE, RUNNING);
      sent.push(w);
    }
    this.wake(sent);
    const failures: WasmKernelError[] = [];
    try {
      for (let i = Atomics.add(ctrl, NEXT, 1); i < parts.length; i = Atomics.add(ctrl, NEXT, 1)) {
        const part = [...parts[i]!];
        if (perThread) part[perThread.index] = perThread.values[0]!;
        local(part);
      }
    } catch (e) {
      failures.push(new WasmKernelError(kernel, 0, e instanceof Error ? e.message : String(e)));
      Atomics.store(ctrl, NEXT, parts.length); // nothing more to claim
    } finally {
      this.wait(sent);
    }
    this.collect(kernel, sent, failures);
  }

  /** Throws the first failure: the calling thread's, or a part's that a worker recorded. */
  /** Starts the workers `sent` (their slots filled): a new generation, and a notify for those asleep. */
  private wake(sent: readonly number[]): void {
    if (sent.length === 0) return;
    this.generation = (this.generation + 1) & 0x3fffffff;
    Atomics.store(this.ctrl, 0, this.generation);
    Atomics.notify(this.ctrl, 0);
  }

  private collect(kernel: JobKernel, sent: readonly number[], failures: WasmKernelError[]): void {
    const ctrl = this.ctrl;
    for (const w of sent) {
      const s = 4 + w * SLOT;
      if (Atomics.load(ctrl, s + STATE) === DONE) continue;
      const len = ctrl[s + MSG_LEN]!;
      const reason =
        len > 0
          ? String.fromCharCode(...ctrl.subarray(s + MSG, s + MSG + Math.min(len, MSG_CHARS)))
          : 'the worker exited';
      failures.push(new WasmKernelError(kernel, w, reason));
    }
    if (failures.length > 0) throw failures[0]!;
  }

  /** Blocks until every part sent to a worker has ended, checking liveness between bounded waits. */
  private wait(sent: readonly number[]): void {
    const ctrl = this.ctrl;
    const running = (w: number): boolean => Atomics.load(ctrl, 4 + w * SLOT + STATE) === RUNNING;
    const until = performance.now() + this.spin;
    let found = true;
    for (let i = 1; sent.some(running); i++)
      if ((i & 63) === 0 && performance.now() > until) {
        found = false;
        break;
      }
    this.spin = adaptSpin(this.spin, found, CALLER_SPIN_MS);
    for (;;) {
      const seen = Atomics.load(ctrl, 1);
      let pending = false;
      for (const w of sent) {
        const s = 4 + w * SLOT;
        if (Atomics.load(ctrl, s + STATE) !== RUNNING) continue;
        if (this.isDead(w)) {
          // Died holding the part without signalling (its flag says so): give up on the part.
          Atomics.store(ctrl, s + STATE, FAILED);
          continue;
        }
        pending = true;
      }
      if (!pending) return;
      Atomics.wait(ctrl, 1, seen, WAIT_SLICE_MS);
    }
  }

  terminate(): void {
    Atomics.store(this.ctrl, 0, -1);
    Atomics.notify(this.ctrl, 0);
    for (const w of this.workers) void w.terminate();
  }
}
