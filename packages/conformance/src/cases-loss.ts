/**
 * Conformance cases and runners of the loss functions (hal/src/ops/loss-ops.ts): nllLoss and
 * crossEntropy on [N, C] and [N, C, d1, d2] with every reduction, class weights, ignoreIndex (negative,
 * in range, and PyTorch's −100 default), labels out of range (NaN), ignored targets whose scores are NaN
 * or −Inf (exactly 0), −Inf-masked logits, label smoothing, empty batches and views of every operand;
 * binaryCrossEntropyWithLogits with soft and hard targets over logits up to ±60, element and posWeight
 * weights broadcast along the last dim. The oracle is oracle-loss.ts.
 */
import type { ComputeBackend, NDArray } from '@polyhal/hal';
import type { Case, InputSpec, ViewSpec } from './cases.js';
import { fmt, I, P, U, viewName } from './cases-util.js';
import type { OpRunner } from './op-runners.js';
import { oBinaryCrossEntropyWithLogits, oClassLoss, type Reduction } from './oracle-loss.js';
import type { Ref } from './oracle.js';

export interface LossCaseParams {
  reduction: Reduction;
  ignoreIndex?: number;
  labelSmoothing?: number;
  /** The optional weights given, as inputs after the two operands, in this order. */
  weights?: ('weight' | 'posWeight')[];
}

const REDUCTIONS: readonly Reduction[] = ['none', 'sum', 'mean'];

/** The options object of a case, with its weight inputs. */
function options<T>(xs: T[], p: LossCaseParams): Record<string, unknown> {
  const o: Record<string, unknown> = { reduction: p.reduction };
  (p.weights ?? []).forEach((w, i) => (o[w] = xs[2 + i]));
  if (p.ignoreIndex !== undefined) o['ignoreIndex'] = p.ignoreIndex;
  if (p.labelSmoothing !== undefined) o['labelSmoothing'] = p.labelSmoothing;
  return o;
}

const classRunner = (op: 'nllLoss' | 'crossEntropy'): OpRunner => ({
  device: (be: ComputeBackend, xs: NDArray[], p) => [be[op](xs[0]!, xs[1]!, options(xs, p.loss!) as never)],
  oracle: (xs: Ref[], p) => {
    const o = options(xs, p.loss!);
    return [
      oClassLoss(xs[0]!, xs[1]!, o['weight'] as Ref | undefined, {
        ignoreIndex: p.loss!.ignoreIndex ?? -100,
        reduction: p.loss!.reduction,
        labelSmoothing: p.loss!.labelSmoothing ?? 0,
        logits: op === 'crossEntropy',
      }),
    ];
  },
});

export const LOSS_OP_RUNNERS = {
  nllLoss: classRunner('nllLoss'),
  crossEntropy: classRunner('crossEntropy'),
  binaryCrossEntropyWithLogits: {
    device: (be, xs, p) => [be.binaryCrossEntropyWithLogits(xs[0]!, xs[1]!, options(xs, p.loss!) as never)],
    oracle: (xs, p) => {
      const o = options(xs, p.loss!);
      return [
        oBinaryCrossEntropyWithLogits(
          xs[0]!,
          xs[1]!,
          o['weight'] as Ref | undefined,
          o['posWeight'] as Ref | undefined,
          p.loss!.reduction,
        ),
      ];
    },
  },
} satisfies Record<string, OpRunner>;

interface ClassCase {
  tag: string;
  scores: InputSpec;
  labels: InputSpec;
  weight?: InputSpec;
  ignoreIndex?: number;
  labelSmoothing?: number;
  reductions?: readonly Reduction[];
}

export function lossCases(): Case[] {
  const cases: Case[] = [];
  const lab = (shape: number[], lo: number, hi: number, view?: ViewSpec): InputSpec => ({
    shape,
    gen: I(lo, hi),
    dtype: 'int32',
    view,
  });
  const push = (op: string, c: ClassCase): void => {
    for (const reduction of c.reductions ?? REDUCTIONS) {
      const loss: LossCaseParams = { reduction };
      if (c.weight) loss.weights = ['weight'];
      if (c.ignoreIndex !== undefined) loss.ignoreIndex = c.ignoreIndex;
      if (c.labelSmoothing !== undefined) loss.labelSmoothing = c.labelSmoothing;
      cases.push({
        id: `${op}/float32/${c.tag}/${reduction}`,
        kind: 'composite',
        op,
        dtype: 'float32',
        inputs: [c.scores, c.labels, ...(c.weight ? [c.weight] : [])],
        params: { loss },
      });
    }
  };
  const weight = (C: number, view?: ViewSpec): InputSpec =>
    view ? { shape: [C * 2], gen: P(0.25, 2), view } : { shape: [C], gen: P(0.25, 2) };
  const inf = Infinity;
  for (const op of ['nllLoss', 'crossEntropy'] as const) {
    const sc = (shape: number[], view?: ViewSpec): InputSpec => ({
      shape,
      gen: op === 'nllLoss' ? U(-8, 0) : U(-20, 20),
      view,
    });
    push(op, { tag: '[13,7]', scores: sc([13, 7]), labels: lab([13], 0, 6) });
    push(op, { tag: '[13,7]/weight', scores: sc([13, 7]), labels: lab([13], 0, 6), weight: weight(7) });
    // labels −1 ignored (negative ignoreIndex), with and without weights
    const ii = { scores: sc([29, 5]), labels: lab([29], -1, 4), ignoreIndex: -1 };
    push(op, { tag: '[29,5]/ignore=-1', ...ii });
    push(op, { tag: '[29,5]/ignore=-1/weight', ...ii, weight: weight(5) });
    // an ignoreIndex inside [0, C)
    push(op, {
      tag: '[17,4]/ignore=2/weight',
      scores: sc([17, 4]),
      labels: lab([17], 0, 3),
      ignoreIndex: 2,
      weight: weight(4),
    });
    // PyTorch's default −100 among the labels
    push(op, {
      tag: '[6,3]/default-ignore',
      scores: sc([6, 3]),
      labels: { shape: [6], gen: I(0, 2), values: [0, -100, 2, 1, -100, 2], dtype: 'int32' },
    });
    // higher rank [N, C, d1, d2]
    const nd = { scores: sc([3, 5, 4, 6]), labels: lab([3, 4, 6], -1, 4), ignoreIndex: -1 };
    push(op, { tag: '[3,5,4,6]/ignore=-1', ...nd });
    push(op, { tag: '[3,5,4,6]/ignore=-1/weight', ...nd, weight: weight(5) });
    push(op, { tag: '[2,4,7]/weight', scores: sc([2, 4, 7]), labels: lab([2, 7], 0, 3), weight: weight(4) });
    // labels out of range (negative ones too) give NaN; none of them equals the default ignoreIndex
    push(op, {
      tag: '[23,6]/out-of-range',
      scores: sc([23, 6]),
      labels: lab([23], -3, 8),
      reductions: ['none', 'sum'],
    });
    // views: permuted scores, strided labels, a strided weight
    push(op, {
      tag: `[7,9]${viewName({ permute: [1, 0] })}/weight.stride`,
      scores: sc([9, 7], { permute: [1, 0] }),
      labels: lab([14], -1, 8, { stride: [2] }),
      ignoreIndex: -1,
      weight: weight(9, { stride: [2] }),
    });
    // empty batch: 'mean' is 0/0 = NaN, 'sum' 0
    push(op, { tag: '[0,4]', scores: sc([0, 4]), labels: lab([0], 0, 3) });
    // every target ignored: 'mean' NaN
    push(op, { tag: '[3,4]/all-ignored', scores: sc([3, 4]), labels: lab([3], -1, -1), ignoreIndex: -1 });
    // ignored targets over NaN, −Inf and +Inf scores are exactly 0; the others' rows stay finite
    const special = [NaN, 1, 2, -inf, -1, 0, inf, 3, NaN, -2, -3, -4];
    push(op, {
      tag: '[4,3]/ignored-special',
      scores: { shape: [4, 3], gen: U(0, 1), values: op === 'nllLoss' ? special.map((v) => -Math.abs(v)) : special },
      labels: { shape: [4], gen: I(0, 2), values: [7, 7, 7, 1], dtype: 'int32' },
      ignoreIndex: 7,
      weight: weight(3),
    });
  }
  // crossEntropy only: large logits, −Inf-masked classes (finite loss), label smoothing
  push('crossEntropy', {
    tag: '[4,1000]/large-logits',
    scores: { shape: [4, 1000], gen: U(-80, 80) },
    labels: lab([4], 0, 999),
  });
  const masked: number[] = [];
  const maskedLabels: number[] = [];
  for (let n = 0; n < 8; n++) {
    for (let c = 0; c < 6; c++) masked.push(c % 3 === 0 ? -inf : Math.fround(Math.sin(n * 6 + c) * 5));
    maskedLabels.push([1, 2, 4, 5][n % 4]!);
  }
  push('crossEntropy', {
    tag: '[8,6]/masked',
    scores: { shape: [8, 6], gen: U(0, 1), values: masked },
    labels: { shape: [8], gen: I(0, 5), values: maskedLabels, dtype: 'int32' },
  });
  for (const eps of [0.1, 1]) {
    push('crossEntropy', {
      tag: `[19,8]/smoothing=${eps}`,
      scores: { shape: [19, 8], gen: U(-10, 10) },
      labels: lab([19], -1, 7),
      ignoreIndex: -1,
      labelSmoothing: eps,
    });
  }
  push('crossEntropy', {
    tag: '[2,5,3,4]/smoothing=0.2/weight',
    scores: { shape: [2, 5, 3, 4], gen: U(-10, 10) },
    labels: lab([2, 3, 4], -1, 4),
    ignoreIndex: -1,
    labelSmoothing: 0.2,
    weight: weight(5),
  });
  // binaryCrossEntropyWithLogits
  const bce = (tag: string, inputs: InputSpec[], weights: LossCaseParams['weights'] = []): void => {
    for (const reduction of REDUCTIONS)
      cases.push({
        id: `binaryCrossEntropyWithLogits/float32/${tag}/${reduction}`,
        kind: 'composite',
        op: 'binaryCrossEntropyWithLogits',
        dtype: 'float32',
        inputs,
        params: { loss: { reduction, weights } },
      });
  };
  const x = (shape: number[], view?: ViewSpec): InputSpec => ({ shape, gen: U(-30, 30), view });
  const soft = (shape: number[], view?: ViewSpec): InputSpec => ({ shape, gen: U(0, 1), view });
  bce('[31,17]', [x([31, 17]), soft([31, 17])]);
  bce('[31,17]/hard', [
    { shape: [31, 17], gen: U(-60, 60) },
    { shape: [31, 17], gen: I(0, 1) },
  ]);
  bce('[31,17]/weight', [x([31, 17]), soft([31, 17]), { shape: [31, 17], gen: P(0, 2) }], ['weight']);
  bce('[31,17]/posWeight[17]', [x([31, 17]), soft([31, 17]), { shape: [17], gen: P(0.25, 4) }], ['posWeight']);
  bce(
    '[5,4,9]/hard/weight[9]/posWeight[4,1]',
    [
      x([5, 4, 9]),
      { shape: [5, 4, 9], gen: I(0, 1) },
      { shape: [9], gen: P(0, 2) },
      { shape: [4, 1], gen: P(0.25, 4) },
    ],
    ['weight', 'posWeight'],
  );
  bce(`[9,6]${viewName({ permute: [1, 0] })}`, [x([6, 9], { permute: [1, 0] }), soft([9, 12], { stride: [1, 2] })]);
  bce('[0,3]', [x([0, 3]), soft([0, 3])]);
  bce(fmt([1]), [x([1]), soft([1])]);
  return cases;
}
