/**
 * Argument validation of the public HAL entry points, done once in BaseBackend before anything is
 * allocated or any kernel runs. Every check is O(rank) or O(1) — never per element — so hot paths
 * (small elementwise ops in a training loop) pay a few comparisons. Failures throw the typed errors
 * of errors.ts with a message that names the op, the argument and the shapes involved.
 */
import type { AdamStepParams, SgdStepParams } from '../backend.js';
import type { DType, HostArray } from '../core/dtype.js';
import { DTypeError, describeValue, InvalidArgumentError, ShapeMismatchError } from '../core/errors.js';
import type { DeviceBuffer, NDArray } from '../core/ndarray.js';
import { BINARY_OPS, REDUCE_OPS, UNARY_OPS } from '../ops/index.js';
import { normalizeAxis, sizeOf } from '../core/shape.js';

// describeValue is declared in core/errors.ts (core's philox needs it); the contract re-exports it.
export { describeValue };

/** UNARY_OPS as a set of strings: whether a name given at run time is a unary op of the table. */
export const UNARY_OP_SET: ReadonlySet<string> = new Set(UNARY_OPS);
/** BINARY_OPS as a set of strings: whether a name given at run time is a binary op of the table. */
export const BINARY_OP_SET: ReadonlySet<string> = new Set(BINARY_OPS);
/** REDUCE_OPS as a set of strings: whether a name given at run time is a reduction of the table. */
export const REDUCE_OP_SET: ReadonlySet<string> = new Set(REDUCE_OPS);

const shapeOf = (x: NDArray): string => `[${x.shape.join(', ')}]`;

/**
 * Checks the structure of a view (not its buffer's liveness): shape and strides are integer arrays
 * of one length, the offset an integer, the dtype the buffer's, and every element it addresses lies
 * inside the buffer. A view built by the HAL's helpers always passes; a hand-made one that would
 * read outside its buffer throws InvalidArgumentError (on wasm it would read other buffers' memory).
 */
export function checkView(x: NDArray, op: string, arg: string): void {
  const { shape, strides, offset, buffer } = x;
  if (
    !Array.isArray(shape) ||
    !Array.isArray(strides) ||
    shape.length !== strides.length ||
    !Number.isInteger(offset)
  ) {
    throw new InvalidArgumentError(
      `${op}: ${arg} is not a valid NDArray view (shape ${describeValue(shape)}, strides ` +
        `${describeValue(strides)}, offset ${describeValue(offset)})`,
    );
  }
  if (x.dtype !== buffer.dtype)
    throw new DTypeError(`${op}: ${arg} says dtype ${describeValue(x.dtype)} but its buffer holds ${buffer.dtype}`);
  let lo = offset;
  let hi = offset;
  let empty = false;
  for (let i = 0; i < shape.length; i++) {
    const d = shape[i] as number;
    const s = strides[i] as number;
    if (!Number.isInteger(d) || d < 0 || !Number.isInteger(s)) {
      throw new InvalidArgumentError(
        `${op}: ${arg} has an invalid shape [${shape.join(', ')}] or strides [${strides.join(', ')}]`,
      );
    }
    if (d === 0) empty = true;
    else if (s < 0) lo += (d - 1) * s;
    else hi += (d - 1) * s;
  }
  if (!empty && (lo < 0 || hi >= buffer.size)) {
    throw new InvalidArgumentError(
      `${op}: ${arg} (shape ${shapeOf(x)}, strides [${strides.join(', ')}], offset ${offset}) ` +
        `reaches elements ${lo}..${hi}, outside its buffer of ${buffer.size}`,
    );
  }
}

/** Throws InvalidArgumentError unless `v` is an array of integers (a shape, a permutation, steps). */
export function checkIntList(v: unknown, op: string, arg: string, x?: NDArray): asserts v is readonly number[] {
  if (!Array.isArray(v) || !v.every((d) => Number.isInteger(d))) {
    throw new InvalidArgumentError(
      `${op}: ${arg} must be an array of integers${x ? ` (x has shape ${shapeOf(x)})` : ''}, got ${describeValue(v)}`,
    );
  }
}

/** Throws InvalidArgumentError unless `v` has one `[a, b]` integer pair per dimension of `x` (pad, shrink). */
export function checkPairs(
  v: unknown,
  op: string,
  arg: string,
  x: NDArray,
  what: string,
): asserts v is readonly (readonly [number, number])[] {
  const ok =
    Array.isArray(v) &&
    v.length === x.shape.length &&
    v.every((p) => Array.isArray(p) && p.length === 2 && Number.isInteger(p[0]) && Number.isInteger(p[1]));
  if (!ok)
    throw new InvalidArgumentError(
      `${op}: ${arg} must be one ${what} pair of integers per dimension of x ${shapeOf(x)}, got ${describeValue(v)}`,
    );
}

/**
 * An op's options argument: undefined (→ {}) or a plain object whose own keys are all in `keys`; else
 * InvalidArgumentError naming the op and the key (or what was passed instead of an object).
 */
export function checkOptionsObject(options: unknown, op: string, keys: readonly string[]): Record<string, unknown> {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw new InvalidArgumentError(`${op}: options must be an object, got ${describeValue(options)}`);
  for (const k of Object.keys(options))
    if (!keys.includes(k)) throw new InvalidArgumentError(`${op}: unknown option '${k}' (options: ${keys.join(', ')})`);
  return options as Record<string, unknown>;
}

/** Throws InvalidArgumentError unless `v` is a number (NaN and ±Inf are numbers: they follow ops.ts). */
export function checkNumber(v: unknown, op: string, arg: string): asserts v is number {
  if (typeof v !== 'number') throw new InvalidArgumentError(`${op}: ${arg} must be a number, got ${describeValue(v)}`);
}

/** Throws InvalidArgumentError naming `op` and `arg` unless `v` is a boolean. */
export function checkBoolean(v: unknown, op: string, arg: string): asserts v is boolean {
  if (typeof v !== 'boolean')
    throw new InvalidArgumentError(`${op}: ${arg} must be a boolean, got ${describeValue(v)}`);
}

/** Reduction axes: undefined (all), an integer, or an array of integers; ranges are checked by normalizeAxes. */
export function checkAxesArg(axes: unknown, op: string, x: NDArray): void {
  if (axes === undefined || Number.isInteger(axes)) return;
  if (Array.isArray(axes) && axes.every((a) => Number.isInteger(a))) return;
  throw new InvalidArgumentError(
    `${op}: axes must be an integer, an array of integers, or undefined (every axis) for x of shape ` +
      `${shapeOf(x)}, got ${describeValue(axes)}`,
  );
}

/**
 * Host data for `fromArray`: an Array, a typed array (not BigInt64Array/BigUint64Array), or another
 * array-like object with an integer `length`. Elements are converted as `Float32Array.from` does.
 */
export function checkHostData(data: unknown, op: string, dtype: DType | undefined): void {
  if (data instanceof BigInt64Array || data instanceof BigUint64Array) {
    throw new DTypeError(
      `${op}: data is a ${data.constructor.name}; pass numbers (an Array, Float32Array or Int32Array)`,
    );
  }
  const len = (data as { length?: unknown } | null)?.length;
  if (data === null || typeof data !== 'object' || !Number.isInteger(len) || (len as number) < 0) {
    throw new InvalidArgumentError(
      `${op}: data must be an array of numbers or a typed array${dtype ? ` (dtype ${dtype})` : ''}, ` +
        `got ${describeValue(data)}`,
    );
  }
}

/**
 * Host data for `write`: exactly the dtype's host array — a Float32Array (float32, and float16 with
 * float16 values: others are rounded), an Int32Array (int32), a Uint8Array (bool, uint8), an Int8Array
 * (int8) or a Float64Array (float64).
 */
export function checkWriteData(data: unknown, op: string, bufferDType: DType): asserts data is HostArray {
  const want =
    bufferDType === 'float32' || bufferDType === 'float16'
      ? Float32Array
      : bufferDType === 'int32'
        ? Int32Array
        : bufferDType === 'int8'
          ? Int8Array
          : bufferDType === 'float64'
            ? Float64Array
            : Uint8Array;
  if (data instanceof want) return;
  if (Array.isArray(data) || ArrayBuffer.isView(data)) {
    const got =
      data instanceof Float32Array
        ? 'float32 (Float32Array)'
        : data instanceof Int32Array
          ? 'int32 (Int32Array)'
          : data instanceof Uint8Array
            ? 'bool (Uint8Array)'
            : data instanceof Int8Array
              ? 'int8 (Int8Array)'
              : data instanceof Float64Array
                ? 'float64 (Float64Array)'
                : describeValue(data);
    throw new DTypeError(`${op}: data is ${got} but the buffer is ${bufferDType}; pass a ${want.name}`);
  }
  throw new InvalidArgumentError(
    `${op}: data must be a ${want.name} for a ${bufferDType} buffer, got ${describeValue(data)}`,
  );
}

function field(p: object, op: string, name: string): number {
  const v = (p as Record<string, unknown>)[name];
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    throw new InvalidArgumentError(`${op}: ${name} must be a finite number, got ${describeValue(v)}`);
  }
  return v;
}

function range(ok: boolean, op: string, name: string, v: number, domain: string): void {
  if (!ok) throw new InvalidArgumentError(`${op}: ${name} must be ${domain}, got ${v}`);
}

/**
 * Adam/AdamW hyper-parameters, with PyTorch's domains: lr ≥ 0, 0 ≤ beta1, beta2 < 1, eps ≥ 0,
 * weightDecay ≥ 0, all finite, and step an integer ≥ 1 (bias correction divides by 1 − β^step,
 * which is 0 at step 0). Outside them every backend would write NaN or Inf into the parameters.
 */
export function checkAdamParams(p: AdamStepParams, op = 'adamStep'): void {
  if (p === null || typeof p !== 'object')
    throw new InvalidArgumentError(
      `${op}: hyper-parameters must be an object { lr, beta1, beta2, eps, weightDecay, step }, got ${describeValue(p)}`,
    );
  const lr = field(p, op, 'lr');
  const b1 = field(p, op, 'beta1');
  const b2 = field(p, op, 'beta2');
  const eps = field(p, op, 'eps');
  const wd = field(p, op, 'weightDecay');
  const step = field(p, op, 'step');
  range(lr >= 0, op, 'lr', lr, '≥ 0');
  range(b1 >= 0 && b1 < 1, op, 'beta1', b1, 'in [0, 1)');
  range(b2 >= 0 && b2 < 1, op, 'beta2', b2, 'in [0, 1)');
  range(eps >= 0, op, 'eps', eps, '≥ 0');
  range(wd >= 0, op, 'weightDecay', wd, '≥ 0');
  range(Number.isInteger(step) && step >= 1, op, 'step', step, 'an integer ≥ 1 (the first step is 1)');
}

/** SGD hyper-parameters (PyTorch's domains): lr ≥ 0, momentum ≥ 0, weightDecay ≥ 0, all finite. */
export function checkSgdParams(p: SgdStepParams, op = 'sgdStep'): void {
  if (p === null || typeof p !== 'object')
    throw new InvalidArgumentError(
      `${op}: hyper-parameters must be an object { lr, momentum, weightDecay }, got ${describeValue(p)}`,
    );
  const lr = field(p, op, 'lr');
  const mom = field(p, op, 'momentum');
  const wd = field(p, op, 'weightDecay');
  range(lr >= 0, op, 'lr', lr, '≥ 0');
  range(mom >= 0, op, 'momentum', mom, '≥ 0');
  range(wd >= 0, op, 'weightDecay', wd, '≥ 0');
}

/**
 * The buffers of an in-place optimizer step (adamStep: param, m, v; sgdStep: param, velocity), one
 * after another: `liveBuffer` (the backend's checkBuffer) checks that it is a live buffer of the
 * backend, then it must be float32 like the gradient (DTypeError), hold the gradient's element count
 * (ShapeMismatchError) and be distinct from the other buffers and the gradient's (InvalidArgumentError).
 * The gradient itself is checked by the caller first. Used by BaseBackend.checkStepOperands.
 */
export function checkStepBuffers(
  op: string,
  param: DeviceBuffer,
  grad: NDArray,
  state: readonly DeviceBuffer[],
  liveBuffer: (buffer: DeviceBuffer, arg: string | undefined) => void,
): void {
  const names = op === 'adamStep' ? ['param', 'm', 'v'] : ['param', 'velocity'];
  const all = [param, ...state];
  all.forEach((b, i) => {
    liveBuffer(b, names[i]);
    if (b.dtype !== 'float32' || grad.dtype !== 'float32')
      throw new DTypeError(`${op} takes float32 parameters, gradients and state`);
    if (b.size !== sizeOf(grad.shape))
      throw new ShapeMismatchError(
        `${op}: ${names[i]} holds ${b.size} elements, which does not match the gradient's shape ` +
          `[${grad.shape.join(', ')}]`,
        [grad.shape],
      );
    if (all.indexOf(b) !== i || grad.buffer === b)
      throw new InvalidArgumentError(
        `${op}: ${names[i]} is the same buffer as another operand; ${names.join(', ')} and grad must be distinct`,
      );
  });
}

/** The widths of `pad` (already checked as [before, after] pairs): non-negative integers, else InvalidArgumentError. */
export function checkPadWidths(pads: readonly (readonly [number, number])[]): void {
  for (const [b, a] of pads) {
    if (!Number.isInteger(b) || !Number.isInteger(a) || b < 0 || a < 0)
      throw new InvalidArgumentError(`pad widths must be non-negative integers, got [${b}, ${a}]`);
  }
}

/**
 * The velocity of sgdStep (hyper-parameters already checked): null or undefined means no velocity,
 * which momentum > 0 forbids (InvalidArgumentError). Returns the buffer or null.
 */
export function sgdVelocity(velocity: DeviceBuffer | null | undefined, p: SgdStepParams): DeviceBuffer | null {
  const vel = velocity ?? null;
  if (vel === null && p.momentum > 0)
    throw new InvalidArgumentError(
      `sgdStep: momentum ${p.momentum} needs a velocity buffer (pass null only without momentum)`,
    );
  return vel;
}

/** An axis argument of `x`: an integer (InvalidArgumentError) in [-rank, rank) (normalizeAxis). */
export function checkAxis(axis: unknown, op: string, x: NDArray): void {
  if (!Number.isInteger(axis))
    throw new InvalidArgumentError(`${op}: axis must be an integer, got ${describeValue(axis)}`);
  normalizeAxis(axis as number, x.shape.length);
}

/**
 * Softmax cross-entropy operands already checked as live arrays: a boolean `withGrad`
 * (InvalidArgumentError), logits and labels of one shape [N, C] (ShapeMismatchError), both float32
 * (DTypeError). Used by BaseBackend.checkSoftmaxCrossEntropy.
 */
export function checkSoftmaxCrossEntropyOperands(logits: NDArray, labels: NDArray, withGrad: unknown): void {
  checkBoolean(withGrad, 'softmaxCrossEntropy', 'withGrad');
  if (
    logits.shape.length !== 2 ||
    labels.shape.length !== 2 ||
    logits.shape[0] !== labels.shape[0] ||
    logits.shape[1] !== labels.shape[1]
  ) {
    throw new ShapeMismatchError(
      `softmaxCrossEntropy expects logits and labels of the same shape [N, C], got ` +
        `[${logits.shape.join(', ')}] and [${labels.shape.join(', ')}]`,
      [logits.shape, labels.shape],
    );
  }
  if (logits.dtype !== 'float32' || labels.dtype !== 'float32') {
    throw new DTypeError(
      `softmaxCrossEntropy takes float32 logits and labels, got ${logits.dtype} and ${labels.dtype}`,
    );
  }
}

/**
 * The matrix dimensions of matmul operands a [...A, M, K] and b [...B, K, N]: both of rank ≥ 2 with
 * the same K, else ShapeMismatchError naming both shapes. Returns [M, K, N]; the batch dims A and B
 * are broadcast by the caller (BaseBackend.matmul).
 */
export function matmulDims(a: NDArray, b: NDArray): [number, number, number] {
  if (a.shape.length < 2 || b.shape.length < 2) {
    throw new ShapeMismatchError(
      `matmul needs operands of rank ≥ 2, got [${a.shape.join(', ')}] and [${b.shape.join(', ')}]`,
      [a.shape, b.shape],
    );
  }
  const [m, k] = a.shape.slice(-2) as [number, number];
  const [k2, n] = b.shape.slice(-2) as [number, number];
  if (k !== k2) {
    throw new ShapeMismatchError(
      `matmul: inner dimensions differ: a is [${a.shape.join(', ')}] (K=${k}), b is [${b.shape.join(', ')}] (K=${k2})`,
      [a.shape, b.shape],
    );
  }
  return [m, k, n];
}
