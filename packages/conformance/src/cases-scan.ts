/**
 * The conformance runners and cases of cumsum and topk (hal/src/ops/scan-ops.ts): odd sizes that take
 * one, two and three levels of blocks (tournament rounds), exact multiples of the block, an empty axis,
 * rank 0, 1 and 3, negative axes, strided, permuted and broadcast views, int32 wrap-around and
 * extremes, many ties (small integers), and NaN, ±Inf and ±0 for float32. Options: `params.scan`.
 */
import type { Case, InputSpec } from './cases.js';
import type { OpRunner } from './op-runners.js';
import { oCumsum, oTopk } from './oracle-scan.js';

export interface ScanParams {
  exclusive?: boolean;
  reverse?: boolean;
  largest?: boolean;
  sorted?: boolean;
}

export const SCAN_OP_RUNNERS = {
  cumsum: {
    device: (be, [x], p) => [be.cumsum(x!, p.axis ?? 0, p.scan)],
    oracle: ([x], p) => [oCumsum(x!, p.axis ?? 0, p.scan?.exclusive ?? false, p.scan?.reverse ?? false)],
  },
  topk: {
    device: (be, [x], p) => {
      const { values, indices } = be.topk(x!, p.k!, p.axis, p.scan);
      return [values, indices];
    },
    oracle: ([x], p) => oTopk(x!, p.k!, p.axis ?? -1, p.scan?.largest ?? true),
  },
} satisfies Record<string, OpRunner>;

const fmt = (s: number[]): string => `[${s.join(',')}]`;
const shown = (x: InputSpec): string => `${fmt(x.shape)}${x.view ? `.${Object.keys(x.view)[0]}` : ''}`;
const flags = (s: ScanParams): string =>
  Object.entries(s)
    .map(([k, v]) => `/${k}=${v}`)
    .join('');
// NaN and ±Inf among small finite values: a prefix with one infinity is that infinity, with both NaN
const SPECIAL = [1, -2, Infinity, 3, 0.5, Number.NaN, 4, -0, -Infinity, 2, 1e-30, -1];

export function scanCases(): Case[] {
  const cases: Case[] = [];
  for (const dtype of ['float32', 'int32', 'float64'] as const) {
    const gen =
      dtype !== 'int32'
        ? ({ kind: 'uniform', lo: -10, hi: 10 } as const)
        : ({ kind: 'int', lo: -1000, hi: 1000 } as const);
    const X = (shape: number[], view?: InputSpec['view'], g: InputSpec['gen'] = gen): InputSpec =>
      view ? { shape, gen: g, dtype, view } : { shape, gen: g, dtype };
    const cumsum = (x: InputSpec, axis: number, scan: ScanParams = {}, tag = ''): void => {
      cases.push({
        id: `cumsum/${dtype}/${shown(x)}${tag}/axis=${axis}${flags(scan)}`,
        kind: 'composite',
        op: 'cumsum',
        dtype,
        inputs: [x],
        params: { axis, scan },
      });
    };
    for (const scan of [{}, { exclusive: true }, { reverse: true }, { exclusive: true, reverse: true }])
      cumsum(X([37]), 0, scan);
    cumsum(X([5, 300]), 1);
    cumsum(X([3, 257, 2]), 1, { exclusive: true, reverse: true });
    cumsum(X([3, 257, 2]), -2, { reverse: true });
    cumsum(X([1000]), -1);
    cumsum(X([1000]), 0, { exclusive: true });
    cumsum(X([256]), 0);
    cumsum(X([4, 5, 6]), -3);
    cumsum(X([4, 5, 6]), 2, { exclusive: true });
    cumsum(X([]), 0);
    cumsum(X([]), -1, { exclusive: true });
    cumsum(X([3, 0]), 1);
    cumsum(X([0, 4]), 1, { reverse: true });
    cumsum(X([8, 40], { stride: [2, -1] }), 1);
    cumsum(X([6, 33], { permute: [1, 0] }), 1, { reverse: true });
    cumsum(X([1, 50], { expand: [3, 50] }), 1, { exclusive: true });
    if (dtype === 'int32') {
      const big = { kind: 'int', lo: 1e9, hi: 2e9 } as const;
      cumsum(X([70], undefined, big), 0, {}, '/wraps');
      cumsum(X([3, 40], undefined, { kind: 'int', lo: -2e9, hi: 2e9 }), 1, { reverse: true }, '/wraps');
    } else {
      const special = (shape: number[]): InputSpec => ({
        shape,
        gen,
        dtype,
        values: Array.from({ length: shape.reduce((p, d) => p * d, 1) }, (_, i) => SPECIAL[i % SPECIAL.length]!),
      });
      cumsum(special([12]), 0, {}, '/special');
      cumsum(special([12]), 0, { reverse: true, exclusive: true }, '/special');
      cumsum(special([3, 40]), 1, {}, '/special');
      cumsum(special([40, 3]), 0, { reverse: true }, '/special');
    }
    // topk: ties come from small integers; k = 0, 1, a few, n
    const topk = (x: InputSpec, k: number, axis: number, scan: ScanParams = {}, tag = ''): void => {
      cases.push({
        id: `topk/${dtype}/${shown(x)}${tag}/k=${k}/axis=${axis}${flags(scan)}`,
        kind: 'composite',
        op: 'topk',
        dtype,
        inputs: [x],
        params: { k, axis, scan },
      });
    };
    const ties = { kind: 'int', lo: -3, hi: 3 } as const;
    topk(X([37]), 5, 0);
    topk(X([37]), 5, -1, { largest: false });
    topk(X([37]), 37, 0, { sorted: false });
    topk(X([37]), 0, 0);
    topk(X([3, 300], undefined, ties), 3, 1, {}, '/ties');
    topk(X([3, 300], undefined, ties), 3, 1, { largest: false }, '/ties');
    topk(X([2, 1000], undefined, ties), 1, -1, {}, '/ties');
    topk(X([2, 1000]), 7, 1, { largest: false });
    topk(X([2, 200], undefined, ties), 60, 1, {}, '/ties');
    topk(X([5, 40, 3]), 10, 1);
    topk(X([5, 40, 3], undefined, ties), 4, -3, { largest: false }, '/ties');
    topk(X([9, 33], { permute: [1, 0] }), 4, 0);
    topk(X([8, 70], { stride: [2, -1] }, ties), 6, 1, {}, '/ties');
    topk(X([1, 50], { expand: [3, 50] }), 2, 1);
    topk(X([0, 5]), 2, 1);
    topk(X([4, 0]), 0, 1);
    topk(X([4, 0]), 0, 0);
    // few long rows: kernels may cut them into chunks and pick from the chunks' candidates; k = 64 and 65
    topk(X([1, 5000], undefined, ties), 9, 1, {}, '/ties');
    topk(X([3, 2000], undefined, ties), 64, 1, { largest: false }, '/ties');
    topk(X([2, 700], undefined, ties), 65, 1, {}, '/ties');
    topk(X([1100, 3], undefined, ties), 4, 0, {}, '/ties');
    if (dtype === 'int32') {
      const extremes = [0, 2147483647, -2147483648, 2147483647, 5, -2147483648, 1, -2147483648, 7, 2147483647];
      const ex: InputSpec = { shape: [10], gen: ties, dtype, values: extremes };
      topk(ex, 4, 0, {}, '/extremes');
      topk(ex, 4, 0, { largest: false }, '/extremes');
      topk({ shape: [40], gen: ties, dtype, values: Array.from({ length: 40 }, (_, i) => extremes[i % 10]!) }, 9, 0);
    } else {
      const special: InputSpec = { shape: [6, 24], gen: { kind: 'special' }, dtype };
      topk(special, 5, 1, {}, '/special');
      topk({ shape: [2, 3000], gen: { kind: 'special' }, dtype }, 5, 1, {}, '/special');
      topk({ shape: [2, 3000], gen: { kind: 'special' }, dtype }, 5, 1, { largest: false }, '/special');
      topk(special, 5, 1, { largest: false }, '/special');
      topk({ ...special, shape: [2, 100] }, 20, 1, {}, '/special');
      topk({ ...special, shape: [2, 100] }, 3, 1, { largest: false }, '/special');
    }
  }
  return cases;
}
