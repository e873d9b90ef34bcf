/**
 * The conformance cases, as data: op, dtype, input shapes (scalars, size-1, broadcast, empty, prime
 * and odd sizes such as 17, 31, 33, 513), a seeded generator per input, an optional non-contiguous view
 * applied on the device (permute/stride/shrink/expand/transpose), and op parameters. How each kind of
 * case runs on a backend and on the oracle lives in runner.ts.
 */
import {
  BINARY_OP_DEFS,
  BINARY_OPS,
  type BinaryOpDef,
  INT32_REDUCE_OPS,
  INT32_UNARY_OPS,
  REDUCE_OP_DEFS,
  REDUCE_OPS,
  UNARY_OP_DEFS,
  UNARY_OPS,
} from '@polyhal/hal';
import { indexCases } from './cases-index.js';
import { layoutCases } from './cases-layout.js';
import type { Generator } from './random.js';
import { randomCases } from './random-runners.js';

export type ViewSpec =
  | { permute: number[] }
  | { stride: number[] }
  | { shrink: [number, number][] }
  | { expand: number[] }
  | { transpose: true };

export interface InputSpec {
  shape: number[];
  gen: Generator;
  /** Explicit values (row-major, prod(shape) of them), used instead of `gen` (property-based tests). */
  values?: number[];
  dtype?: 'float32' | 'int32';
  /** Applied after upload, so the op sees a strided view (stored shape is `shape`). */
  view?: ViewSpec;
}

export type CaseKind = 'unary' | 'binary' | 'reduce' | 'movement' | 'matmul' | 'composite' | 'optimizer' | 'random';

export interface Case {
  id: string;
  kind: CaseKind;
  op: string;
  dtype: 'float32' | 'int32';
  inputs: InputSpec[];
  params?: {
    axes?: number[];
    keepdims?: boolean;
    shape?: number[];
    perm?: number[];
    bounds?: [number, number][];
    steps?: number[];
    pads?: [number, number][];
    value?: number;
    dtype?: 'float32' | 'int32';
    axis?: number;
    withGrad?: boolean;
    /** Layout ops: pad's mode, tile's reps, trilu's k and upper, split's sections or sizes. */
    mode?: 'constant' | 'edge' | 'reflect' | 'wrap';
    reps?: number[];
    k?: number;
    upper?: boolean;
    split?: number | number[];
    /** oneHot's depth. */
    depth?: number;
    /**
     * Optimizer hyper-parameters (adamStep: lr, beta1, beta2, eps, weightDecay, step; sgdStep: lr, momentum,
     * weightDecay).
     */
    hyper?: Record<string, number>;
  };
}

const U = (lo: number, hi: number): Generator => ({ kind: 'uniform', lo, hi });
const P = (lo: number, hi: number): Generator => ({ kind: 'positive', lo, hi });
const I = (lo: number, hi: number): Generator => ({ kind: 'int', lo, hi });
const SPECIAL: Generator = { kind: 'special' };

const fmt = (s: number[]): string => `[${s.join(',')}]`;
const viewName = (v?: ViewSpec): string => (v ? `.${Object.keys(v)[0]}` : '');

/** Domain of each elementwise op's ordinary inputs: the op table's (hal/src/ops/). */
const UNARY_DOMAIN: Record<string, Generator> = Object.fromEntries(
  UNARY_OPS.map((op) => [op, UNARY_OP_DEFS[op].domain]),
);
const BINARY_DOMAIN: Record<string, [Generator, Generator]> = Object.fromEntries(
  BINARY_OPS.map((op) => [op, [...(BINARY_OP_DEFS[op] as BinaryOpDef).domain] as [Generator, Generator]]),
);
const INT_BINARY_DOMAIN: Record<string, [Generator, Generator]> = Object.fromEntries(
  BINARY_OPS.flatMap((op) => {
    const d = (BINARY_OP_DEFS[op] as BinaryOpDef).int32Domain;
    return d ? [[op, [...d] as [Generator, Generator]]] : [];
  }),
);

const ELEMENTWISE_SHAPES: { shape: number[]; view?: ViewSpec }[] = [
  { shape: [] },
  { shape: [1] },
  { shape: [17] },
  { shape: [513] },
  { shape: [31, 33] },
  { shape: [2, 3, 5] },
  { shape: [0] },
  { shape: [3, 0] },
  { shape: [5, 7], view: { permute: [1, 0] } },
  { shape: [9, 8], view: { stride: [2, -1] } },
  {
    shape: [6, 10],
    view: {
      shrink: [
        [1, 5],
        [2, 9],
      ],
    },
  },
  { shape: [3, 1], view: { expand: [2, 3, 4] } },
];

const BROADCAST_PAIRS: [InputShape, InputShape][] = [
  [{ shape: [17] }, { shape: [17] }],
  [{ shape: [] }, { shape: [31] }],
  [{ shape: [31, 33] }, { shape: [33] }],
  [{ shape: [3, 1] }, { shape: [1, 4] }],
  [{ shape: [2, 1, 5] }, { shape: [3, 1] }],
  [{ shape: [1] }, { shape: [513] }],
  [{ shape: [0, 3] }, { shape: [3] }],
  [{ shape: [4, 6], view: { permute: [1, 0] } }, { shape: [6, 4] }],
  [{ shape: [8, 9], view: { stride: [-2, 3] } }, { shape: [3] }],
];
type InputShape = { shape: number[]; view?: ViewSpec };

/** float32 pairs (x, y) with |x/y| from 2^20 to 2^24, both signs, divisors of several magnitudes. */
function modLargeQuotients(): [number[], number[]] {
  const xs: number[] = [];
  const ys: number[] = [];
  for (let k = 20; k <= 24; k++) {
    for (const y of [3, -3, 0.7, -1.3, 1e-3, -2.5e4, 6e-8]) {
      for (const t of [0.04, 0.5, 0.96, 0.3333]) {
        for (const sign of [1, -1]) {
          const y32 = Math.fround(y);
          xs.push(Math.fround(sign * (2 ** k + t) * y32));
          ys.push(y32);
        }
      }
    }
  }
  return [xs, ys];
}

function buildCases(): Case[] {
  const cases: Case[] = [];
  // ---- unary ----
  for (const [op, gen] of Object.entries(UNARY_DOMAIN)) {
    for (const { shape, view } of ELEMENTWISE_SHAPES) {
      cases.push({
        id: `${op}/float32/${fmt(shape)}${viewName(view)}`,
        kind: 'unary',
        op,
        dtype: 'float32',
        inputs: [{ shape, gen, view }],
      });
    }
    cases.push({
      id: `${op}/float32/special`,
      kind: 'unary',
      op,
      dtype: 'float32',
      inputs: [{ shape: [64], gen: SPECIAL }],
    });
  }
  const INT32_EDGES = [-2147483648, -2147483647, -65536, -7, -1, 0, 1, 7, 65536, 2147483646, 2147483647];
  for (const op of INT32_UNARY_OPS) {
    cases.push({
      id: `${op}/int32/[31,33]`,
      kind: 'unary',
      op,
      dtype: 'int32',
      inputs: [{ shape: [31, 33], gen: I(-2147483648, 2147483647), dtype: 'int32' }],
    });
    cases.push({
      id: `${op}/int32/edges`,
      kind: 'unary',
      op,
      dtype: 'int32',
      inputs: [{ shape: [INT32_EDGES.length], gen: SPECIAL, values: INT32_EDGES, dtype: 'int32' }],
    });
  }
  // Rounding at and next to halves, where a kernel built on floor(x + 0.5) or on JS Math.round goes
  // wrong (0.49999997 + 0.5 rounds up to 1; ties go up), around 2^23 (the last float32s with a
  // fraction) and past it (integers only).
  const halves = [0.5, 1.5, 2.5, 3.5, 0.49999997, 0.50000006, 1.4999999, 2.5000002, 4194304.5, 8388607.5, 8388607];
  halves.push(8388608, 8388609, 16777218, 1.1754944e-38, 0.99999994, 1.0000001);
  const halfValues = [...halves, ...halves.map((v) => -v)];
  for (const op of ['sign', 'floor', 'ceil', 'round', 'trunc']) {
    cases.push({
      id: `${op}/float32/halves`,
      kind: 'unary',
      op,
      dtype: 'float32',
      inputs: [{ shape: [halfValues.length], gen: SPECIAL, values: halfValues }],
    });
  }
  // ---- binary ----
  for (const [op, [ga, gb]] of Object.entries(BINARY_DOMAIN)) {
    for (const [a, b] of BROADCAST_PAIRS) {
      cases.push({
        id: `${op}/float32/${fmt(a.shape)}${viewName(a.view)}x${fmt(b.shape)}${viewName(b.view)}`,
        kind: 'binary',
        op,
        dtype: 'float32',
        inputs: [
          { ...a, gen: ga },
          { ...b, gen: gb },
        ],
      });
    }
    cases.push({
      id: `${op}/float32/special`,
      kind: 'binary',
      op,
      dtype: 'float32',
      inputs: [
        { shape: [64, 1], gen: SPECIAL },
        { shape: [1, 22], gen: SPECIAL },
      ],
    });
  }
  // mod where |x/y| is 2^20..2^24 (a remainder computed as x − trunc(x/y)·y without a fused
  // multiply-add, or from an inexact quotient, is off by up to |y|) and signed zeros (a zero result
  // keeps x's sign; x mod ±Inf).
  const [mx, my] = modLargeQuotients();
  cases.push({
    id: 'mod/float32/quotient-2^20..2^24',
    kind: 'binary',
    op: 'mod',
    dtype: 'float32',
    inputs: [
      { shape: [mx.length], gen: SPECIAL, values: mx },
      { shape: [my.length], gen: SPECIAL, values: my },
    ],
  });
  const zx = [-0, 0, -6, 6, -0, 0, 6, -6, -3, 3, 0, -0, -0, 0, 1e-30, -1e-30];
  const zy = [3, 3, -3, -3, -3, -3, 3, 3, 3, -3, Infinity, Infinity, -Infinity, -Infinity, Infinity, -Infinity];
  cases.push({
    id: 'mod/float32/signed-zeros',
    kind: 'binary',
    op: 'mod',
    dtype: 'float32',
    inputs: [
      { shape: [zx.length], gen: SPECIAL, values: zx },
      { shape: [zy.length], gen: SPECIAL, values: zy },
    ],
  });
  // pow on integers: (±0..12)^(−12..12), exact wherever float32 holds the result (hal/src/ops/binary.ts),
  // and on negative bases with integer and non-integer exponents, large odd and even ones included.
  const ints = Array.from({ length: 25 }, (_, i) => i - 12);
  cases.push({
    id: 'pow/float32/integers',
    kind: 'binary',
    op: 'pow',
    dtype: 'float32',
    inputs: [
      { shape: [25, 1], gen: SPECIAL, values: ints },
      { shape: [1, 25], gen: SPECIAL, values: ints },
    ],
  });
  const negBases = [-0.5, -0.99999994, -1.0000001, -2, -3.5, -1e-20, -1e20];
  const exponents = [-3, -2, -1, 1, 2, 3, 0.5, -0.5, 1 / 3, 16777217, 16777216, -16777217, 2.5e9, 101];
  cases.push({
    id: 'pow/float32/negative-bases',
    kind: 'binary',
    op: 'pow',
    dtype: 'float32',
    inputs: [
      { shape: [negBases.length, 1], gen: SPECIAL, values: negBases.map(Math.fround) },
      { shape: [1, exponents.length], gen: SPECIAL, values: exponents.map(Math.fround) },
    ],
  });
  for (const [op, [ga, gb]] of Object.entries(INT_BINARY_DOMAIN)) {
    for (const [a, b] of [BROADCAST_PAIRS[2]!, BROADCAST_PAIRS[3]!, BROADCAST_PAIRS[7]!]) {
      cases.push({
        id: `${op}/int32/${fmt(a.shape)}${viewName(a.view)}x${fmt(b.shape)}`,
        kind: 'binary',
        op,
        dtype: 'int32',
        inputs: [
          { ...a, gen: ga, dtype: 'int32' },
          { ...b, gen: gb, dtype: 'int32' },
        ],
      });
    }
  }
  // ---- reductions ----
  const reductions: {
    shape: number[];
    axes?: number[];
    keepdims?: boolean;
    view?: ViewSpec;
    gen?: Generator;
    tag?: string;
  }[] = [
    { shape: [513] },
    { shape: [] },
    { shape: [31, 33], axes: [0] },
    { shape: [31, 33], axes: [1] },
    { shape: [31, 33], axes: [-1], keepdims: true },
    { shape: [2, 3, 5], axes: [0, 2] },
    { shape: [2, 3, 5], axes: [1], keepdims: true },
    { shape: [4, 0, 3], axes: [1] },
    { shape: [0] },
    { shape: [6, 7], axes: [0], view: { permute: [1, 0] } },
    { shape: [10, 12], axes: [1], view: { stride: [3, -2] } },
    { shape: [3, 1], axes: [1], view: { expand: [3, 5] } },
    { shape: [100000], tag: 'large' },
    { shape: [8, 8], axes: [1], gen: SPECIAL, tag: 'special' },
  ];
  for (const op of [...REDUCE_OPS, 'mean'] as const) {
    const domain = REDUCE_OP_DEFS[op === 'mean' ? 'sum' : op].domain;
    for (const r of reductions) {
      const id =
        `${op}/float32/${fmt(r.shape)}${viewName(r.view)}` +
        `${r.axes ? `/axes=${r.axes}` : ''}${r.keepdims ? '/keepdims' : ''}${r.tag ? `/${r.tag}` : ''}`;
      cases.push({
        id,
        kind: 'reduce',
        op,
        dtype: 'float32',
        inputs: [{ shape: r.shape, gen: r.gen ?? domain, view: r.view }],
        params: { axes: r.axes, keepdims: r.keepdims },
      });
    }
  }
  for (const op of INT32_REDUCE_OPS) {
    cases.push({
      id: `${op}/int32/[31,33]/axes=0`,
      kind: 'reduce',
      op,
      dtype: 'int32',
      inputs: [{ shape: [31, 33], gen: I(-1e6, 1e6), dtype: 'int32' }],
      params: { axes: [0] },
    });
    cases.push({
      id: `${op}/int32/[4,0,3]/axes=1`,
      kind: 'reduce',
      op,
      dtype: 'int32',
      inputs: [{ shape: [4, 0, 3], gen: I(-9, 9), dtype: 'int32' }],
      params: { axes: [1] },
    });
  }
  // ---- movement ----
  for (const dtype of ['float32', 'int32'] as const) {
    const gen = dtype === 'float32' ? U(-10, 10) : I(-1000, 1000);
    const mv = (op: string, shape: number[], params: Case['params'], view?: ViewSpec, tag = ''): void => {
      cases.push({
        id: `${op}/${dtype}/${fmt(shape)}${viewName(view)}${tag}`,
        kind: 'movement',
        op,
        dtype,
        inputs: [{ shape, gen, dtype, view }],
        params,
      });
    };
    mv('reshape', [6, 4], { shape: [2, 3, 4] });
    mv('reshape', [6, 4], { shape: [3, -1] }, { permute: [1, 0] });
    mv('reshape', [2, 3, 4], { shape: [6, 4] }, { permute: [1, 0, 2] });
    mv('permute', [2, 3, 5], { perm: [2, 0, 1] });
    mv('expand', [3, 1], { shape: [2, 3, 4] });
    mv('shrink', [7, 9], {
      bounds: [
        [2, 5],
        [0, 9],
      ],
    });
    mv(
      'shrink',
      [7, 9],
      {
        bounds: [
          [3, 3],
          [0, 9],
        ],
      },
      undefined,
      '/empty',
    );
    mv('stride', [7, 9], { steps: [2, -3] });
    mv('stride', [17], { steps: [-1] });
    mv('pad', [3, 4], {
      pads: [
        [1, 2],
        [0, 3],
      ],
      value: dtype === 'float32' ? -1.5 : 7,
    });
    mv(
      'pad',
      [5, 4],
      {
        pads: [
          [0, 1],
          [2, 0],
        ],
        value: 0,
      },
      { permute: [1, 0] },
    );
    mv('contiguous', [5, 6], {}, { stride: [-1, 2] });
    mv('cast', [31, 33], { dtype: dtype === 'float32' ? 'int32' : 'float32' });
  }
  cases.push({
    id: 'cast/float32/special',
    kind: 'movement',
    op: 'cast',
    dtype: 'float32',
    inputs: [{ shape: [64], gen: SPECIAL }],
    params: { dtype: 'int32' },
  });
  // ---- matmul ----
  const mm: [InputSpec, InputSpec][] = [
    [
      { shape: [1, 1], gen: U(-1, 1) },
      { shape: [1, 1], gen: U(-1, 1) },
    ],
    [
      { shape: [17, 31], gen: U(-1, 1) },
      { shape: [31, 33], gen: U(-1, 1) },
    ],
    [
      { shape: [33, 513], gen: U(-1, 1) },
      { shape: [513, 7], gen: U(-1, 1) },
    ],
    [
      { shape: [64, 64], gen: U(-1, 1) },
      { shape: [64, 64], gen: U(-1, 1) },
    ],
    [
      { shape: [3, 5, 7], gen: U(-1, 1) },
      { shape: [3, 7, 4], gen: U(-1, 1) },
    ],
    [
      { shape: [2, 1, 4, 5], gen: U(-1, 1) },
      { shape: [3, 5, 6], gen: U(-1, 1) },
    ],
    [
      { shape: [31, 17], gen: U(-1, 1), view: { transpose: true } },
      { shape: [31, 33], gen: U(-1, 1) },
    ],
    [
      { shape: [17, 31], gen: U(-1, 1) },
      { shape: [33, 31], gen: U(-1, 1), view: { transpose: true } },
    ],
    [
      { shape: [0, 3], gen: U(-1, 1) },
      { shape: [3, 4], gen: U(-1, 1) },
    ],
    [
      { shape: [4, 0], gen: U(-1, 1) },
      { shape: [0, 5], gen: U(-1, 1) },
    ],
    [
      { shape: [5, 1], gen: U(-1, 1), view: { expand: [2, 5, 3] } },
      { shape: [3, 2], gen: U(-1, 1) },
    ],
    // batched a with a 2-D b (a Linear layer on sequences: the batch merges into M)
    [
      { shape: [3, 17, 9], gen: U(-1, 1) },
      { shape: [9, 5], gen: U(-1, 1) },
    ],
    [
      { shape: [2, 3, 5, 7], gen: U(-1, 1) },
      { shape: [4, 7], gen: U(-1, 1), view: { transpose: true } },
    ],
  ];
  for (const [a, b] of mm) {
    cases.push({
      id: `matmul/float32/${fmt(a.shape)}${viewName(a.view)}x${fmt(b.shape)}${viewName(b.view)}`,
      kind: 'matmul',
      op: 'matmul',
      dtype: 'float32',
      inputs: [a, b],
    });
  }
  // ---- composites ----
  for (const op of ['softmax', 'logSoftmax']) {
    cases.push({
      id: `${op}/float32/[31,17]`,
      kind: 'composite',
      op,
      dtype: 'float32',
      inputs: [{ shape: [31, 17], gen: U(-5, 5) }],
      params: { axis: -1 },
    });
    cases.push({
      id: `${op}/float32/[4,1000]/large-logits`,
      kind: 'composite',
      op,
      dtype: 'float32',
      inputs: [{ shape: [4, 1000], gen: U(-80, 80) }],
      params: { axis: -1 },
    });
    cases.push({
      id: `${op}/float32/[1]`,
      kind: 'composite',
      op,
      dtype: 'float32',
      inputs: [{ shape: [1], gen: U(-5, 5) }],
      params: { axis: 0 },
    });
  }
  for (const withGrad of [false, true]) {
    cases.push({
      id: `softmaxCrossEntropy/float32/[32,10]${withGrad ? '/grad' : ''}`,
      kind: 'composite',
      op: 'softmaxCrossEntropy',
      dtype: 'float32',
      inputs: [
        { shape: [32, 10], gen: U(-20, 20) },
        { shape: [32, 10], gen: { kind: 'onehot', classes: 10 } },
      ],
      params: { withGrad },
    });
  }
  // Special values (the xlogy rule of ops.ts): a −Inf logit where the label is 0 is masked (finite
  // loss), where the label is > 0 gives +Inf; NaN/+Inf logits or an all −Inf row give NaN, whatever the labels.
  const inf = Infinity;
  const sceSpecial: [number[], number[]][] = [
    [
      [2, -inf, 0.5, -1],
      [1, 0, 0, 0],
    ],
    [
      [-inf, 3, -inf, 1],
      [0, 0.75, 0, 0.25],
    ],
    [
      [-inf, 1, 2, 3],
      [1, 0, 0, 0],
    ],
    [
      [NaN, 1, 2, 3],
      [0, 1, 0, 0],
    ],
    [
      [NaN, 1, 2, 3],
      [0, 0, 0, 0],
    ],
    [
      [inf, 1, 2, 3],
      [0, 0, 1, 0],
    ],
    [
      [-inf, -inf, -inf, -inf],
      [0, 0, 0, 1],
    ],
    [
      [1, 2, 3, 4],
      [0, 0, 0, 0],
    ],
  ];
  // Masked logits as in vocabulary or action masking: every third class of each row is −Inf, never the label's.
  const masked = { logits: [] as number[], labels: [] as number[] };
  for (let n = 0; n < 16; n++) {
    const label = [1, 2, 4, 5, 7, 8][n % 6]!;
    for (let c = 0; c < 10; c++) {
      masked.logits.push(c % 3 === 0 ? -inf : Math.fround(Math.sin(n * 10 + c) * 8));
      masked.labels.push(c === label ? 1 : 0);
    }
  }
  for (const withGrad of [false, true]) {
    const g = withGrad ? '/grad' : '';
    cases.push({
      id: `softmaxCrossEntropy/float32/[8,4]/special${g}`,
      kind: 'composite',
      op: 'softmaxCrossEntropy',
      dtype: 'float32',
      inputs: [
        { shape: [8, 4], gen: SPECIAL, values: sceSpecial.flatMap((r) => r[0]) },
        { shape: [8, 4], gen: SPECIAL, values: sceSpecial.flatMap((r) => r[1]) },
      ],
      params: { withGrad },
    });
    cases.push({
      id: `softmaxCrossEntropy/float32/[16,10]/masked${g}`,
      kind: 'composite',
      op: 'softmaxCrossEntropy',
      dtype: 'float32',
      inputs: [
        { shape: [16, 10], gen: SPECIAL, values: masked.logits },
        { shape: [16, 10], gen: SPECIAL, values: masked.labels },
      ],
      params: { withGrad },
    });
  }
  // ---- optimizer steps (in place on param and state) ----
  const adam = [
    { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, step: 1 },
    { lr: 3e-2, beta1: 0.8, beta2: 0.99, eps: 1e-6, weightDecay: 0.1, step: 7 },
  ];
  adam.forEach((hyper, k) => {
    for (const view of [undefined, { permute: [1, 0] }] as (ViewSpec | undefined)[]) {
      cases.push({
        id: `adamStep/float32/[31,33]${k ? '/adamw' : ''}${viewName(view)}`,
        kind: 'optimizer',
        op: 'adamStep',
        dtype: 'float32',
        inputs: [
          { shape: [31, 33], gen: U(-1, 1) },
          view ? { shape: [33, 31], gen: U(-2, 2), view } : { shape: [31, 33], gen: U(-2, 2) },
          { shape: [31, 33], gen: U(-0.1, 0.1) },
          { shape: [31, 33], gen: P(0, 0.01) },
        ],
        params: { hyper },
      });
    }
  });
  for (const hyper of [
    { lr: 0.1, momentum: 0, weightDecay: 0 },
    { lr: 0.05, momentum: 0.9, weightDecay: 0.01 },
  ]) {
    cases.push({
      id: `sgdStep/float32/[513]${hyper.momentum ? '/momentum' : ''}`,
      kind: 'optimizer',
      op: 'sgdStep',
      dtype: 'float32',
      inputs: [
        { shape: [513], gen: U(-1, 1) },
        { shape: [513], gen: U(-2, 2) },
        { shape: [513], gen: U(-0.5, 0.5) },
      ],
      params: { hyper },
    });
  }
  // ---- ranks 7 and 8: views whose dimensions do not merge (alternating broadcasts, reversed or
  // paired permutations, a tile-like expand), elementwise, reductions, movement and batched matmul ----
  const r8 = [2, 3, 2, 3, 2, 3, 2, 3];
  cases.push({
    id: 'add/float32/rank7-broadcast',
    kind: 'binary',
    op: 'add',
    dtype: 'float32',
    inputs: [
      { shape: [2, 1, 3, 1, 2, 1, 3], gen: U(-10, 10) },
      { shape: [1, 2, 1, 3, 1, 2, 1], gen: U(-10, 10) },
    ],
  });
  cases.push({
    id: 'mul/float32/rank8.permute',
    kind: 'binary',
    op: 'mul',
    dtype: 'float32',
    inputs: [
      { shape: r8, gen: U(-10, 10), view: { permute: [7, 6, 5, 4, 3, 2, 1, 0] } },
      { shape: [3, 1, 3, 1, 3, 1, 3, 1], gen: U(-10, 10) },
    ],
  });
  cases.push({
    id: 'maximum/int32/rank8-broadcast',
    kind: 'binary',
    op: 'maximum',
    dtype: 'int32',
    inputs: [
      { shape: [2, 1, 2, 1, 2, 1, 2, 1], gen: I(-50, 50), dtype: 'int32' },
      { shape: [1, 3, 1, 3, 1, 3, 1, 3], gen: I(-50, 50), dtype: 'int32' },
    ],
  });
  cases.push({
    id: 'neg/float32/rank8.permute',
    kind: 'unary',
    op: 'neg',
    dtype: 'float32',
    inputs: [{ shape: r8, gen: U(-10, 10), view: { permute: [1, 0, 3, 2, 5, 4, 7, 6] } }],
  });
  for (const op of REDUCE_OPS) {
    cases.push({
      id: `${op}/float32/rank8.permute/axes=1,3,5,6`,
      kind: 'reduce',
      op,
      dtype: 'float32',
      inputs: [{ shape: r8, gen: REDUCE_OP_DEFS[op].domain, view: { permute: [7, 6, 5, 4, 3, 2, 1, 0] } }],
      params: { axes: [1, 3, 5, 6] },
    });
    cases.push({
      id: `${op}/float32/rank7.stride/axes=0,2,4,6`,
      kind: 'reduce',
      op,
      dtype: 'float32',
      inputs: [
        { shape: [3, 4, 3, 4, 3, 4, 3], gen: REDUCE_OP_DEFS[op].domain, view: { stride: [1, 2, 1, -2, 1, 2, -1] } },
      ],
      params: { axes: [0, 2, 4, 6] },
    });
  }
  cases.push({
    id: 'expand/float32/rank8-tile',
    kind: 'movement',
    op: 'expand',
    dtype: 'float32',
    inputs: [{ shape: [2, 1, 3, 1, 2, 1, 3, 1], gen: U(-10, 10) }],
    params: { shape: [2, 2, 3, 2, 2, 3, 3, 2] },
  });
  cases.push({
    id: 'contiguous/int32/rank8.permute',
    kind: 'movement',
    op: 'contiguous',
    dtype: 'int32',
    inputs: [{ shape: r8, gen: I(-1000, 1000), dtype: 'int32', view: { permute: [0, 2, 4, 6, 1, 3, 5, 7] } }],
    params: {},
  });
  cases.push({
    id: 'pad/float32/rank7',
    kind: 'movement',
    op: 'pad',
    dtype: 'float32',
    inputs: [{ shape: [2, 1, 2, 1, 2, 1, 2], gen: U(-10, 10) }],
    params: {
      pads: [
        [0, 1],
        [1, 0],
        [0, 1],
        [1, 0],
        [0, 1],
        [1, 0],
        [0, 1],
      ],
      value: -1,
    },
  });
  cases.push({
    id: 'matmul/float32/rank9-batch7',
    kind: 'matmul',
    op: 'matmul',
    dtype: 'float32',
    inputs: [
      { shape: [2, 1, 2, 1, 2, 1, 2, 3, 4], gen: U(-1, 1) },
      { shape: [1, 2, 1, 2, 1, 2, 1, 4, 5], gen: U(-1, 1) },
    ],
  });
  cases.push(...layoutCases());
  cases.push(...indexCases());
  cases.push(...randomCases());
  return cases;
}

/** Every conformance case, in a stable order. */
export const CASES: readonly Case[] = buildCases();
