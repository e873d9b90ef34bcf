/**
 * Work capture: record the device work of a stretch of calls once, replay it later without the JavaScript
 * that produced it (the idea of CUDA Graphs: `cudaStreamBeginCapture` … `cudaGraphLaunch`). A backend
 * that encodes work (webgpu) offers it as the optional `beginCapture` / `endCapture` / `abortCapture`
 * methods of ComputeBackend; a backend that computes synchronously (cpu, wasm) has nothing to record.
 *
 * Between `beginCapture(inputs)` and `endCapture(outputs)` the backend runs every call as usual (the
 * results of that run are real) and records the kernels, copies and uploads they encode, with the device
 * buffers they touch. `replay(data)` then writes new contents into the input buffers and encodes the
 * recorded work again in one submission: no validation, allocation or per-op JavaScript. The buffers the
 * recording touches stay reserved for it (a buffer freed during or after the capture is kept, not handed
 * out again) until `release()`.
 *
 * Host numbers that change from call to call (an optimizer's learning rate and step count, a random generator's
 * stream position) are not baked in where the caller says so: the calls made inside `captureLive(live, run)`
 * take them from `live` at every replay (see LiveValues), and work that must run once, not at every replay (an
 * optimizer's state created at its first step), runs inside `uncaptured(run)`.
 *
 * What a caller must guarantee (the ONNX session does): the captured calls are a pure function of the
 * inputs' contents (shapes, dtypes and other host values are fixed: they are the caller's cache key); no read
 * happens inside the capture (a read makes `endCapture` report the capture broken: the work depended on
 * a value the host saw); nothing else runs on the backend during the capture (its work would be recorded
 * too); and buffers that the recording reads and that outlive it (weights) are not written between replays.
 */
import type { HostArray } from './core/dtype.js';
import type { DeviceBuffer, NDArray } from './core/ndarray.js';

/** Recorded device work, replayable with new input contents (ComputeBackend.endCapture). */
export interface CapturedWork {
  /** Kernels one replay dispatches. */
  readonly kernels: number;
  /** Buffer-to-buffer copies one replay encodes (uploads made during the capture replay as copies). */
  readonly copies: number;
  /**
   * Host callbacks one replay runs before it encodes the work: the `advance` of each `captureLive` section (an
   * optimizer step, a random draw), in the order they were recorded (absent: none).
   */
  readonly callbacks?: number;
  /** Kernels whose params one replay recomputes from LiveValues (an optimizer's update, a random fill; absent: 0). */
  readonly liveKernels?: number;
  /**
   * Bytes of device memory the recording holds for itself: its intermediates, inputs, outputs and staged
   * params and uploads (not the buffers of arrays still live elsewhere, such as weights).
   */
  readonly reservedBytes: number;
  /**
   * Runs the recorded sections' `advance` callbacks (in their order; one that throws stops the replay before any
   * write), recomputes the params of live kernels, writes `data[i]` into input buffer i and encodes the recorded
   * work: host data as `write` takes it (a
   * Float32Array for float32 and float16, an Int32Array for int32, ..., of the buffer's length), or an array of
   * this backend (a whole contiguous buffer of that length and dtype), copied on the device. Throws
   * ShapeMismatchError or DTypeError for data that does not fit (before anything is written); UseAfterFreeError
   * after release(), or when an array the work reads and does not write (a weight, a constant) has been freed
   * since the capture. `options` (ReplayOptions) names the outputs the caller copies and reads next, so that the
   * backend can encode those copies with the replay's own work (ShapeMismatchError for an index that is not an
   * output).
   */
  replay(data: readonly (HostArray | NDArray)[], options?: ReplayOptions): void;
  /** The contents of output buffer `i` after the last replay (or the capture), as `read` would return them. */
  read(i: number): Promise<HostArray>;
  /**
   * A new array (the caller's, to free) holding output `i` after the last replay, copied on the device, with
   * `shape` (default: flat). Later replays do not change it.
   */
  copyOutput(i: number, shape?: readonly number[]): NDArray;
  /** Gives the reserved buffers back to the backend. Replaying or reading after it throws UseAfterFreeError. */
  release(): void;
}

/**
 * Options of `CapturedWork.replay`: what the caller does with the outputs next, so that the backend can do it with
 * the replay's own work (webgpu: one submission where a compiled step and its loss read took two). Only a hint of
 * speed: results are the same with or without.
 */
export interface ReplayOptions {
  /**
   * Outputs whose copies (`copyOutput(i)`) the caller takes after this replay and before the next: the backend may
   * make them with the replay's work. A copy made and not taken is freed at the next replay or at release().
   */
  readonly copyOutputs?: readonly number[];
  /**
   * Outputs the caller reads after this replay, with `read(i)` or by reading the array `copyOutput(i)` returned
   * (a loss, a classifier's scores): the backend may copy them toward the host with the replay's work.
   */
  readonly readOutputs?: readonly number[];
}

/** What `endCapture` returns: the recorded work, or why the capture cannot be replayed. */
export type CaptureResult =
  | {
      /** The recording. */
      readonly work: CapturedWork;
    }
  | {
      /** Why the capture is not replayable (e.g. "a read of buffer #12 during the capture"). */
      readonly broken: string;
    };

/**
 * Host numbers that the calls of a `captureLive` section take and that change from replay to replay. At every
 * replay `advance` runs first (before anything is encoded), then the backend reads `optimizer()` and `stream()`
 * and recomputes the params of the section's kernels from them, exactly as the eager call would have computed them.
 */
export interface LiveValues {
  /**
   * Advances the host state as an eager call of the section would (an optimizer's step count, a generator's
   * offset). It may throw (a typed error: a parameter was disposed); the replay then encodes nothing.
   */
  readonly advance?: () => void;
  /**
   * The learning rate and step count that the section's `adamStep` and `sgdStep` calls take at this replay (in
   * place of their params' `lr` and `step`; the other hyper-parameters are fixed).
   */
  readonly optimizer?: () => { readonly lr: number; readonly step: number };
  /**
   * The Philox seed and offset of the section's first random call at this replay: each random kernel of the
   * section reads the stream of `seed` at its captured position shifted by (offset − the offset at capture).
   */
  readonly stream?: () => { readonly seed: number; readonly offset: number };
}

/** The optional capture methods of a backend (see this module's comment). */
export interface CaptureMethods {
  /**
   * Starts recording (pending work is submitted first). `inputs`: the buffers whose contents `replay` writes;
   * they must be live now. InvalidArgumentError if a capture is already running.
   */
  beginCapture?(inputs: readonly DeviceBuffer[]): void;
  /**
   * Stops recording. `outputs`: the buffers `CapturedWork.read` reads, live now. InvalidArgumentError if no
   * capture is running.
   */
  endCapture?(outputs: readonly DeviceBuffer[]): CaptureResult;
  /** Stops recording and drops what was recorded (after a failed run); nothing happens if none is running. */
  abortCapture?(): void;
  /**
   * Runs `run` and returns its result. During a capture the work `run` encodes takes its learning rate, step count
   * and random stream from `live` at every replay, and the replay calls `live.advance` first (LiveValues); without
   * a capture it is `run()`. Sections nest: the kernels of an inner one take its values, and every section's
   * `advance` runs at a replay, in the order the sections began.
   */
  captureLive?<T>(live: LiveValues, run: () => T): T;
  /**
   * Runs `run` and returns its result. During a capture its work is done now and not recorded (a replay does not
   * repeat it): one-time work such as the zeros of an optimizer's new state. Without a capture it is `run()`.
   */
  uncaptured?<T>(run: () => T): T;
}
