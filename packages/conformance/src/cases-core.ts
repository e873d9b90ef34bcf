/**
 * Conformance cases of the reductions, movement ops and matmul: axes sets, keepdims, empty axes, strided,
 * permuted and broadcast views, batched and transposed products.
 */
import { INT32_REDUCE_OPS, REDUCE_OP_DEFS, REDUCE_OPS } from '@polyhal/hal';
import type { Case, InputSpec, ViewSpec } from './cases.js';
import { fmt, I, SPECIAL, U, viewName } from './cases-util.js';
import type { Generator } from './random.js';

export function coreCases(): Case[] {
  const cases: Case[] = [];
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
    // contiguous rows (SIMD lanes on wasm) of the whole int32 range: sums wrap modulo 2^32
    cases.push({
      id: `${op}/int32/[5,67]/axes=1`,
      kind: 'reduce',
      op,
      dtype: 'int32',
      inputs: [{ shape: [5, 67], gen: I(-2147483648, 2147483647), dtype: 'int32' }],
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
  // int32: exact modulo 2^32 (sums past 2^31 wrap), int8-range values, tiles' edges, views, batches.
  const big = I(-(2 ** 31), 2 ** 31 - 1);
  const int8 = I(-128, 127);
  const mmInt: [InputSpec, InputSpec][] = [
    [
      { shape: [7, 9], gen: big, dtype: 'int32' },
      { shape: [9, 5], gen: big, dtype: 'int32' },
    ],
    [
      { shape: [65, 130], gen: int8, dtype: 'int32' },
      { shape: [130, 67], gen: int8, dtype: 'int32' },
    ],
    [
      { shape: [33, 17], gen: I(-1000, 1000), dtype: 'int32', view: { transpose: true } },
      { shape: [33, 20], gen: I(-1000, 1000), dtype: 'int32' },
    ],
    [
      { shape: [2, 3, 4, 5], gen: int8, dtype: 'int32' },
      { shape: [3, 5, 6], gen: int8, dtype: 'int32' },
    ],
    [
      { shape: [4, 0], gen: int8, dtype: 'int32' },
      { shape: [0, 5], gen: int8, dtype: 'int32' },
    ],
  ];
  // int8 and uint8 (wrapping results, as NumPy): int8 operands take webgpu's packed kernels (padding
  // past the 64-element tiles, views, batches).
  for (const dtype of ['int8', 'uint8'] as const) {
    const g = dtype === 'int8' ? int8 : I(0, 255);
    mmInt.push(
      [
        { shape: [65, 130], gen: g, dtype },
        { shape: [130, 67], gen: g, dtype },
      ],
      [
        { shape: [33, 17], gen: g, dtype, view: { transpose: true } },
        { shape: [33, 20], gen: g, dtype },
      ],
      [
        { shape: [2, 3, 4, 5], gen: g, dtype },
        { shape: [3, 5, 6], gen: g, dtype },
      ],
    );
  }
  for (const [a, b] of mmInt)
    cases.push({
      id: `matmul/${a.dtype}/${fmt(a.shape)}${viewName(a.view)}x${fmt(b.shape)}${viewName(b.view)}`,
      kind: 'matmul',
      op: 'matmul',
      dtype: a.dtype!,
      inputs: [a, b],
    });
  // With a bias (matmul-bias.ts): row, column, full, scalar and batch-varying biases, a transposed bias,
  // the batch-merged Linear shape, gemv, K = 0 and empty products; integers wrap.
  const u = U(-1, 1);
  const mmBias: [InputSpec, InputSpec, InputSpec][] = [
    [
      { shape: [17, 31], gen: u },
      { shape: [31, 33], gen: u },
      { shape: [33], gen: u },
    ],
    [
      { shape: [17, 31], gen: u },
      { shape: [33, 31], gen: u, view: { transpose: true } },
      { shape: [33], gen: u },
    ],
    [
      { shape: [33, 513], gen: u },
      { shape: [513, 7], gen: u },
      { shape: [33, 1], gen: u },
    ],
    [
      { shape: [64, 64], gen: u },
      { shape: [64, 64], gen: u },
      { shape: [64, 64], gen: u },
    ],
    [
      { shape: [128, 64], gen: u },
      { shape: [64, 256], gen: u },
      { shape: [256], gen: u },
    ],
    [
      { shape: [130, 70], gen: u },
      { shape: [70, 200], gen: u },
      { shape: [130, 1], gen: u },
    ],
    [
      { shape: [3, 17, 9], gen: u },
      { shape: [9, 5], gen: u },
      { shape: [5], gen: u },
    ],
    [
      { shape: [3, 17, 9], gen: u },
      { shape: [9, 5], gen: u },
      { shape: [17, 1], gen: u },
    ],
    [
      { shape: [3, 5, 7], gen: u },
      { shape: [3, 7, 4], gen: u },
      { shape: [3, 1, 4], gen: u },
    ],
    [
      { shape: [2, 1, 4, 5], gen: u },
      { shape: [3, 5, 6], gen: u },
      { shape: [], gen: u },
    ],
    [
      { shape: [3, 8], gen: u },
      { shape: [8, 5], gen: u },
      { shape: [5, 3], gen: u, view: { transpose: true } },
    ],
    [
      { shape: [70, 64], gen: u },
      { shape: [64, 3], gen: u },
      { shape: [3], gen: u },
    ],
    [
      { shape: [4, 0], gen: u },
      { shape: [0, 5], gen: u },
      { shape: [5], gen: u },
    ],
    [
      { shape: [0, 3], gen: u },
      { shape: [3, 4], gen: u },
      { shape: [4], gen: u },
    ],
    [
      { shape: [7, 9], gen: big, dtype: 'int32' },
      { shape: [9, 5], gen: big, dtype: 'int32' },
      { shape: [5], gen: big, dtype: 'int32' },
    ],
    [
      { shape: [65, 130], gen: int8, dtype: 'int8' },
      { shape: [130, 67], gen: int8, dtype: 'int8' },
      { shape: [67], gen: int8, dtype: 'int8' },
    ],
  ];
  for (const [a, b, c] of mmBias)
    cases.push({
      id:
        `matmul/${a.dtype ?? 'float32'}/${fmt(a.shape)}${viewName(a.view)}x${fmt(b.shape)}${viewName(b.view)}` +
        `+bias${fmt(c.shape)}${viewName(c.view)}`,
      kind: 'matmul',
      op: 'matmul',
      dtype: a.dtype ?? 'float32',
      inputs: [a, b, c],
    });
  return cases;
}
