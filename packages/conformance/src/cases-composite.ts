import type { Case, ViewSpec } from './cases.js';
import { P, SPECIAL, U, viewName } from './cases-util.js';

export function compositeCases(): Case[] {
  const cases: Case[] = [];
  // ---- composites ----
  const lse = (tag: string, input: Case['inputs'][number], params: Case['params']): void => {
    for (const dtype of ['float32', 'float64'] as const)
      cases.push({
        id: `logsumexp/${dtype}/${tag}`,
        kind: 'composite',
        op: 'logsumexp',
        dtype,
        inputs: [{ ...input, dtype }],
        params,
      });
  };
  lse('[31,17]/axis1', { shape: [31, 17], gen: U(-5, 5) }, { axes: [1] });
  lse('[4,1000]/large', { shape: [4, 1000], gen: U(-80, 80) }, { axes: [-1] });
  lse('[4,6,5]/axes0,2/keepdims', { shape: [4, 6, 5], gen: U(-3, 3) }, { axes: [0, 2], keepdims: true });
  lse('[7,9].permute/all', { shape: [7, 9], gen: U(-3, 3), view: { permute: [1, 0] } }, {});
  lse('[16,4]/special', { shape: [16, 4], gen: SPECIAL }, { axes: [1] });
  lse('[3,0]/axis1', { shape: [3, 0], gen: U(-1, 1) }, { axes: [1] });
  lse('[]', { shape: [], gen: U(-5, 5) }, {});
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
    // NaN, ±Inf and huge values in rows; a row-major view at an offset; a transposed view (webgpu: the composite)
    const more: [string, Case['inputs'][number], number][] = [
      ['[16,4]/special', { shape: [16, 4], gen: SPECIAL }, -1],
      [
        '[6,130].shrink',
        {
          shape: [6, 130],
          gen: U(-5, 5),
          view: {
            shrink: [
              [1, 5],
              [0, 130],
            ],
          },
        },
        -1,
      ],
      ['[7,9].permute', { shape: [7, 9], gen: U(-5, 5), view: { permute: [1, 0] } }, -1],
    ];
    for (const [tag, input, axis] of more)
      cases.push({
        id: `${op}/float32/${tag}`,
        kind: 'composite',
        op,
        dtype: 'float32',
        inputs: [input],
        params: { axis },
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
    // A large first step: the update is ±lr·(1 − 1e-5)-ish, so 1 − β must not be rounded to float32 first
    // (1 − f32(0.999) is 1.3e-5 off, which moves it by 3e-6).
    { lr: 0.5, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, step: 1 },
  ];
  adam.forEach((hyper, k) => {
    for (const view of [undefined, { permute: [1, 0] }] as (ViewSpec | undefined)[]) {
      cases.push({
        id: `adamStep/float32/[31,33]${['', '/adamw', '/lr0.5'][k]}${viewName(view)}`,
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
  return cases;
}
