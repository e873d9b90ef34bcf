/**
 * The shape of the ONNX op table: how one ONNX node is lowered to HAL calls, or why it cannot be.
 * A mapping is strict: `plan` reads every attribute it honours through `Attrs` (an attribute the plan
 * did not read makes the test "not expressible: attribute"), names the dtypes it accepts, and throws
 * `NotExpressible` for any value it cannot reproduce exactly as ONNX defines it.
 */
import type { ComputeBackend, NDArray } from '@polyhal/hal';
import type { OnnxAttribute, OnnxNode, OnnxTensor } from './proto.js';

/**
 * Why a test is not expressible: a missing op, a dtype, an attribute (or its value), an input form, a
 * multi-node graph.
 */
export type ReasonKind = 'op' | 'dtype' | 'attribute' | 'input' | 'graph';

/** Thrown by a plan (or by the runner) when a node cannot be run faithfully on the HAL. */
export class NotExpressible extends Error {
  constructor(
    /** What is missing. */
    readonly kind: ReasonKind,
    /** Why, in words (e.g. "dtype float64"). */
    readonly reason: string,
  ) {
    super(`not expressible (${kind}): ${reason}`);
    this.name = 'NotExpressible';
  }
}

/** A node's attributes; records which ones a plan read, so unread ones are never silently ignored. */
export class Attrs {
  private readonly byName = new Map<string, OnnxAttribute>();
  /** The names a plan asked for (present or not): `unread()` is what remains. */
  readonly read = new Set<string>();
  constructor(
    private readonly op: string,
    attributes: readonly OnnxAttribute[],
  ) {
    for (const a of attributes) this.byName.set(a.name, a);
  }
  /** Whether the node has attribute `name` (marks it read). */
  has(name: string): boolean {
    this.read.add(name);
    return this.byName.has(name);
  }
  private get(name: string, type: number, what: string): unknown {
    this.read.add(name);
    const a = this.byName.get(name);
    if (!a) return undefined;
    if (a.type !== type)
      throw new NotExpressible('attribute', `${this.op}: attribute '${name}' is not ${what} (type ${a.type})`);
    return a.value;
  }
  /** INT attribute `name`, or `fallback` when absent; NotExpressible('attribute') when of another type. */
  int(name: string, fallback: number): number {
    return (this.get(name, 2, 'an int') as number | undefined) ?? fallback;
  }
  /** FLOAT attribute `name`, or `fallback` when absent; NotExpressible('attribute') when of another type. */
  float(name: string, fallback: number): number {
    return (this.get(name, 1, 'a float') as number | undefined) ?? fallback;
  }
  /** STRING attribute `name`, or `fallback` when absent; NotExpressible('attribute') when of another type. */
  string(name: string, fallback: string): string {
    return (this.get(name, 3, 'a string') as string | undefined) ?? fallback;
  }
  /** INTS attribute `name`, or undefined when absent; NotExpressible('attribute') when of another type. */
  ints(name: string): number[] | undefined {
    return this.get(name, 7, 'a list of ints') as number[] | undefined;
  }
  /** FLOATS attribute `name`, or undefined when absent; NotExpressible('attribute') when of another type. */
  floats(name: string): number[] | undefined {
    return this.get(name, 6, 'a list of floats') as number[] | undefined;
  }
  /** STRINGS attribute `name`, or undefined when absent; NotExpressible('attribute') when of another type. */
  strings(name: string): string[] | undefined {
    return this.get(name, 8, 'a list of strings') as string[] | undefined;
  }
  /** TENSOR attribute `name`, or undefined when absent; NotExpressible('attribute') when of another type. */
  tensor(name: string): OnnxTensor | undefined {
    return this.get(name, 4, 'a tensor') as OnnxTensor | undefined;
  }
  /** Attribute names present on the node that no plan read. */
  unread(): string[] {
    return [...this.byName.keys()].filter((k) => !this.read.has(k));
  }
}

/** What a plan sees: the node, its opset, attributes, dtypes and the values of its host inputs. */
export interface NodeContext {
  /** The node being planned. */
  node: OnnxNode;
  /** Version of the default ONNX domain the model imports. */
  opset: number;
  /** Its attributes (reading one marks it used). */
  attrs: Attrs;
  /** ONNX dtype name of each node input ('' where an optional input is omitted). */
  inputTypes: string[];
  /** ONNX dtype name of each node output, from the graph's declarations or inference. */
  outputTypes: string[];
  /** Shape of each node input in the test data (undefined where omitted). */
  inputShapes: (readonly number[] | undefined)[];
  /** Host inputs (those the mapping lists in `host`) decoded from the test data; undefined when omitted. */
  hostInputs: (OnnxTensor | undefined)[];
  /**
   * Host input i as JS numbers (int64 values clamped to ±2^53, which keeps the meaning of ONNX's
   * INT64_MAX/MIN sentinels); undefined when omitted; NotExpressible('input') if its values were not decoded.
   */
  numbers(i: number): number[] | undefined;
}

/**
 * Runs the lowered node: `inputs[i]` is the device array of node input i (undefined for an omitted
 * optional input or a host input); returns one array per node output. Every array it creates through
 * `be` is freed by the runner afterwards (except the outputs, which it reads then frees).
 */
export type Lowered = (be: ComputeBackend, inputs: (NDArray | undefined)[]) => NDArray[];

/** How results are compared beyond ONNX's rtol 1e-3 / atol 1e-7. */
export type Contract =
  /** Only ONNX's tolerance. */
  | { kind: 'onnx' }
  /** Bit-exact (data movement, selection, int32 arithmetic). */
  | { kind: 'exact' }
  /** Also within the conformance tolerance of this HAL op for the backend's arithmetic class. */
  | { kind: 'hal'; op: string };

/** How one ONNX operator runs on the HAL: the inputs read on the host, the dtypes, the contract, the plan. */
export interface OpMapping {
  /** Node inputs read on the host (int64 shapes, axes, pads; scalar bounds): never uploaded. */
  host?: readonly number[];
  /** Dtypes accepted for device inputs and outputs (default: float32 only). */
  dtypes?: readonly string[];
  /** The comparison contract (default: ONNX's tolerance only). */
  contract?: Contract | ((ctx: NodeContext) => Contract);
  /** Builds the lowering, or throws NotExpressible. */
  plan(ctx: NodeContext): Lowered;
}

/** Normalizes an axis against a rank (ONNX allows [-rank, rank-1]); NotExpressible('attribute') outside. */
export function normAxis(axis: number, rank: number, op: string): number {
  if (!Number.isInteger(axis) || axis < -rank || axis >= rank)
    throw new NotExpressible('attribute', `${op}: axis ${axis} is out of range for rank ${rank}`);
  return axis < 0 ? axis + rank : axis;
}

/** Not expressible: the HAL has no such op. */
export const missing = (what: string): OpMapping => ({
  plan: () => {
    throw new NotExpressible('op', what);
  },
});

/**
 * The HAL's integer dtypes under their ONNX names (int64 tensors run as int32: runner.ts), and the
 * narrow ones: int8 and uint8 compute in int32 and wrap modulo 2^8 as NumPy's integer arithmetic, which
 * ONNX's references use; float16 computes in float32 and rounds each result (hal/src/contract/narrow.ts).
 */
export const INT_TYPES = ['int32', 'int8', 'uint8'] as const;
/** Whether ONNX dtype name `t` is one of INT_TYPES. */
export const isIntType = (t: string | undefined): boolean => t === 'int32' || t === 'int8' || t === 'uint8';
/** float32, float16, float64 (on backends that have it: runner.ts) and the integer dtypes. */
export const NUMERIC_TYPES = ['float32', 'float16', 'float64', ...INT_TYPES] as const;
