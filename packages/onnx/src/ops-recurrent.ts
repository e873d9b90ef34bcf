/**
 * ONNX LSTM, GRU and RNN unrolled onto HAL ops: one batched matmul for every step's input projection
 * (X·Wᵀ + biases), then per step a matmul with the recurrence weights, gate slices (shrink views),
 * activations, products and sums. Directions forward, reverse and bidirectional; sequence_lens (a host
 * input: a row stops updating at its length and its later outputs are 0, as onnxruntime does, reverse rows
 * starting at their own last step); initial_h / initial_c; LSTM peepholes and input_forget; `clip` on every
 * gate's input (bias included); `layout` 1 (batch first, opset 14); the activations of the ONNX spec with
 * their alpha/beta taken in order (onnxruntime's defaults: LeakyRelu 0.01, HardSigmoid 0.2/0.5, Elu 1, others
 * 0). float32 only.
 *
 * Shapes (layout 0; layout 1 swaps the first two axes of X, Y's batch and sequence, initial_h/c's and Y_h/c's
 * direction and batch): X [T, B, I]; W [D, G·H, I]; R [D, G·H, H]; B [D, 2·G·H]; sequence_lens [B];
 * initial_h/c [D, B, H]; P [D, 3·H] → Y [T, D, B, H], Y_h and Y_c [D, B, H]. G = 4 (LSTM: gates i, o, f, c),
 * 3 (GRU: z, r, h), 1 (RNN).
 */
import { type ComputeBackend, gruCell, lstmCell, type NDArray } from '@polyhal/hal';
import { NotExpressible, type NodeContext, type OpMapping } from './table.js';

type Act = (be: ComputeBackend, x: NDArray) => NDArray;

/** The cells' intermediates are left to the executor's tracking backend, which frees them after the node. */
const leave = (): void => {};
type Kind = 'LSTM' | 'GRU' | 'RNN';

const GATES: Record<Kind, number> = { LSTM: 4, GRU: 3, RNN: 1 };
const DEFAULT_ACTS: Record<Kind, string[]> = {
  LSTM: ['Sigmoid', 'Tanh', 'Tanh'],
  GRU: ['Sigmoid', 'Tanh'],
  RNN: ['Tanh'],
};

/** min(x, 0) = −relu(−x). */
const negPart = (be: ComputeBackend, x: NDArray): NDArray => be.neg(be.relu(be.neg(x)));

/** Each activation: whether it takes alpha and beta, their defaults (onnxruntime's), and the formula. */
const ACTIVATIONS: Record<string, { alpha?: number; beta?: number; fn: (a: number, b: number) => Act }> = {
  relu: { fn: () => (be, x) => be.relu(x) },
  tanh: { fn: () => (be, x) => be.tanh(x) },
  sigmoid: { fn: () => (be, x) => be.sigmoid(x) },
  affine: { alpha: 0, beta: 0, fn: (a, b) => (be, x) => be.add(be.mul(x, a), b) },
  leakyrelu: { alpha: 0.01, fn: (a) => (be, x) => be.add(be.relu(x), be.mul(negPart(be, x), a)) },
  thresholdedrelu: { alpha: 0, fn: (a) => (be, x) => be.where(be.greater(x, a), x, 0) },
  scaledtanh: { alpha: 0, beta: 0, fn: (a, b) => (be, x) => be.mul(be.tanh(be.mul(x, b)), a) },
  hardsigmoid: {
    alpha: 0.2,
    beta: 0.5,
    fn: (a, b) => (be, x) => be.minimum(be.maximum(be.add(be.mul(x, a), b), 0), 1),
  },
  elu: { alpha: 1, fn: (a) => (be, x) => be.add(be.relu(x), be.mul(be.sub(be.exp(negPart(be, x)), 1), a)) },
  softsign: { fn: () => (be, x) => be.div(x, be.add(be.abs(x), 1)) },
  softplus: { fn: () => (be, x) => be.unary('softplus', x) },
};

/** The activations per direction: `activations` (case-insensitive) with activation_alpha/beta consumed in order. */
function activations(ctx: NodeContext, kind: Kind, dirs: number): Act[][] {
  const names = ctx.attrs.strings('activations') ?? [];
  const alphas = ctx.attrs.floats('activation_alpha') ?? [];
  const betas = ctx.attrs.floats('activation_beta') ?? [];
  const per = DEFAULT_ACTS[kind].length;
  const list = names.length ? names : Array.from({ length: dirs }, () => DEFAULT_ACTS[kind]).flat();
  if (list.length !== per * dirs)
    throw new NotExpressible('attribute', `${kind}: ${list.length} activations for ${dirs} direction(s)`);
  let [ai, bi] = [0, 0];
  const acts = list.map((name) => {
    const spec = ACTIVATIONS[name.toLowerCase()];
    if (!spec) throw new NotExpressible('attribute', `${kind} activation '${name}'`);
    const a = spec.alpha === undefined ? 0 : ai < alphas.length ? alphas[ai++]! : spec.alpha;
    const b = spec.beta === undefined ? 0 : bi < betas.length ? betas[bi++]! : spec.beta;
    return spec.fn(a, b);
  });
  return Array.from({ length: dirs }, (_, d) => acts.slice(d * per, (d + 1) * per));
}

interface Plan {
  kind: Kind;
  T: number;
  B: number;
  I: number;
  H: number;
  /** Per direction: true where it runs backwards in time. */
  reverse: boolean[];
  batchFirst: boolean;
  clip: number | undefined;
  /** sequence_lens, where some row is shorter than T. */
  lens: number[] | undefined;
  acts: Act[][];
  linearBeforeReset: boolean;
  inputForget: boolean;
  has: (i: number) => boolean;
}

function planOf(ctx: NodeContext, kind: Kind): Plan {
  const a = ctx.attrs;
  const direction = a.string('direction', 'forward');
  if (direction !== 'forward' && direction !== 'reverse' && direction !== 'bidirectional')
    throw new NotExpressible('attribute', `${kind} direction '${direction}'`);
  const D = direction === 'bidirectional' ? 2 : 1;
  const batchFirst = a.int('layout', 0) === 1;
  const xs = ctx.inputShapes[0]!;
  const ws = ctx.inputShapes[1]!;
  if (xs.length !== 3 || ws.length !== 3) throw new NotExpressible('input', `${kind}: X and W must be of rank 3`);
  const [T, B, I] = (batchFirst ? [xs[1], xs[0], xs[2]] : xs) as [number, number, number];
  const H = a.int('hidden_size', ws[1]! / GATES[kind]);
  if (ws[0] !== D || ws[1] !== GATES[kind] * H || ws[2] !== I)
    throw new NotExpressible('input', `${kind}: W of shape [${ws.join(', ')}] for ${D} direction(s), hidden ${H}`);
  const clip = a.has('clip') ? a.float('clip', 0) : undefined;
  if (clip !== undefined && !(clip > 0)) throw new NotExpressible('attribute', `${kind} clip ${clip}`);
  if (kind === 'LSTM' && ctx.opset < 7 && a.int('output_sequence', 0) !== 0)
    throw new NotExpressible('attribute', 'LSTM output_sequence (opset 1)');
  const has = (i: number) => ctx.node.inputs.length > i && ctx.node.inputs[i] !== '';
  const lens = has(4) ? ctx.numbers(4) : undefined;
  if (lens && (lens.length !== B || lens.some((n) => !Number.isInteger(n) || n < 0 || n > T)))
    throw new NotExpressible('input', `${kind}: sequence_lens [${lens.join(', ')}] for batch ${B} of length ${T}`);
  return {
    kind,
    T,
    B,
    I,
    H,
    reverse: direction === 'bidirectional' ? [false, true] : [direction === 'reverse'],
    batchFirst,
    clip,
    lens: lens?.some((n) => n !== T) ? lens : undefined,
    acts: activations(ctx, kind, D),
    linearBeforeReset: kind === 'GRU' && a.int('linear_before_reset', 0) !== 0,
    inputForget: kind === 'LSTM' && a.int('input_forget', 0) !== 0,
    has,
  };
}

/** Columns [k·H, (k+1)·H) of a [rows, n·H] array. */
const gate = (be: ComputeBackend, g: NDArray, k: number, H: number): NDArray =>
  be.shrink(g, [
    [0, g.shape[0]!],
    [k * H, (k + 1) * H],
  ]);

/** Direction d of a [D, ...] parameter, without its leading axis. */
const dir = (be: ComputeBackend, p: NDArray, d: number): NDArray =>
  be.reshape(
    be.shrink(
      p,
      p.shape.map((n, i) => (i === 0 ? [d, d + 1] : [0, n]) as [number, number]),
    ),
    p.shape.slice(1),
  );

/** Runs one direction: returns Y's steps (in time order), the last H and (LSTM) the last C. */
function runDirection(
  be: ComputeBackend,
  p: Plan,
  d: number,
  x: NDArray,
  inputs: (NDArray | undefined)[],
): { ys: NDArray[]; h: NDArray; c: NDArray | undefined } {
  const { kind, T, B, I, H } = p;
  const G = GATES[kind];
  const [f, g, hAct] = p.acts[d]! as [Act, Act | undefined, Act | undefined];
  const w = dir(be, inputs[1]!, d); // [G·H, I]
  const r = dir(be, inputs[2]!, d); // [G·H, H]
  const bias = p.has(3) ? dir(be, inputs[3]!, d) : undefined; // [2·G·H]
  const cols = (v: NDArray, lo: number, hi: number) => be.shrink(v, [[lo, hi]]);
  // the biases added once to every step's input projection; GRU's Rb_h stays apart with linear_before_reset
  let pre: NDArray | undefined;
  let rbh: NDArray | undefined;
  if (bias) {
    const wb = cols(bias, 0, G * H);
    const rb = cols(bias, G * H, 2 * G * H);
    if (p.linearBeforeReset) {
      rbh = cols(rb, 2 * H, 3 * H);
      pre = be.add(wb, be.concat([cols(rb, 0, 2 * H), be.full([H], 0)], 0));
    } else pre = be.add(wb, rb);
  }
  const xw = be.reshape(be.matmul(be.reshape(x, [T * B, I]), be.permute(w, [1, 0]), pre ?? null), [T, B, G * H]);
  const rt = be.permute(r, [1, 0]); // [H, G·H]
  const state = (i: number): NDArray => {
    if (!p.has(i)) return be.full([B, H], 0);
    const s = inputs[i]!;
    return p.batchFirst
      ? be.reshape(
          be.shrink(s, [
            [0, B],
            [d, d + 1],
            [0, H],
          ]),
          [B, H],
        )
      : dir(be, s, d);
  };
  let h = state(5);
  let c = kind === 'LSTM' ? state(6) : undefined;
  const peep = kind === 'LSTM' && p.has(7) ? dir(be, inputs[7]!, d) : undefined; // [3·H]: i, o, f
  // GRU: R's gate blocks z, r (linear_before_reset 0) and Rb_h padded to the three blocks (linear_before_reset 1)
  const rzT = kind === 'GRU' ? gate(be, rt, 0, 2 * H) : rt;
  const rbhPadded = rbh && be.concat([be.full([2 * H], 0), rbh], 0);
  const clip = (v: NDArray): NDArray => (p.clip === undefined ? v : be.minimum(be.maximum(v, -p.clip), p.clip));
  const ys: NDArray[] = new Array(T);
  for (let k = 0; k < T; k++) {
    const t = p.reverse[d] ? T - 1 - k : k;
    const xt = be.reshape(
      be.shrink(xw, [
        [t, t + 1],
        [0, B],
        [0, G * H],
      ]),
      [B, G * H],
    );
    let hNew: NDArray;
    let cNew: NDArray | undefined;
    if (kind === 'LSTM') {
      // the shared cell (hal families/recurrent), in ONNX's gate order i, o, f, c
      const step = lstmCell(be, be.add(xt, be.matmul(h, rt)), c!, {
        order: 'iofc',
        gateActivation: f,
        cellActivation: g!,
        outputActivation: hAct!,
        clip: p.clip,
        peepholes: peep && { i: cols(peep, 0, H), o: cols(peep, H, 2 * H), f: cols(peep, 2 * H, 3 * H) },
        coupleInputForget: p.inputForget,
        track: leave,
      });
      hNew = step.h;
      cNew = step.c;
    } else if (kind === 'GRU') {
      // the shared cell in ONNX's order z, r, h; linear_before_reset 0 multiplies r ⊙ h by R_h in the cell
      hNew = gruCell(be, xt, p.linearBeforeReset ? be.matmul(h, rt, rbhPadded ?? null) : be.matmul(h, rzT), h, {
        order: 'zrh',
        gateActivation: f,
        candidateActivation: g!,
        clip: p.clip,
        recurrentCandidate: p.linearBeforeReset ? undefined : (rh) => be.matmul(rh, gate(be, rt, 2, H)),
        track: leave,
      });
    } else hNew = f(be, clip(be.add(xt, be.matmul(h, rt))));
    if (p.lens) {
      // rows past their length keep their state and output 0
      const live = be.fromArray(
        p.lens.map((n) => (t < n ? 1 : 0)),
        [B, 1],
        'bool',
      );
      h = be.where(live, hNew, h);
      if (c && cNew) c = be.where(live, cNew, c);
      ys[t] = be.where(live, hNew, 0);
    } else {
      h = hNew;
      c = cNew;
      ys[t] = hNew;
    }
  }
  if (p.lens?.includes(0)) {
    // onnxruntime: an empty sequence's final states are 0, not the initial ones
    const some = be.fromArray(
      p.lens.map((n) => (n > 0 ? 1 : 0)),
      [B, 1],
      'bool',
    );
    h = be.where(some, h, 0);
    if (c) c = be.where(some, c, 0);
  }
  return { ys, h, c };
}

const recurrent = (kind: Kind): OpMapping => ({
  host: [4],
  contract: { kind: 'onnx' },
  plan: (ctx) => {
    const p = planOf(ctx, kind);
    return (be, inputs) => {
      const x = p.batchFirst ? be.permute(inputs[0]!, [1, 0, 2]) : inputs[0]!;
      const runs = p.reverse.map((_, d) => runDirection(be, p, d, x, inputs));
      let y = be.stack(
        runs.map((run) => be.stack(run.ys, 0)),
        1,
      ); // [T, D, B, H]
      let yh = be.stack(
        runs.map((run) => run.h),
        0,
      ); // [D, B, H]
      let yc = kind === 'LSTM' ? be.stack(runs.map((run) => run.c!)) : undefined;
      if (p.batchFirst) {
        y = be.permute(y, [2, 0, 1, 3]);
        yh = be.permute(yh, [1, 0, 2]);
        if (yc) yc = be.permute(yc, [1, 0, 2]);
      }
      return yc ? [y, yh, yc] : [y, yh];
    };
  },
});

export const RECURRENT_OPS: Record<string, OpMapping> = {
  LSTM: recurrent('LSTM'),
  GRU: recurrent('GRU'),
  RNN: recurrent('RNN'),
};
