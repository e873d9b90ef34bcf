// Optimizers and learning-rate schedulers check their hyper-parameters when they are constructed: a value
// outside its domain, a non-number (the string '0.1') or an unknown option is an InvalidArgumentError that
// names the class, the parameter and the value — at `new Adam(...)`, not at the first step().
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { Tensor } from '@polyhal/autograd';
import { CpuBackend } from '@polyhal/backend-cpu';
import { InvalidArgumentError } from '@polyhal/hal';

let cpu: CpuBackend;
let params: Tensor[];
beforeAll(() => {
  cpu = new CpuBackend();
  params = [Tensor.fromArray(cpu, [1, -2], [2], { requiresGrad: true })];
});
afterAll(() => {
  for (const p of params) p.dispose();
  cpu.dispose();
});

type Make = (ps: unknown, opts?: unknown) => ag.Optimizer;
const OPTIMIZERS: Record<string, { make: Make; base: Record<string, unknown> }> = {
  SGD: { make: (ps, o) => new ag.SGD(ps as Tensor[], o as ag.SgdOptions), base: { lr: 0.1 } },
  Adam: { make: (ps, o) => new ag.Adam(ps as Tensor[], o as ag.AdamOptions), base: {} },
  AdamW: { make: (ps, o) => new ag.AdamW(ps as Tensor[], o as ag.AdamOptions), base: {} },
  RMSprop: { make: (ps, o) => new ag.RMSprop(ps as Tensor[], o as ag.RmspropOptions), base: {} },
  Adagrad: { make: (ps, o) => new ag.Adagrad(ps as Tensor[], o as ag.AdagradOptions), base: {} },
  Adadelta: { make: (ps, o) => new ag.Adadelta(ps as Tensor[], o as ag.AdadeltaOptions), base: {} },
  Adamax: { make: (ps, o) => new ag.Adamax(ps as Tensor[], o as ag.AdamaxOptions), base: {} },
};

/** Expects `fn` to throw InvalidArgumentError whose message matches every pattern. */
function expectInvalid(fn: () => unknown, ...patterns: RegExp[]): void {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(InvalidArgumentError);
  for (const p of patterns) expect((caught as Error).message).toMatch(p);
}

const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const NOT_NUMBERS: unknown[] = ['0.1', null, true, [0.1], {}];
const NON_FINITE = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
/** Each rule: option, values refused (with how the message shows them), values accepted. */
interface Rule {
  option: string;
  bad: [unknown, string][];
  good: unknown[];
}
const shown = (v: unknown): [unknown, string] => [
  v,
  typeof v === 'string' ? `'${v}'` : Array.isArray(v) ? `[${v.join(', ')}]` : v === null ? 'null' : String(v),
];
const domain = (refused: unknown[], extra: unknown[] = []): [unknown, string][] =>
  [...refused, ...NON_FINITE, ...NOT_NUMBERS.filter((v) => typeof v !== 'object' || v === null), ...extra].map(shown);

const LR: Rule = { option: 'lr', bad: domain([0, -0, -1, -1e-9]), good: [1e-12, 0.1, 10] };
const WEIGHT_DECAY: Rule = { option: 'weightDecay', bad: domain([-0.01, -1]), good: [0, 0.01, 5] };
const EPS: Rule = { option: 'eps', bad: domain([0, -1e-8]), good: [1e-30, 1e-8, 1] };
const RULES: Record<string, Rule[]> = {
  SGD: [LR, { option: 'momentum', bad: domain([-0.1, -1]), good: [0, 0.9, 1.5] }, WEIGHT_DECAY],
  Adam: [LR, { option: 'eps', bad: domain([0, -1e-8]), good: [1e-30, 1e-8, 1] }, WEIGHT_DECAY],
  AdamW: [LR, { option: 'eps', bad: domain([0, -1e-8]), good: [1e-30, 1e-8, 1] }, WEIGHT_DECAY],
  RMSprop: [LR, EPS, WEIGHT_DECAY, { option: 'momentum', bad: domain([-0.1]), good: [0, 0.9] }],
  Adagrad: [LR, EPS, WEIGHT_DECAY, { option: 'lrDecay', bad: domain([-0.1]), good: [0, 0.5] }],
  Adadelta: [LR, EPS, WEIGHT_DECAY],
  Adamax: [LR, EPS, WEIGHT_DECAY],
};

test('the table covers every optimizer class the package exports', () => {
  const exported = Object.entries(ag)
    .filter(([, v]) => typeof v === 'function' && v.prototype instanceof ag.Optimizer)
    .map(([k]) => k)
    .sort();
  expect(exported).toEqual(Object.keys(OPTIMIZERS).sort());
});

for (const [name, { make, base }] of Object.entries(OPTIMIZERS)) {
  describe(name, () => {
    for (const rule of RULES[name]!) {
      test.each(rule.bad)(
        `${rule.option} = %p is refused at construction, naming ${name}, the option and the value`,
        (v, text) => {
          const pattern = new RegExp(`^${name}: ${rule.option} must be a finite number .*, got ${esc(text)}$`);
          expectInvalid(() => make(params, { ...base, [rule.option]: v }), pattern);
        },
      );
      test(`${rule.option} at the edges of its domain is accepted: ${rule.good.join(', ')}`, () => {
        for (const v of rule.good) {
          const opt = make(params, { ...base, [rule.option]: v });
          expect((opt as unknown as Record<string, unknown>)[rule.option]).toBe(v);
        }
      });
    }

    test('options that are not an object, and unknown options, are refused', () => {
      for (const o of [null, 'fast', 0.1, [0.1]])
        expectInvalid(() => make(params, o), new RegExp(`^${name}: options must be an object`));
      const unknown =
        name === 'SGD' ? ['useNesterov', 'dampening', 'learningRate'] : ['amsgrad', 'weight_decay', 'beta1'];
      for (const k of unknown)
        expectInvalid(
          () => make(params, { ...base, [k]: 0.5 }),
          new RegExp(`^${name}: unknown option '${k}' \\(options: lr, `),
        );
    });

    test('params must be an array of whole tensors; the message names the index', () => {
      expectInvalid(() => make(params[0], base), new RegExp(`^${name}: params must be an array of tensors, got an? `));
      expectInvalid(() => make(null, base), new RegExp(`^${name}: params must be an array of tensors, got null`));
      expectInvalid(
        () => make([params[0], 0.5], base),
        new RegExp(`^${name}: params\\[1\\] must be a Tensor, got 0.5`),
      );
      const big = Tensor.fromArray(cpu, [1, 2, 3, 4], [2, 2]);
      const view = big.transpose();
      expectInvalid(() => make([view], base), new RegExp(`^${name}: params\\[0\\] must be a whole contiguous tensor`));
      view.dispose();
      big.dispose();
    });

    test('lr set later (by hand or a schedule) must be finite and ≥ 0; a refused value leaves lr as it was', () => {
      const opt = make(params, { ...base, lr: 0.5 });
      for (const v of [Number.NaN, -0.1, Number.POSITIVE_INFINITY, '0.1'])
        expectInvalid(
          () => {
            opt.lr = v as number;
          },
          new RegExp(`^${name}: lr must be a finite number ≥ 0, got `),
        );
      expect(opt.lr).toBe(0.5);
      opt.lr = 0; // a schedule may anneal to 0
      expect(opt.lr).toBe(0);
    });
  });
}

describe('Adam and AdamW betas', () => {
  test.each([
    [[1, 0.999], /betas\[0\] must be a finite number in \[0, 1\), got 1$/],
    [[0.9, 1], /betas\[1\] must be a finite number in \[0, 1\), got 1$/],
    [[-0.1, 0.999], /betas\[0\] .*got -0.1$/],
    [[0.9, -0.5], /betas\[1\] .*got -0.5$/],
    [[Number.NaN, 0.999], /betas\[0\] .*got NaN$/],
    [[0.9, Number.POSITIVE_INFINITY], /betas\[1\] .*got Infinity$/],
    [['0.9', 0.999], /betas\[0\] .*got '0.9'$/],
    [[0.9, null], /betas\[1\] .*got null$/],
    [[0.9], /betas must be \[beta1, beta2\], got \[0.9\]$/],
    [[0.9, 0.999, 0.1], /betas must be \[beta1, beta2\], got \[0.9, 0.999, 0.1\]$/],
    [0.9, /betas must be \[beta1, beta2\], got 0.9$/],
    [null, /betas must be \[beta1, beta2\], got null$/],
  ])('betas %p is refused at construction', (betas, pattern) => {
    expectInvalid(() => new ag.Adam(params, { betas: betas as [number, number] }), /^Adam: /, pattern);
    expectInvalid(() => new ag.AdamW(params, { betas: betas as [number, number] }), /^AdamW: /, pattern);
  });

  test('betas at the edges ([0, 0], [0.999999, 0.5]) are accepted and copied', () => {
    for (const b of [
      [0, 0],
      [0.999999, 0.5],
    ] as [number, number][]) {
      const opt = new ag.Adam(params, { betas: b });
      expect(opt.betas).toEqual(b);
      b[0] = 5; // the caller's array changing later does not reach the optimizer
      expect(opt.betas[0]).not.toBe(5);
    }
  });

  test('SGD requires lr (it has no default), Adam and AdamW default to 1e-3', () => {
    expectInvalid(
      () => new ag.SGD(params, {} as ag.SgdOptions),
      /^SGD: lr must be a finite number > 0, got undefined$/,
    );
    expectInvalid(
      () => new ag.SGD(params, undefined as unknown as ag.SgdOptions),
      /^SGD: options \{ lr \} are required/,
    );
    expect(new ag.Adam(params).lr).toBe(1e-3);
    expect(new ag.AdamW(params, { weightDecay: undefined }).weightDecay).toBe(0.01);
  });
});

describe('schedulers', () => {
  const opt = (): ag.Optimizer => new ag.SGD(params, { lr: 0.4 });

  test.each([
    ['stepSize', [0, 1.5, -1, Number.NaN, '2'], (o: ag.Optimizer, v: unknown) => new ag.StepLR(o, v as number)],
    [
      'gamma',
      [0, -0.5, Number.NaN, Number.POSITIVE_INFINITY, '0.5'],
      (o: ag.Optimizer, v: unknown) => new ag.StepLR(o, 2, v as number),
    ],
  ])('StepLR %s out of its domain is refused at construction', (param, values, make) => {
    for (const v of values)
      expectInvalid(() => make(opt(), v), new RegExp(`^StepLR: ${param} must be a finite number`));
  });

  test.each([
    [
      'tMax',
      [0, -1, 2.5, Number.NaN, Number.POSITIVE_INFINITY, '10'],
      (o: ag.Optimizer, v: unknown) => new ag.CosineAnnealingLR(o, v as number),
    ],
    [
      'etaMin',
      [-0.1, Number.NaN, Number.POSITIVE_INFINITY, '0'],
      (o: ag.Optimizer, v: unknown) => new ag.CosineAnnealingLR(o, 10, v as number),
    ],
    [
      'warmupSteps',
      [-1, 1.5, 11, Number.NaN, '2'],
      (o: ag.Optimizer, v: unknown) => new ag.CosineAnnealingLR(o, 10, 0, v as number),
    ],
  ])('CosineAnnealingLR %s out of its domain is refused at construction, the lr untouched', (param, values, make) => {
    for (const v of values) {
      const o = opt();
      expectInvalid(() => make(o, v), new RegExp(`^CosineAnnealingLR: ${param} must be a finite number`));
      expect(o.lr).toBe(0.4);
    }
  });

  test('a scheduler needs an optimizer; its lr stays finite and ≥ 0 through every step', () => {
    expectInvalid(
      () => new ag.StepLR(null as unknown as ag.Optimizer, 2),
      /^StepLR: optimizer must be an Optimizer, got null/,
    );
    expectInvalid(
      () => new ag.CosineAnnealingLR({} as ag.Optimizer, 2),
      /^CosineAnnealingLR: optimizer must be an Optimizer/,
    );
    const o = opt();
    const cos = new ag.CosineAnnealingLR(o, 4, 0, 4); // warm-up over the whole schedule
    const seen: number[] = [];
    for (let i = 0; i < 6; i++) {
      cos.step();
      seen.push(o.lr);
    }
    expect(seen.every((v) => Number.isFinite(v) && v >= 0)).toBe(true);
    const step = new ag.StepLR(o, 1, 0.5);
    step.step();
    expect(o.lr).toBeCloseTo(seen[5]! * 0.5, 12);
  });
});
