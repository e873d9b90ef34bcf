/**
 * Conformance cases of fusedElementwise (hal/src/ops/array-ops.ts): chains of unary ops and binary ops with a
 * number on float32 — contiguous, odd-length and transposed inputs, so that vector and scalar paths of the fused
 * kernels run — and an int32 chain that wraps. The oracle (`oFusedElementwise`) applies each step's float64
 * reference from the op table and rounds it to the dtype before the next step, as the separate ops would.
 */
import { BINARY_OP_DEFS, type BinaryOpDef, type ElementwiseStep, UNARY_OP_DEFS, type UnaryOpDef } from '@polyhal/hal';
import type { Case, InputSpec } from './cases.js';
import { fmt, U, viewName } from './cases-util.js';
import type { Ref } from './oracle.js';
import { oIsInt, oStoreInt } from './oracle-dtype.js';

const CHAINS: [string, ElementwiseStep[], number][] = [
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
 * The chain in float64, each step rounded to x's dtype (float32: Math.fround; int32: wrapped), its numbers rounded
 * to the dtype first.
 */
export function oFusedElementwise(x: Ref, chain: readonly ElementwiseStep[]): Ref {
  const int = oIsInt(x.dtype);
  const round = (v: number): number => (int ? oStoreInt(x.dtype, v) : Math.fround(v));
  const data = x.data.map((v0) => {
    let v = v0;
    for (const s of chain) {
      if (!('scalar' in s)) {
        const d: UnaryOpDef = UNARY_OP_DEFS[s.op];
        v = round((int ? d.i32! : d.f64)(v));
      } else {
        const d: BinaryOpDef = BINARY_OP_DEFS[s.op];
        const f = (int ? d.i32 : d.f64)!;
        const scalar = int ? s.scalar : Math.fround(s.scalar); // the HAL rounds a step's number as binary does
        v = round(s.scalarFirst ? f(scalar, v) : f(v, scalar));
      }
    }
    return v;
  });
  return { shape: [...x.shape], data, dtype: x.dtype };
}
