/**
 * Typed errors of the ONNX graph runtime (InferenceSession). Each is a PolyHalError subclass, so
 * `catch (e) { if (e instanceof PolyHalError) ... }` catches them with the HAL's own errors.
 */
import { DTypeError, InvalidArgumentError, PolyHalError } from '@polyhal/hal';

/** One node the session cannot run: its op type, its name ('' when the model gives none) and why. */
export interface UnsupportedNode {
  /** The node's op type (`Conv`, `LSTM`, ...). */
  op: string;
  /** The node's name, or `#i` (its index in its graph) when the model gives it none. */
  node: string;
  /** 'op' (no lowering), 'dtype', 'attribute', 'input' (a value of an input the lowering cannot take), 'graph'. */
  kind: string;
  /** Why, in words (e.g. "dtype float64", "attribute auto_pad = 'VALID' is not supported"). */
  reason: string;
  /** The If/Loop/Scan nodes (outermost first) whose subgraph holds the node; empty at the top level. */
  path: readonly string[];
}

const describeNode = (u: UnsupportedNode): string => `${[...u.path, u.node].join(' > ')} (${u.op}): ${u.reason}`;

/**
 * The model holds nodes the session cannot run: every one is listed in `nodes` (op, node name, reason).
 * Thrown by `InferenceSession.create` before anything is computed, and by `run` for a node whose
 * lowering depends on run-time shapes or values it cannot reproduce.
 */
export class OnnxUnsupportedError extends PolyHalError {
  constructor(
    /** Every node the session cannot run, in graph order (subgraphs' nodes with their path). */
    readonly nodes: readonly UnsupportedNode[],
  ) {
    const shown = nodes.slice(0, 20).map((u) => `  ${describeNode(u)}`);
    if (nodes.length > 20) shown.push(`  ... and ${nodes.length - 20} more`);
    const count = `${nodes.length} node${nodes.length === 1 ? '' : 's'}`;
    super(`the model has ${count} this runtime cannot run:\n${shown.join('\n')}`);
  }
}

/**
 * A malformed graph: a value used but never defined, a value defined twice, a cycle, an input or output
 * that is not a tensor. Thrown by `InferenceSession.create`.
 */
export class OnnxGraphError extends PolyHalError {}

/** What is wrong with a feed. */
export type FeedProblem = 'unknown' | 'missing' | 'dtype' | 'shape' | 'data';

/**
 * A bad feed given to `InferenceSession.run`: a name the model has no input for, a missing input, a
 * dtype or shape other than the model declares, data that does not fill its dims, a disposed tensor.
 * Thrown before anything is uploaded.
 */
export class OnnxFeedError extends InvalidArgumentError {
  constructor(
    /** The feed's name (an input of the model, or the unknown name given). */
    readonly input: string,
    /** What is wrong with it. */
    readonly problem: FeedProblem,
    message: string,
  ) {
    super(message);
  }
}

/**
 * An int64 value outside int32's range where the HAL would hold it as int32 (the HAL has no int64: int64
 * tensors run as int32 on a device). Never wrapped: the value that does not fit is named.
 */
export class OnnxInt64RangeError extends DTypeError {
  constructor(
    /** The ONNX value (input, initializer or node output) holding it. */
    readonly value: string,
    /** The first value that does not fit. */
    readonly offending: bigint | number,
  ) {
    super(
      `'${value}': int64 value ${String(offending)} is outside int32's range [-2147483648, 2147483647]; ` +
        'the HAL runs int64 tensors as int32 and never wraps a value',
    );
  }
}

/**
 * A node failed while running: the op, the node's name and the error its lowering or the backend
 * raised (`cause`, a PolyHalError such as ShapeMismatchError or OutOfMemoryError where the HAL threw one).
 */
export class OnnxNodeError extends PolyHalError {
  constructor(
    /** The node's op type. */
    readonly op: string,
    /** The node's name, or `#i` (its index in its graph). */
    readonly node: string,
    /** The If/Loop/Scan nodes (outermost first) whose subgraph holds it; empty at the top level. */
    readonly path: readonly string[],
    /** The error the lowering or the backend threw. */
    override readonly cause: unknown,
  ) {
    const why = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    super(`node ${[...path, node].join(' > ')} (${op}) failed: ${why}`);
  }
}
