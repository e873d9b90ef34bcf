/**
 * The named methods derived from the op table, as two op families (FAMILIES, base.ts): one method per
 * elementwise op (`be.exp(x)` is `be.unary('exp', x)`, `be.add(a, b)` is `be.binary('add', a, b)`) and per
 * reduction (`be.prod(x, axes, keepdims)` is `be.reduce('prod', ...)`), so a new entry gets its method.
 */
import type { ElementwiseMethods, Operand, ReduceMethods } from '../backend.js';
import type { NDArray } from '../core/ndarray.js';
import { BINARY_OPS, type BinaryOp, REDUCE_OPS, type ReduceOp, UNARY_OPS, type UnaryOp } from '../ops/index.js';
import type { FamilyTable } from './family-table.js';

/** What the table's methods call on the backend: the generic forms. */
interface TableOps {
  unary(op: UnaryOp, x: NDArray): NDArray;
  binary(op: BinaryOp, a: Operand, b: Operand): NDArray;
  reduce(op: ReduceOp, x: NDArray, axes?: number | readonly number[], keepdims?: boolean): NDArray;
}

/** One function per entry of `ops`, keyed by it. */
function tableOf<Op extends string, F>(ops: readonly Op[], method: (op: Op) => F): { [K in Op]: F } {
  return Object.fromEntries(ops.map((op) => [op, method(op)])) as { [K in Op]: F };
}

/** One method per elementwise op of the op table (UNARY_OPS, BINARY_OPS), through `unary` and `binary`. */
export const ELEMENTWISE_METHODS: FamilyTable<ElementwiseMethods> = {
  ...tableOf(
    UNARY_OPS,
    (op) =>
      function (this: TableOps, x: NDArray): NDArray {
        return this.unary(op, x);
      },
  ),
  ...tableOf(
    BINARY_OPS,
    (op) =>
      function (this: TableOps, a: Operand, b: Operand): NDArray {
        return this.binary(op, a, b);
      },
  ),
} satisfies FamilyTable<ElementwiseMethods, TableOps>;

/** One method per reduction of the op table (REDUCE_OPS), through `reduce`. */
export const REDUCE_METHODS: FamilyTable<ReduceMethods> = tableOf(
  REDUCE_OPS,
  (op) =>
    function (this: TableOps, x: NDArray, axes?: number | readonly number[], keepdims = false): NDArray {
      return this.reduce(op, x, axes, keepdims);
    },
) satisfies FamilyTable<ReduceMethods, TableOps>;
