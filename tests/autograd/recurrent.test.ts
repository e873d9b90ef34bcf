// RNN, LSTM and GRU against a float64 oracle written here from PyTorch's equations (gate orders i, f, g, o and
// r, z, n), on cpu, wasm and webgpu: forward values and final states; every parameter's and the input's gradient
// against central differences of the oracle; gradCheck on x and h0 and on the cell ops; a sequence-sum task.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { type RecurrentBase, Tensor } from '@polyhal/autograd';
import { type ComputeBackend, DTypeError, InvalidArgumentError, mulberry32, ShapeMismatchError } from '@polyhal/hal';
import { REPO_BACKENDS } from '../support/backends.js';

type Mode = 'LSTM' | 'GRU' | 'RNN_TANH' | 'RNN_RELU';
interface Form {
  mode: Mode;
  T: number;
  B: number;
  I: number;
  H: number;
  L: number;
  bidirectional: boolean;
  batchFirst: boolean;
  bias: boolean;
}

const sig = (v: number): number => 1 / (1 + Math.exp(-v));
/** y[r] = W[r]·v + b[r] for W [rows, n] row-major. */
const affine = (W: number[], v: number[], b: number[] | undefined, rows: number): number[] =>
  Array.from({ length: rows }, (_, r) => v.reduce((s, vi, k) => s + W[r * v.length + k]! * vi, b ? b[r]! : 0));

/**
 * The float64 oracle: x as [T][B][I] (time first), params by PyTorch name, h0/c0 as [L·D][B][H] →
 * out [T][B][D·H], h and c [L·D][B][H].
 */
function oracle(f: Form, p: Record<string, number[]>, x: number[][][], h0?: number[][][], c0?: number[][][]) {
  const { T, B, H, L } = f;
  const D = f.bidirectional ? 2 : 1;
  const G = { LSTM: 4, GRU: 3, RNN_TANH: 1, RNN_RELU: 1 }[f.mode];
  let seq = x;
  const hs: number[][][] = [];
  const cs: number[][][] = [];
  for (let l = 0; l < L; l++) {
    const next: number[][][] = Array.from({ length: T }, () => Array.from({ length: B }, () => []));
    for (let d = 0; d < D; d++) {
      const s = `_l${l}${d ? '_reverse' : ''}`;
      const [wih, whh, bih, bhh] = [p[`weight_ih${s}`]!, p[`weight_hh${s}`]!, p[`bias_ih${s}`], p[`bias_hh${s}`]];
      const hl: number[][] = [];
      const cl: number[][] = [];
      for (let b = 0; b < B; b++) {
        let h = h0 ? [...h0[l * D + d]![b]!] : new Array<number>(H).fill(0);
        let c = c0 ? [...c0[l * D + d]![b]!] : new Array<number>(H).fill(0);
        for (let k = 0; k < T; k++) {
          const t = d ? T - 1 - k : k;
          const gi = affine(wih, seq[t]![b]!, bih, G * H);
          const gh = affine(whh, h, bhh, G * H);
          const blk = (a: number[], j: number, u: number): number => a[j * H + u]!;
          if (f.mode === 'LSTM') {
            const a = gi.map((v, j) => v + gh[j]!);
            c = c.map((cu, u) => sig(blk(a, 1, u)) * cu + sig(blk(a, 0, u)) * Math.tanh(blk(a, 2, u)));
            h = c.map((cu, u) => sig(blk(a, 3, u)) * Math.tanh(cu));
          } else if (f.mode === 'GRU') {
            h = h.map((hu, u) => {
              const r = sig(blk(gi, 0, u) + blk(gh, 0, u));
              const z = sig(blk(gi, 1, u) + blk(gh, 1, u));
              const n = Math.tanh(blk(gi, 2, u) + r * blk(gh, 2, u));
              return (1 - z) * n + z * hu;
            });
          } else {
            h = gi.map((v, j) => (f.mode === 'RNN_RELU' ? Math.max(0, v + gh[j]!) : Math.tanh(v + gh[j]!)));
          }
          next[t]![b]!.push(...h);
        }
        hl.push(h);
        cl.push(c);
      }
      hs.push(hl);
      cs.push(cl);
    }
    seq = next;
  }
  return { out: seq, h: hs, c: cs };
}

const rng = mulberry32(11);
const rand = (n: number, s = 1): number[] => Array.from({ length: n }, () => Math.fround((rng() * 2 - 1) * s));
/** [a][b][c] nesting of a flat row-major array. */
const nest = (v: ArrayLike<number>, a: number, b: number, c: number): number[][][] =>
  Array.from({ length: a }, (_, i) =>
    Array.from({ length: b }, (_, j) => Array.from({ length: c }, (_, k) => v[(i * b + j) * c + k]!)),
  );
const flat3 = (v: number[][][]): number[] => v.flat(2);
/** Time-first [T][B][n] from x's data in the form's layout. */
const timeFirst = (f: Form, v: ArrayLike<number>, n: number): number[][][] =>
  f.batchFirst
    ? Array.from({ length: f.T }, (_, t) =>
        Array.from({ length: f.B }, (_, b) => Array.from({ length: n }, (_, k) => v[(b * f.T + t) * n + k]!)),
      )
    : nest(v, f.T, f.B, n);
const layerOf = (be: ComputeBackend, f: Form, seed: number): RecurrentBase => {
  const opts = { backend: be, rng: seed, numLayers: f.L, bidirectional: f.bidirectional, batchFirst: f.batchFirst };
  const o = { ...opts, bias: f.bias };
  if (f.mode === 'LSTM') return new ag.LSTM(f.I, f.H, o);
  if (f.mode === 'GRU') return new ag.GRU(f.I, f.H, o);
  return new ag.RNN(f.I, f.H, { ...o, nonlinearity: f.mode === 'RNN_RELU' ? 'relu' : 'tanh' });
};
const xShape = (f: Form): number[] => (f.batchFirst ? [f.B, f.T, f.I] : [f.T, f.B, f.I]);
/** Runs the layer's forwardWithState: output, h and (LSTM) c. */
function run(layer: RecurrentBase, x: Tensor, h0?: Tensor, c0?: Tensor): Tensor[] {
  if (layer instanceof ag.LSTM) {
    const [out, [h, c]] = layer.forwardWithState(x, h0 && c0 ? [h0, c0] : undefined);
    return [out, h, c];
  }
  return (layer as ag.GRU).forwardWithState(x, h0);
}

const FORMS: [string, Form][] = [
  [
    'LSTM, 2 layers, bidirectional',
    { mode: 'LSTM', T: 3, B: 2, I: 3, H: 2, L: 2, bidirectional: true, batchFirst: false, bias: true },
  ],
  [
    'LSTM, batch first',
    { mode: 'LSTM', T: 4, B: 2, I: 3, H: 3, L: 1, bidirectional: false, batchFirst: true, bias: true },
  ],
  [
    'GRU, 2 layers, bidirectional, batch first',
    { mode: 'GRU', T: 3, B: 2, I: 2, H: 3, L: 2, bidirectional: true, batchFirst: true, bias: true },
  ],
  ['GRU, no bias', { mode: 'GRU', T: 4, B: 3, I: 2, H: 2, L: 1, bidirectional: false, batchFirst: false, bias: false }],
  [
    'RNN tanh, 2 layers',
    { mode: 'RNN_TANH', T: 4, B: 2, I: 3, H: 3, L: 2, bidirectional: false, batchFirst: false, bias: true },
  ],
  [
    'RNN relu, bidirectional',
    { mode: 'RNN_RELU', T: 3, B: 2, I: 2, H: 3, L: 1, bidirectional: true, batchFirst: true, bias: true },
  ],
];

const close = (got: ArrayLike<number>, want: number[], tol: number): void => {
  expect(got.length).toBe(want.length);
  let worst = 0;
  want.forEach((w, i) => (worst = Math.max(worst, Math.abs(got[i]! - w) / Math.max(1, Math.abs(w)))));
  expect(worst).toBeLessThanOrEqual(tol);
};

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`recurrent layers on ${name}`, () => {
    let be: ComputeBackend;
    beforeAll(async () => {
      be = await factory();
    });
    afterAll(() => be.dispose());

    for (const [label, f] of FORMS) {
      test(`${label}: outputs, states and every gradient against the float64 oracle`, async () => {
        const D = f.bidirectional ? 2 : 1;
        const base = be.liveBufferCount();
        const layer = layerOf(be, f, 3);
        const params: Record<string, number[]> = {};
        for (const [k, t] of Object.entries(layer.stateDict())) params[k] = Array.from(await t.data());
        const xv = rand(f.T * f.B * f.I);
        const h0v = rand(f.L * D * f.B * f.H, 0.5);
        const c0v = rand(f.L * D * f.B * f.H, 0.5);
        const lstm = f.mode === 'LSTM';
        // the loss: a fixed random weighting of the output and the final states
        const wOut = rand(f.T * f.B * D * f.H);
        const wH = rand(h0v.length);
        const wC = rand(h0v.length);
        const x = Tensor.fromArray(be, xv, xShape(f), { requiresGrad: true });
        const h0 = Tensor.fromArray(be, h0v, [f.L * D, f.B, f.H]);
        const c0 = lstm ? Tensor.fromArray(be, c0v, [f.L * D, f.B, f.H]) : undefined;
        const got = await ag.scope(async () => {
          const outs = run(layer, x, h0, c0);
          const ws = [wOut, wH, wC];
          const loss = outs
            .map((o, i) => ag.sum(ag.mul(o, Tensor.fromArray(be, ws[i]!, o.shape))))
            .reduce((a, b) => ag.add(a, b));
          loss.backward();
          return Promise.all(outs.map(async (o) => Array.from(await o.data())));
        });
        const oracleLoss = (p: Record<string, number[]>, xs: number[]): number => {
          const r = oracle(f, p, timeFirst(f, xs, f.I), nest(h0v, f.L * D, f.B, f.H), nest(c0v, f.L * D, f.B, f.H));
          const outLayout = f.batchFirst
            ? Array.from({ length: f.B }, (_, b) => Array.from({ length: f.T }, (_, t) => r.out[t]![b]!))
            : r.out;
          const dot = (a: number[], w: number[]) => a.reduce((s, v, i) => s + v * w[i]!, 0);
          return dot(flat3(outLayout), wOut) + dot(flat3(r.h), wH) + (lstm ? dot(flat3(r.c), wC) : 0);
        };
        // forward
        const r = oracle(f, params, timeFirst(f, xv, f.I), nest(h0v, f.L * D, f.B, f.H), nest(c0v, f.L * D, f.B, f.H));
        const want = f.batchFirst
          ? Array.from({ length: f.B }, (_, b) => Array.from({ length: f.T }, (_, t) => r.out[t]![b]!))
          : r.out;
        const tol = name === 'webgpu' ? 2e-5 : 5e-6;
        close(got[0]!, flat3(want), tol);
        close(got[1]!, flat3(r.h), tol);
        if (lstm) close(got[2]!, flat3(r.c), tol);
        // gradients: x's and each parameter's, against central differences of the oracle (float64, step 1e-5)
        const fd = (vals: number[], set: (v: number[]) => number): number[] =>
          vals.map((_, i) => {
            const plus = [...vals];
            const minus = [...vals];
            plus[i]! += 1e-5;
            minus[i]! -= 1e-5;
            return (set(plus) - set(minus)) / 2e-5;
          });
        close(
          await x.grad!.data(),
          fd(xv, (v) => oracleLoss(params, v)),
          2e-4,
        );
        for (const [k, t] of Object.entries(layer.stateDict()))
          close(
            await t.grad!.data(),
            fd(params[k]!, (v) => oracleLoss({ ...params, [k]: v }, xv)),
            2e-4,
          );
        for (const t of [x.grad, x, h0, c0, ...layer.parameters().map((p) => p.grad)]) t?.dispose();
        layer.dispose();
        expect(be.liveBufferCount()).toBe(base);
      });
    }

    test('gradCheck: x and h0 through a 2-layer bidirectional batch-first LSTM and GRU; the cell ops', async () => {
      const checks: [string, (xs: Tensor[]) => Tensor, number[][]][] = [];
      const lstm = new ag.LSTM(2, 2, { backend: be, rng: 1, numLayers: 2, bidirectional: true, batchFirst: true });
      const gru = new ag.GRU(2, 2, { backend: be, rng: 2, numLayers: 2, bidirectional: true, batchFirst: true });
      checks.push([
        'LSTM',
        ([x, h, c]) => ag.concat([...lstm.forwardWithState(x!, [h!, c!])[1]], 0),
        [
          [2, 3, 2],
          [4, 2, 2],
          [4, 2, 2],
        ],
      ]);
      checks.push(['LSTM output', ([x]) => lstm.forward(x!), [[2, 3, 2]]]);
      checks.push([
        'GRU',
        ([x, h]) =>
          ag.concat(
            gru.forwardWithState(x!, h!).map((t) => ag.reshape(t, [-1])),
            0,
          ),
        [
          [2, 3, 2],
          [4, 2, 2],
        ],
      ]);
      checks.push([
        'lstmCell',
        ([g, c]) => ag.concat(ag.lstmCell(g!, c!), 1),
        [
          [2, 12],
          [2, 3],
        ],
      ]);
      checks.push([
        'gruCell',
        ([x, h, s]) => ag.gruCell(x!, h!, s!),
        [
          [2, 9],
          [2, 9],
          [2, 3],
        ],
      ]);
      const base = be.liveBufferCount();
      for (const [label, fn, shapes] of checks) {
        const inputs = shapes.map((shape) => ({ shape, values: rand(shape.reduce((p, d) => p * d, 1)) }));
        const res = await ag.gradCheck(be, fn, inputs);
        expect([label, res.details]).toEqual([label, []]);
      }
      // gradCheck's backward filled the layers' gradients
      for (const p of [...lstm.parameters(), ...gru.parameters()]) p.grad?.dispose();
      expect(be.liveBufferCount()).toBe(base);
      lstm.dispose();
      gru.dispose();
    });

    test('learns the sum of a sequence (LSTM + Linear, Adam): MSE from ~0.17 to below 0.01', async () => {
      const [T, B] = [6, 32];
      const lstm = new ag.LSTM(1, 12, { backend: be, rng: 4 });
      const head = new ag.Linear(12, 1, { backend: be, rng: 5 });
      const opt = new ag.Adam([...lstm.parameters(), ...head.parameters()], { lr: 0.03 });
      const data = mulberry32(9);
      let loss = Infinity;
      for (let step = 0; step < 60; step++) {
        const xs = Array.from({ length: T * B }, () => data() * 2 - 1);
        const ys = Array.from({ length: B }, (_, b) => xs.filter((_, i) => i % B === b).reduce((s, v) => s + v, 0) / 4);
        loss = await ag.scope(async () => {
          const out = lstm.forward(Tensor.fromArray(be, xs, [T, B, 1]));
          const last = ag.reshape(
            ag.shrink(out, [
              [T - 1, T],
              [0, B],
              [0, 12],
            ]),
            [B, 12],
          );
          const l = ag.mseLoss(head.forward(last), Tensor.fromArray(be, ys, [B, 1]));
          opt.zeroGrad();
          l.backward();
          opt.step();
          return l.item();
        });
      }
      expect(loss).toBeLessThan(0.01);
      lstm.dispose();
      head.dispose();
    });
  });
}

describe('recurrent layers: names, shapes, init and errors', () => {
  const be = Object.values(REPO_BACKENDS)[0]!;
  test("PyTorch's parameter names and shapes; init within ±1/√hidden; typed errors", async () => {
    const cpu = await be();
    const lstm = new ag.LSTM(3, 4, { backend: cpu, numLayers: 2, bidirectional: true });
    const shapes = Object.fromEntries(Object.entries(lstm.stateDict()).map(([k, t]) => [k, t.shape]));
    expect(shapes).toEqual({
      weight_ih_l0: [16, 3],
      weight_hh_l0: [16, 4],
      bias_ih_l0: [16],
      bias_hh_l0: [16],
      weight_ih_l0_reverse: [16, 3],
      weight_hh_l0_reverse: [16, 4],
      bias_ih_l0_reverse: [16],
      bias_hh_l0_reverse: [16],
      weight_ih_l1: [16, 8],
      weight_hh_l1: [16, 4],
      bias_ih_l1: [16],
      bias_hh_l1: [16],
      weight_ih_l1_reverse: [16, 8],
      weight_hh_l1_reverse: [16, 4],
      bias_ih_l1_reverse: [16],
      bias_hh_l1_reverse: [16],
    });
    const all = (await Promise.all(lstm.parameters().map(async (p) => Array.from(await p.data())))).flat();
    expect(Math.max(...all.map(Math.abs))).toBeLessThanOrEqual(0.5);
    expect(Math.max(...all.map(Math.abs))).toBeGreaterThan(0.45);
    expect(Object.keys(new ag.GRU(2, 3, { backend: cpu, bias: false }).stateDict())).toEqual([
      'weight_ih_l0',
      'weight_hh_l0',
    ]);
    expect(() => lstm.forward(Tensor.fromArray(cpu, rand(12), [2, 2, 3, 1]))).toThrow(ShapeMismatchError);
    expect(() => lstm.forward(Tensor.fromArray(cpu, rand(8), [2, 2, 2]))).toThrow(ShapeMismatchError);
    // unbatched: [T, inputSize] runs as a batch of one, states [numLayers·D, hiddenSize]
    const xb = rand(5 * 3);
    const [o1, [h1, c1]] = lstm.forwardWithState(Tensor.fromArray(cpu, xb, [5, 3]));
    const [o2, [h2, c2]] = lstm.forwardWithState(Tensor.fromArray(cpu, xb, [5, 1, 3]));
    expect([o1.shape, h1.shape, c1.shape]).toEqual([
      [5, 8],
      [4, 4],
      [4, 4],
    ]);
    for (const [u, v] of [
      [o1, o2],
      [h1, h2],
      [c1, c2],
    ] as const)
      expect(Array.from(u.dataSync())).toEqual(Array.from(v.dataSync()));
    expect(() => lstm.forward(Tensor.fromArray(cpu, [1, 2, 3], [1, 1, 3], { dtype: 'int32' }))).toThrow(DTypeError);
    const x = Tensor.fromArray(cpu, rand(6), [1, 2, 3]);
    expect(() => lstm.forwardWithState(x, [Tensor.zeros(cpu, [4, 1, 4]), Tensor.zeros(cpu, [4, 2, 4])])).toThrow(
      ShapeMismatchError,
    );
    expect(() => new ag.RNN(3, 0, { backend: cpu })).toThrow(InvalidArgumentError);
    expect(() => new ag.RNN(3, 2, { backend: cpu, nonlinearity: 'sigmoid' as 'tanh' })).toThrow(InvalidArgumentError);
    expect(() => new ag.GRU(3, 2, { backend: cpu, dropout: 2 })).toThrow(InvalidArgumentError);
    expect(() => ag.lstmCell(Tensor.zeros(cpu, [2, 7]), Tensor.zeros(cpu, [2, 2]))).toThrow(ShapeMismatchError);
    cpu.dispose();
  });

  test('dropout between layers in training only; a recurrent layer in a Sequential', async () => {
    const cpu = await be();
    const opts = { backend: cpu, rng: 6, numLayers: 2 };
    const drop = new ag.GRU(3, 4, { ...opts, dropout: 0.5, dropoutSeed: 1 });
    const plain = new ag.GRU(3, 4, opts);
    const x = Tensor.fromArray(cpu, rand(2 * 5 * 3), [2, 5, 3]);
    const [a, b, ref] = [drop.forward(x), drop.forward(x), plain.forward(x)].map((t) => Array.from(t.dataSync()));
    expect(a).not.toEqual(b); // the stream moves on
    expect(a).not.toEqual(ref);
    expect(drop.dropoutOffset).toBe(2 * 5 * 2 * 4); // two forwards of 5 steps of [2, 4] dropped
    drop.eval();
    expect(Array.from(drop.forward(x).dataSync())).toEqual(ref);
    const seq = new ag.Sequential(new ag.LSTM(3, 4, { backend: cpu, rng: 2 }), new ag.Linear(4, 1, { backend: cpu }));
    expect(seq.forward(x).shape).toEqual([2, 5, 1]);
    expect(seq.parameters().length).toBe(6);
    cpu.dispose();
  });
});
