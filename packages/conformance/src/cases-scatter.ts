/**
 * Conformance cases and runners of scatter, gatherND, scatterND and scatterElements (oracle:
 * oracle-scatter.ts): odd shapes, indices with negative and out-of-range values (drawn from
 * [−n − 2, n + 1] for the largest indexed dim n, so both kinds occur), duplicates (more index tuples
 * than positions), every reduction, batch dims, tuples of 0 to 3 components, empty operands and index
 * lists, strided, permuted and broadcast views, on float32 and int32.
 */
import type { Case, InputSpec, ViewSpec } from './cases.js';
import type { OpRunner } from './op-runners.js';
import { oGatherND, oScatter, oScatterElements, oScatterND, type Reduction } from './oracle-scatter.js';

/** A spec's shape as the op sees it (after its view). */
function seen(shape: number[], view?: ViewSpec): number[] {
  if (!view) return shape;
  if ('expand' in view) return view.expand;
  if ('permute' in view) return view.permute.map((d) => shape[d]!);
  if ('stride' in view) return shape.map((d, i) => Math.ceil(d / Math.abs(view.stride[i]!)));
  return shape;
}

type Operand = [number[], ViewSpec?];

export function scatterCases(): Case[] {
  const cases: Case[] = [];
  const tag = ([shape, view]: Operand): string => `[${shape.join(',')}]${view ? `.${Object.keys(view)[0]}` : ''}`;
  const idx = ([shape, view]: Operand, n: number): InputSpec => ({
    shape,
    gen: { kind: 'int', lo: -n - 2, hi: n + 1 },
    dtype: 'int32',
    view,
  });
  for (const dtype of ['float32', 'int32'] as const) {
    const gen =
      dtype === 'float32'
        ? ({ kind: 'uniform', lo: -10, hi: 10 } as const)
        : ({ kind: 'int', lo: -1000, hi: 1000 } as const);
    const val = ([shape, view]: Operand): InputSpec => ({ shape, gen, dtype, view });
    const add = (op: string, id: string, inputs: InputSpec[], params: Case['params']): void => {
      cases.push({ id: `${op}/${dtype}/${id}`, kind: 'movement', op, dtype, inputs, params });
    };
    // scatter along an axis: target, indices, axis, reductions; the updates follow (stored as given)
    const scatters: [Operand, Operand, number, Reduction[], ViewSpec?][] = [
      [[[5, 4]], [[9]], 0, ['none', 'add', 'mul']],
      [[[3, 7]], [[2, 6]], 1, ['none']],
      [[[2, 6, 3]], [[31]], 1, ['none', 'mul']],
      [[[4, 3], { permute: [1, 0] }], [[7]], -1, ['none']],
      [[[5, 3]], [[4]], 0, ['none'], { permute: [1, 0] }],
      [[[1, 3], { expand: [6, 3] }], [[13], { stride: [-1] }], 0, ['none', 'add']],
      [[[5, 3]], [[0]], 0, ['none']],
      [[[0, 3]], [[4]], 1, ['none']],
    ];
    for (const [t, i, axis, reductions, uv] of scatters) {
      const ts = seen(...t);
      const ax = axis < 0 ? axis + ts.length : axis;
      const us = [...ts.slice(0, ax), ...seen(...i), ...ts.slice(ax + 1)];
      const u: Operand = [uv && 'permute' in uv ? [...us].reverse() : us, uv];
      for (const reduction of reductions)
        add(
          'scatter',
          `${tag(t)}/idx${tag(i)}/upd${tag(u)}/axis=${axis}/${reduction}`,
          [val(t), idx(i, ts[ax]!), val(u)],
          {
            axis,
            index: { reduction },
          },
        );
    }
    // gatherND: x, indices [..., q], batchDims
    const gathers: [Operand, Operand, number][] = [
      [[[5, 4, 3]], [[7, 2]], 0],
      [[[6, 5]], [[4, 3, 1]], 0],
      [[[4, 5]], [[9, 2]], 0],
      [[[3, 4, 5]], [[3, 6, 1]], 1],
      [[[2, 3, 4, 5]], [[2, 3, 4, 2]], 2],
      [[[2, 3, 4]], [[5, 3]], 0],
      [[[4, 6]], [[5, 0]], 0],
      [[[6, 4], { permute: [1, 0] }], [[5, 2]], 0],
      [[[8, 10], { stride: [2, -1] }], [[2, 7], { permute: [1, 0] }], 0],
      [[[0, 3]], [[4, 1]], 0],
      [[[5, 4]], [[0, 2]], 0],
      [[[40, 50]], [[700, 2]], 0],
    ];
    for (const [x, i, batchDims] of gathers) {
      const xs = seen(...x);
      const is = seen(...i);
      const n = Math.max(1, ...xs.slice(batchDims, batchDims + is[is.length - 1]!));
      add('gatherND', `${tag(x)}/idx${tag(i)}/batchDims=${batchDims}`, [val(x), idx(i, n)], { index: { batchDims } });
    }
    // scatterND: target, indices [..., q], reductions, updates' view
    const scatterNDs: [Operand, Operand, Reduction[], ViewSpec?][] = [
      [[[5, 4]], [[9, 1]], ['none', 'add', 'mul']],
      [[[4, 5, 3]], [[6, 2]], ['none']],
      [[[3, 4]], [[2, 5, 2]], ['none', 'add']],
      [[[4, 3]], [[3, 0]], ['none', 'add']],
      [[[3, 3, 3]], [[12, 3]], ['none', 'mul']],
      [[[6, 4], { permute: [1, 0] }], [[7, 1]], ['none']],
      [[[6, 5]], [[9, 1], { stride: [1, 1] }], ['none'], { permute: [1, 0] }],
      [[[1, 3], { expand: [6, 3] }], [[5, 1]], ['none']],
      [[[5, 4]], [[0, 1]], ['none']],
      [[[0, 3]], [[4, 1]], ['none']],
      [[[30, 8]], [[600, 1]], ['none', 'add']],
    ];
    for (const [t, i, reductions, uv] of scatterNDs) {
      const ts = seen(...t);
      const is = seen(...i);
      const q = is[is.length - 1]!;
      const us = [...is.slice(0, -1), ...ts.slice(q)];
      const u: Operand = [uv && 'permute' in uv ? [...us].reverse() : us, uv];
      const n = Math.max(1, ...ts.slice(0, q));
      for (const reduction of reductions)
        add('scatterND', `${tag(t)}/idx${tag(i)}/upd${tag(u)}/${reduction}`, [val(t), idx(i, n), val(u)], {
          index: { reduction },
        });
    }
    // scatterElements: target, indices (updates of their shape), axis, reductions
    const elements: [Operand, Operand, number, Reduction[]][] = [
      [[[5, 4]], [[7, 4]], 0, ['none', 'add', 'mul']],
      [[[4, 6]], [[3, 9]], 1, ['none']],
      [[[3, 4, 5]], [[2, 3, 6]], -1, ['none', 'add']],
      [[[6]], [[10]], 0, ['none']],
      [[[4, 5]], [[5, 3], { permute: [1, 0] }], 0, ['none']],
      [[[6, 4], { stride: [2, 1] }], [[5, 4]], 0, ['none']],
      [[[5, 4]], [[0, 4]], 0, ['none']],
      [[[0, 3]], [[2, 3]], 0, ['none']],
    ];
    for (const [t, i, axis, reductions] of elements) {
      const ts = seen(...t);
      const u: Operand = [seen(...i)];
      const ax = axis < 0 ? axis + ts.length : axis;
      for (const reduction of reductions)
        add('scatterElements', `${tag(t)}/idx${tag(i)}/axis=${axis}/${reduction}`, [val(t), idx(i, ts[ax]!), val(u)], {
          axis,
          index: { reduction },
        });
    }
  }
  return cases;
}

const red = (p: NonNullable<Case['params']>): Reduction => p.index?.reduction ?? 'none';

/** The runners of the ops above (ARRAY_OP_RUNNERS, op-runners.ts). */
export const SCATTER_OP_RUNNERS = {
  scatter: {
    device: (be, [t, i, u], p) => [be.scatter(t!, i!, u!, p.axis, red(p))],
    oracle: ([t, i, u], p) => [oScatter(t!, i!, u!, p.axis ?? 0, red(p))],
  },
  gatherND: {
    device: (be, [x, i], p) => [be.gatherND(x!, i!, p.index?.batchDims)],
    oracle: ([x, i], p) => [oGatherND(x!, i!, p.index?.batchDims ?? 0)],
  },
  scatterND: {
    device: (be, [t, i, u], p) => [be.scatterND(t!, i!, u!, red(p))],
    oracle: ([t, i, u], p) => [oScatterND(t!, i!, u!, red(p))],
  },
  scatterElements: {
    device: (be, [t, i, u], p) => [be.scatterElements(t!, i!, u!, p.axis, red(p))],
    oracle: ([t, i, u], p) => [oScatterElements(t!, i!, u!, p.axis ?? 0, red(p))],
  },
} satisfies Record<string, OpRunner>;
