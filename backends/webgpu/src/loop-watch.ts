/**
 * Warns once when ops are encoded for a long time without the JavaScript event loop turning.
 *
 * The memory of finished GPU work (command buffers, staging memory, the native objects behind
 * released JS wrappers) is reclaimed by the WebGPU runtime only when the event loop runs: Dawn in
 * Node.js processes its events from a task it schedules on the loop, and browsers return memory to
 * the page the same way. A loop that enqueues ops and never yields therefore grows native memory
 * (measured with Dawn on lavapipe: about 65 MiB per 20,000 small ops, flat at about 190 MiB when the
 * same loop awaits anything every 1,000 ops), and no library can bound it from inside a synchronous
 * op call: JavaScript cannot wait for the GPU without returning to the loop, and the `webgpu`
 * package exposes no synchronous tick. What a library can do is say so: after NO_YIELD_WARN_OPS ops
 * within one turn of the loop, the backend emits one warning (a Node.js process warning of type
 * 'PolyHALWarning', code POLYHAL_WEBGPU_NO_YIELD; console.warn elsewhere) telling the caller to
 * await a read or `synchronize()` now and then.
 *
 * A replayed recording (capture.ts: `compile`, ONNX sessions) counts its kernels and copies too: its command
 * buffers are reclaimed the same way. Measured on lavapipe (`benches/probes/webgpu-no-yield.ts`, the main job's MLP
 * step, 3,000 steps): RSS grew 35 MiB per 1,000 eager steps that never await and 23 MiB per 1,000 compiled ones
 * (2 submissions a step), against 1.0 and 0.02 MiB when the loop awaits `synchronize()` every 100 steps.
 */

/** Ops within one turn of the event loop after which the warning is given. */
export const NO_YIELD_WARN_OPS = 20_000;

/** The `code` of the process warning given then (filter it with process.on('warning')). */
export const NO_YIELD_WARNING_CODE = 'POLYHAL_WEBGPU_NO_YIELD';

type Warn = (message: string) => void;

interface ProcessLike {
  emitWarning?: (message: string, options: { type: string; code: string }) => void;
}

function defaultWarn(message: string): void {
  const proc = (globalThis as { process?: ProcessLike }).process;
  if (typeof proc?.emitWarning === 'function')
    proc.emitWarning(message, { type: 'PolyHALWarning', code: NO_YIELD_WARNING_CODE });
  else console.warn(`PolyHALWarning [${NO_YIELD_WARNING_CODE}]: ${message}`);
}

export class LoopWatch {
  private ops = 0;
  private scheduled = false;
  private warned = false;
  private readonly reset = (): void => {
    this.ops = 0;
    this.scheduled = false;
  };

  constructor(
    private readonly backendName: string,
    private readonly limit = NO_YIELD_WARN_OPS,
    private readonly warn: Warn = defaultWarn,
  ) {}

  /** Called once per encoded op: a counter and, once per turn of the loop, one timer. */
  op(): void {
    this.ops_(1);
  }

  /** `n` ops at once: a replayed recording's kernels and copies (replay-plan.ts). */
  opsDone(n: number): void {
    this.ops_(n);
  }

  private ops_(n: number): void {
    if (!this.scheduled) {
      this.scheduled = true;
      // A timer (not a microtask) fires only after the loop has turned; unref'd so it never keeps
      // a Node.js process alive.
      const t = setTimeout(this.reset, 0) as { unref?: () => void };
      t.unref?.();
    }
    const before = this.ops;
    this.ops += n;
    if (before < this.limit && this.ops >= this.limit && !this.warned) {
      this.warned = true;
      this.warn(
        `${this.backendName}: ${this.limit} ops were encoded without the event loop turning. The ` +
          `WebGPU runtime frees the memory of finished GPU work only when the loop runs, so memory ` +
          `grows until it does: await a read or backend.synchronize() now and then (e.g. once per ` +
          `training step). This warning is given once per backend.`,
      );
    }
  }
}
