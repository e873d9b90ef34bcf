/**
 * Conformance cases of the index ops (gather, scatterAdd, oneHot): odd sizes, every axis, indices of
 * rank 0 to 2 with negative and out-of-range values (drawn from [−n − 3, n + 2], so both kinds occur),
 * duplicates (scatterAdd sums them in index order), empty arrays and index lists, strided, permuted
 * and broadcast views of x, the target, the updates and the indices, on float32 and int32.
 */
import type { Case, InputSpec, ViewSpec } from './cases.js';

export function indexCases(): Case[] {
  const cases: Case[] = [];
  const idx = (shape: number[], n: number, view?: ViewSpec): InputSpec => ({
    shape,
    gen: { kind: 'int', lo: -n - 3, hi: n + 2 },
    dtype: 'int32',
    view,
  });
  const tag = (shape: number[], view?: ViewSpec): string =>
    `[${shape.join(',')}]${view ? `.${Object.keys(view)[0]}` : ''}`;
  for (const dtype of ['float32', 'int32'] as const) {
    const gen =
      dtype === 'float32'
        ? ({ kind: 'uniform', lo: -10, hi: 10 } as const)
        : ({ kind: 'int', lo: -1000, hi: 1000 } as const);
    const val = (shape: number[], view?: ViewSpec): InputSpec => ({ shape, gen, dtype, view });
    const add = (op: string, id: string, inputs: InputSpec[], params: Case['params']): void => {
      cases.push({ id: `${op}/${dtype}/${id}`, kind: 'movement', op, dtype, inputs, params });
    };
    // gather: [x shape, view], [indices shape, view], axis; x's dim along axis is n for the indices.
    const gathers: [number[], ViewSpec | undefined, number[], ViewSpec | undefined, number][] = [
      [[7, 5], undefined, [11], undefined, 0],
      [[7, 5], undefined, [3, 4], undefined, 1],
      [[2, 9, 3], undefined, [], undefined, 1],
      [[2, 9, 3], undefined, [17], undefined, -1],
      [[33], undefined, [5, 7], undefined, 0],
      [[6, 4], { permute: [1, 0] }, [9], undefined, 0],
      [[8, 10], { stride: [2, -1] }, [13], { stride: [-1] }, 1],
      [[3, 1], { expand: [3, 5] }, [2, 3], { permute: [1, 0] }, 0],
      [[5, 3], undefined, [0], undefined, 0],
      [[0, 3], undefined, [4], undefined, 0],
      [[4, 0], undefined, [6], undefined, 0],
    ];
    for (const [xs, xv, is, iv, axis] of gathers) {
      const shown = xv && 'expand' in xv ? xv.expand : xv && 'permute' in xv ? [...xs].reverse() : xs;
      const dims = xv && 'stride' in xv ? xs.map((d, i) => Math.ceil(d / Math.abs(xv.stride[i]!))) : shown;
      const n = dims[axis < 0 ? axis + dims.length : axis]!;
      add('gather', `${tag(xs, xv)}/idx${tag(is, iv)}/axis=${axis}`, [val(xs, xv), idx(is, n, iv)], { axis });
    }
    // scatterAdd: target [shape, view], indices shape (a dim of 3 into a dim of n: duplicates), axis; updates follow.
    const scatters: [number[], ViewSpec | undefined, number[], number, ViewSpec | undefined][] = [
      [[5, 4], undefined, [9], 0, undefined],
      [[3, 7], undefined, [2, 6], 1, undefined],
      [[2, 6, 3], undefined, [31], 1, undefined],
      [[4, 3], { permute: [1, 0] }, [7], -1, undefined],
      [[5, 3], undefined, [4], 0, { permute: [1, 0] }],
      [[1, 3], { expand: [6, 3] }, [5], 0, undefined],
      [[5, 3], undefined, [0], 0, undefined],
      [[0, 3], undefined, [4], 1, undefined],
    ];
    for (const [ts, tv, is, axis, uv] of scatters) {
      const dims = tv && 'expand' in tv ? tv.expand : tv && 'permute' in tv ? [...ts].reverse() : ts;
      const ax = axis < 0 ? axis + dims.length : axis;
      const us = [...dims.slice(0, ax), ...is, ...dims.slice(ax + 1)];
      const stored = uv && 'permute' in uv ? [...us].reverse() : us;
      add(
        'scatterAdd',
        `${tag(ts, tv)}/idx${tag(is)}/upd${tag(stored, uv)}/axis=${axis}`,
        [val(ts, tv), idx(is, dims[ax]!), val(stored, uv)],
        { axis },
      );
    }
  }
  for (const [is, depth, iv] of [
    [[13], 5, undefined],
    [[3, 4], 7, undefined],
    [[], 3, undefined],
    [[6, 5], 4, { permute: [1, 0] }],
    [[4], 0, undefined],
    [[0], 3, undefined],
    [[700], 9, undefined],
  ] as [number[], number, ViewSpec | undefined][]) {
    cases.push({
      id: `oneHot/float32/idx${tag(is, iv)}/depth=${depth}`,
      kind: 'movement',
      op: 'oneHot',
      dtype: 'float32',
      inputs: [idx(is, depth, iv)],
      params: { depth },
    });
  }
  // argmax/argmin: small integer values (many ties), special values (NaN, ±Inf, ±0) and int32 extremes
  for (const op of ['argmax', 'argmin'] as const) {
    const arg = (dtype: 'float32' | 'int32', tag: string, input: InputSpec, params: Case['params']): void => {
      cases.push({ id: `${op}/${dtype}/${tag}`, kind: 'movement', op, dtype, inputs: [input], params });
    };
    const ties = { kind: 'int', lo: -3, hi: 3 } as const;
    arg('float32', '[31,33]/axis=0', { shape: [31, 33], gen: ties }, { axis: 0 });
    arg('float32', '[31,33]/axis=1/keepdims', { shape: [31, 33], gen: ties }, { axis: 1, keepdims: true });
    arg('float32', '[2,3,17]/axis=-1/last', { shape: [2, 3, 17], gen: ties }, { axis: -1, lastIndex: true });
    arg('float32', '[6,7].permute/axis=0', { shape: [6, 7], gen: ties, view: { permute: [1, 0] } }, { axis: 0 });
    arg('float32', '[513]/flattened', { shape: [513], gen: { kind: 'uniform', lo: -10, hi: 10 } }, {});
    arg('float32', '[4,5]/flattened/keepdims', { shape: [4, 5], gen: ties }, { keepdims: true });
    arg('float32', '[8,8]/axis=1/special', { shape: [8, 8], gen: { kind: 'special' } }, { axis: 1 });
    // few long rows (kernels may scan them in chunks, then the chunks' candidates)
    arg('float32', '[2,5000]/axis=1', { shape: [2, 5000], gen: ties }, { axis: 1 });
    arg('float32', '[2,5000]/axis=1/last', { shape: [2, 5000], gen: ties }, { axis: 1, lastIndex: true });
    arg('float32', '[1100,3]/axis=0', { shape: [1100, 3], gen: ties }, { axis: 0 });
    arg('float32', '[3000]/flattened/special', { shape: [3000], gen: { kind: 'special' } }, {});
    arg('float32', '[3000]/flattened/special/last', { shape: [3000], gen: { kind: 'special' } }, { lastIndex: true });
    arg(
      'float32',
      '[8,8]/axis=0/special/last',
      { shape: [8, 8], gen: { kind: 'special' } },
      { axis: 0, lastIndex: true },
    );
    arg(
      'int32',
      '[31,33]/axis=0',
      { shape: [31, 33], gen: { kind: 'int', lo: -4, hi: 4 }, dtype: 'int32' },
      { axis: 0 },
    );
    arg(
      'int32',
      '[3,1].expand/axis=1',
      { shape: [3, 1], gen: { kind: 'int', lo: -9, hi: 9 }, dtype: 'int32', view: { expand: [3, 5] } },
      { axis: 1 },
    );
    arg(
      'int32',
      '[7]/extremes',
      { shape: [7], values: [0, 2147483647, -2147483648, 2147483647, 5, -2147483648, 1], gen: ties, dtype: 'int32' },
      {},
    );
  }
  return cases;
}
