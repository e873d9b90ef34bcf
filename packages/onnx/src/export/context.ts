/**
 * What a mapping of one recorded backend call needs: the graph, the values of the buffers, and the operand
 * and result helpers. A mapping returns nothing when it wrote its nodes, or a reason when the call has no
 * ONNX form (collected for OnnxExportUnmappedError).
 */
import type { DType, NDArray, Operand } from '@polyhal/hal';
import { elemType, type GraphBuilder } from './graph.js';
import type { ValueTable } from './views.js';

/** The state a mapping writes to. */
export class ExportContext {
  constructor(
    readonly g: GraphBuilder,
    readonly values: ValueTable,
  ) {}

  /** The ONNX value of an operand: a view's expression, or a number as a scalar constant of `dtype`. */
  in(x: Operand, dtype: DType): string {
    return typeof x === 'number' ? this.g.scalar(x, elemType(dtype)) : this.values.express(x);
  }

  /** Records that the (whole-buffer) result `y` holds ONNX value `name` of y's shape, reshaping if needed. */
  out(y: NDArray, name: string, shape?: readonly number[]): void {
    const have = shape ?? y.shape;
    const same = have.length === y.shape.length && have.every((d, i) => d === y.shape[i]);
    this.values.define(y.buffer, same ? name : this.values.reshape(name, y.shape), y.shape);
  }
}

/** A mapping of one backend method: writes nodes for (args → result), or returns why it cannot. */
export type CallMapping = (c: ExportContext, args: readonly unknown[], result: unknown) => string | undefined;

/** Axes as a list (undefined: null, all axes), normalized to non-negative. */
export function axesOf(axes: unknown, rank: number): number[] | null {
  if (axes === undefined || axes === null) return null;
  const list = typeof axes === 'number' ? [axes] : [...(axes as readonly number[])];
  return list.map((a) => (a < 0 ? a + rank : a));
}

/** Whether `v` is an NDArray (a view with a buffer and a shape). */
export function isArray(v: unknown): v is NDArray {
  return typeof v === 'object' && v !== null && 'buffer' in v && 'shape' in v && 'strides' in v;
}
