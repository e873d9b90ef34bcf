/**
 * Conformance cases of fusedElementwise (hal/src/ops/array-ops.ts): chains of unary ops and binary ops with a
 * number on float32 — contiguous, odd-length and transposed inputs, so that vector and scalar paths of the fused
 * kernels run — chains with array operands (full, row- and column-broadcast, 0-d and transposed operands, the
 * array first or second, one array used twice), and an int32 chain that wraps. The oracle (`oFusedElementwise`)
 * applies each step's float64 reference from the op table and rounds it to the dtype before the next step, as the
 * separate ops would; an array operand is broadcast to x's shape first.
 */
import {
  BINARY_OP_DEFS,
  type BinaryOp,
  type BinaryOpDef,
  type ElementwiseStep,
  type NDArray,
  UNARY_OP_DEFS,
  type UnaryOpDef,
} from '@polyhal/hal';
import type { Case, InputSpec } from './cases.js';
import { fmt, U, viewName } from './cases-util.js';
import { oExpand, type Ref } from './oracle.js';
import { oIsInt, oStoreInt } from './oracle-dtype.js';

/** A step of a case's chain: an array operand names the case's input (1, 2, ...; input 0 is x). */
export type CaseStep =
  | Exclude<ElementwiseStep, { readonly array: NDArray }>
  | { readonly op: BinaryOp; readonly input: number; readonly arrayFirst?: boolean };

/** The case's steps with their arrays: input j of `inputs` for a step naming input j. */
export function caseSteps<T>(chain: readonly CaseStep[], inputs: readonly T[]): (ElementwiseStep | ArrayOf<T>)[] {
  return chain.map((s) => ('input' in s ? { op: s.op, array: inputs[s.input]!, arrayFirst: s.arrayFirst } : s));
}
type ArrayOf<T> = { readonly op: BinaryOp; readonly array: T; readonly arrayFirst?: boolean };

const CHAINS: [string, CaseStep[], number][] = [
  // name, steps, the half-width of the input range
  // (+ 4, not a number that cancels hardSwish's minimum: the op's own few ulps would then be many of a tiny result)
  ['hardSwish-affine', [{ op: 'hardSwish' }, { op: 'mul', scalar: 0.7 }, { op: 'add', scalar: 4 }], 5],
  [
    'hardSigmoid',
    [
      { op: 'mul', scalar: 0.2 },
      { op: 'add', scalar: 0.5 },
      { op: 'maximum', scalar: 0 },
      { op: 'minimum', scalar: 1 },
    ],
    4,
  ],
  ['scalar-first', [{ op: 'sub', scalar: 1, scalarFirst: true }, { op: 'relu' }, { op: 'sqrt' }, { op: 'neg' }], 3],
  ['logistic', [{ op: 'exp' }, { op: 'add', scalar: 1 }, { op: 'recip' }], 3],
  ['div-scale', [{ op: 'div', scalar: 3 }, { op: 'tanh' }, { op: 'mul', scalar: 2 }], 6],
];

const SHAPES: [number[], InputSpec['view']?][] = [[[2, 3, 64]], [[37]], [[16, 12], { transpose: true }]];

export function fusedElementwiseCases(): Case[] {
  const cases: Case[] = [];
  for (const [name, chain, half] of CHAINS)
    for (const [shape, view] of SHAPES)
      cases.push({
        id: `fusedElementwise/float32/${fmt(shape)}${viewName(view)}/${name}`,
        kind: 'composite',
        op: 'fusedElementwise',
        dtype: 'float32',
        inputs: [{ shape, gen: U(-half, half), ...(view ? { view } : {}) }],
        params: { chain },
      });
  cases.push(...arrayCases());
  cases.push({
    id: 'fusedElementwise/int32/[9]/wrapping',
    kind: 'composite',
    op: 'fusedElementwise',
    dtype: 'int32',
    inputs: [
      { shape: [9], gen: U(-1, 1), dtype: 'int32', values: [0, 1, -5, 2 ** 30, -(2 ** 31), 7, -3, 100, 2 ** 31 - 1] },
    ],
    params: {
      chain: [{ op: 'add', scalar: 3 }, { op: 'mul', scalar: -2 }, { op: 'neg' }, { op: 'maximum', scalar: 1 }],
    },
  });
  return cases;
}

/**
 * Chains with array operands: name, x's shape and view, the operands (input 1, 2, ...), the steps. The 4-op chain
 * of the bandwidth probe (add a bias, relu, mul, add a residual) on several layouts; operands first and second;
 * a division by an array kept away from zero; one operand read by two steps.
 */
const ARRAY_CHAINS: [string, InputSpec, InputSpec[], CaseStep[]][] = [
  [
    'bias-relu-mul-residual',
    { shape: [2, 3, 64], gen: U(-2, 2) },
    [
      { shape: [64], gen: U(-1, 1) },
      { shape: [2, 3, 64], gen: U(-2, 2) },
      { shape: [2, 3, 64], gen: U(-2, 2) },
    ],
    [{ op: 'add', input: 1 }, { op: 'relu' }, { op: 'mul', input: 2 }, { op: 'add', input: 3 }],
  ],
  [
    'bias-relu-mul-residual',
    { shape: [37], gen: U(-2, 2) },
    [
      { shape: [1], gen: U(-1, 1) },
      { shape: [37], gen: U(-2, 2) },
      { shape: [37], gen: U(-2, 2) },
    ],
    [{ op: 'add', input: 1 }, { op: 'relu' }, { op: 'mul', input: 2 }, { op: 'add', input: 3 }],
  ],
  [
    'first-column-0d',
    { shape: [4, 6, 8], gen: U(-2, 2) },
    [
      { shape: [6, 1], gen: U(-1, 1) },
      { shape: [], gen: U(1, 2) },
      { shape: [4, 6, 8], gen: U(1, 2) },
    ],
    [
      { op: 'sub', input: 1, arrayFirst: true },
      { op: 'mul', scalar: 0.5 },
      { op: 'tanh' },
      { op: 'div', input: 3 },
      { op: 'maximum', input: 2, arrayFirst: true },
      { op: 'add', input: 1 },
    ],
  ],
  [
    'transposed',
    { shape: [16, 12], gen: U(-2, 2), view: { transpose: true } },
    [
      { shape: [16, 12], gen: U(-2, 2), view: { transpose: true } },
      { shape: [16], gen: U(-1, 1) },
    ],
    [{ op: 'mul', input: 1 }, { op: 'sub', input: 2 }, { op: 'exp' }, { op: 'minimum', input: 1, arrayFirst: true }],
  ],
];

function arrayCases(): Case[] {
  return ARRAY_CHAINS.map(([name, x, operands, chain]) => ({
    id:
      `fusedElementwise/float32/${fmt(x.shape)}${viewName(x.view)}` +
      `/${name}+${operands.map((o) => `${fmt(o.shape)}${viewName(o.view)}`).join('+')}`,
    kind: 'composite',
    op: 'fusedElementwise',
    dtype: 'float32',
    inputs: [x, ...operands],
    params: { chain },
  }));
}

/**
 * The chain in float64, each step rounded to x's dtype (float32: Math.fround; int32: wrapped), its numbers rounded
 * to the dtype first, its array operands (`operands[j]` for input j) broadcast to x's shape.
 */
export function oFusedElementwise(
  x: Ref,
  chain: readonly CaseStep[],
  operands: readonly (Ref | undefined)[] = [],
): Ref {
  const int = oIsInt(x.dtype);
  const round = (v: number): number => (int ? oStoreInt(x.dtype, v) : Math.fround(v));
  const arrays = operands.map((o) => (o ? oExpand(o, [...x.shape]).data : undefined));
  const data = x.data.map((v0, e) => {
    let v = v0;
    for (const s of chain) {
      if (!('scalar' in s) && !('input' in s)) {
        const d: UnaryOpDef = UNARY_OP_DEFS[s.op];
        v = round((int ? d.i32! : d.f64)(v));
        continue;
      }
      const d: BinaryOpDef = BINARY_OP_DEFS[s.op];
      const f = (int ? d.i32 : d.f64)!;
      if ('input' in s) {
        const a = arrays[s.input]![e]!;
        v = round(s.arrayFirst ? f(a, v) : f(v, a));
      } else {
        const scalar = int ? s.scalar : Math.fround(s.scalar); // the HAL rounds a step's number as binary does
        v = round(s.scalarFirst ? f(scalar, v) : f(v, scalar));
      }
    }
    return v;
  });
  return { shape: [...x.shape], data, dtype: x.dtype };
}
