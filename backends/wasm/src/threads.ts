/**
 * Worker threads for the WASM backend: N−1 workers instantiate the threaded kernels on the same
 * shared linear memory and split a GEMM (by rows), a large elementwise op (by rows or element
 * ranges) or a large strided copy (by its outermost dim) with the calling thread. Jobs and completion go
 * through a small SharedArrayBuffer with Atomics (wait/notify), so a call blocks until every part is
 * done — which the JS main thread may do in Node, Deno and Bun, and in browsers only inside a Worker.
 * Node uses worker_threads; browsers use Web Workers (cross-origin isolated pages only).
 */
import { nodeBuiltin } from '@polyhal/hal';

const SLOT = 16;

/** Kernels a worker can run: the job's kind selects the export; its arguments fill the slot. */
export const JOB_KERNELS = ['gemm', 'binaryF32', 'binaryI32', 'unaryF32', 'negI32', 'copyNd'] as const;
export type JobKernel = (typeof JOB_KERNELS)[number];

// The worker: instantiate on the shared memory, then serve jobs until the generation goes negative.
const WORKER_SOURCE = `
const serve = (exports, ctrl, slot) => {
  const kernels = ${JSON.stringify(JOB_KERNELS)}.map((name) => exports[name]);
  let gen = 0;
  for (;;) {
    Atomics.wait(ctrl, 0, gen);
    gen = Atomics.load(ctrl, 0);
    if (gen < 0) return;
    const s = 4 + slot * ${SLOT};
    const kind = ctrl[s + 13];
    if (kind > 0) {
      // Every kernel takes at most 13 arguments; extra ones are ignored by the call.
      kernels[kind - 1](ctrl[s], ctrl[s + 1], ctrl[s + 2], ctrl[s + 3], ctrl[s + 4], ctrl[s + 5], ctrl[s + 6], ctrl[s + 7], ctrl[s + 8], ctrl[s + 9], ctrl[s + 10], ctrl[s + 11], ctrl[s + 12]);
    }
    Atomics.add(ctrl, 1, 1);
    Atomics.notify(ctrl, 1);
  }
};
const start = (data, reply) => {
  WebAssembly.instantiate(data.module, { env: { memory: data.memory, abort() { throw new Error('wasm abort'); } } }).then((inst) => {
    reply('ready');
    serve(inst.exports, new Int32Array(data.ctrl), data.slot);
  });
};
if (typeof require === 'function' && require('worker_threads').parentPort) {
  const { parentPort } = require('worker_threads');
  parentPort.once('message', (d) => start(d, (m) => parentPort.postMessage(m)));
} else {
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
  once(event: 'message' | 'error', fn: (v: never) => void): void;
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

  private constructor(private readonly workers: WorkerLike[], sab: SharedArrayBuffer) {
    this.ctrl = new Int32Array(sab);
  }

  /** Total participants of a job: the workers plus the calling thread. */
  get size(): number {
    return this.workers.length + 1;
  }

  static async create(module: WebAssembly.Module, memory: WebAssembly.Memory, threads: number): Promise<ThreadPool> {
    const sab = new SharedArrayBuffer(4 * (4 + threads * SLOT));
    const workers: WorkerLike[] = [];
    const g = globalThis as { process?: { versions?: { node?: string } }; Worker?: new (url: string) => WorkerLike & { onmessage: ((e: { data: unknown }) => void) | null } };
    for (let slot = 1; slot < threads; slot++) {
      await new Promise<void>((resolve, reject) => {
        const data = { module, memory, ctrl: sab, slot };
        if (g.process?.versions?.node) {
          nodeBuiltin<{ Worker: new (src: string, o: { eval: boolean }) => NodeWorker }>('worker_threads').then((wt) => {
            const { Worker } = wt!;
            const w = new Worker(WORKER_SOURCE, { eval: true });
            w.unref(); // idle workers never keep the process alive
            w.once('message', () => resolve());
            w.once('error', reject);
            w.postMessage(data);
            workers.push(w);
          }, reject);
        } else if (g.Worker) {
          const url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' }));
          const w = new g.Worker(url);
          w.onmessage = () => resolve();
          w.postMessage(data);
          workers.push(w);
        } else reject(new Error('no worker API in this runtime'));
      });
    }
    return new ThreadPool(workers, sab);
  }

  /**
   * Runs the parts of one job: part 0 on the calling thread via `local`, parts 1.. on the workers,
   * each as a call of `kernel` with the part's arguments (at most 13 numbers; for gemm [M, N, K, a,
   * sam, sak, b, sbk, sbn, c, scratch, rowStart, rowEnd]). Returns when every part is done.
   */
  run(kernel: JobKernel, parts: number[][], local: (part: number[]) => void): void {
    const ctrl = this.ctrl;
    const kind = JOB_KERNELS.indexOf(kernel) + 1;
    for (let w = 1; w < this.size; w++) {
      const s = 4 + w * SLOT;
      const part = parts[w];
      if (part) ctrl.set(part, s);
      ctrl[s + 13] = part ? kind : 0;
    }
    Atomics.store(ctrl, 1, 0);
    this.generation = (this.generation + 1) & 0x3fffffff;
    Atomics.store(ctrl, 0, this.generation);
    Atomics.notify(ctrl, 0);
    try {
      if (parts[0]) local(parts[0]);
    } finally {
      const expect = this.workers.length;
      for (let done = Atomics.load(ctrl, 1); done < expect; done = Atomics.load(ctrl, 1)) Atomics.wait(ctrl, 1, done);
    }
  }

  terminate(): void {
    Atomics.store(this.ctrl, 0, -1);
    Atomics.notify(this.ctrl, 0);
    for (const w of this.workers) void w.terminate();
  }
}
