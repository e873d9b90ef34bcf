/**
 * The named methods derived from the op table: one per elementwise op (`be.exp(x)` is
 * `be.unary('exp', x)`, `be.add(a, b)` is `be.binary('add', a, b)`) and per reduction (`be.prod(x, axes,
 * keepdims)` is `be.reduce('prod', ...)`), installed on BaseBackend's prototype, so a new entry gets its
 * method.
 */
import type { Operand } from '../backend.js';
import type { NDArray } from '../core/ndarray.js';
import { BINARY_OPS, type BinaryOp, REDUCE_OPS, type ReduceOp, UNARY_OPS, type UnaryOp } from '../ops/index.js';

interface TableOps {
  unary(op: UnaryOp, x: NDArray): NDArray;
  binary(op: BinaryOp, a: Operand, b: Operand): NDArray;
  reduce(op: ReduceOp, x: NDArray, axes?: number | readonly number[], keepdims?: boolean): NDArray;
}

export function installTableMethods(proto: object): void {
  for (const op of REDUCE_OPS) {
    Object.defineProperty(proto, op, {
      value: function (this: TableOps, x: NDArray, axes?: number | readonly number[], keepdims = false): NDArray {
        return this.reduce(op, x, axes, keepdims);
      },
      writable: true,
      configurable: true,
    });
  }
  for (const op of UNARY_OPS) {
    Object.defineProperty(proto, op, {
      value: function (this: TableOps, x: NDArray): NDArray {
        return this.unary(op, x);
      },
      writable: true,
      configurable: true,
    });
  }
  for (const op of BINARY_OPS) {
    Object.defineProperty(proto, op, {
      value: function (this: TableOps, a: Operand, b: Operand): NDArray {
        return this.binary(op, a, b);
      },
      writable: true,
      configurable: true,
    });
  }
}
