/**
 * One time step of an LSTM or a GRU, composed from HAL ops: the shared cell of the ONNX LSTM/GRU mappings
 * (@polyhal/onnx ops-recurrent.ts) and of autograd's recurrent layers (@polyhal/autograd recurrent.ts), which
 * records `lstmCell`/`gruCell` as single ops whose gradient rules are `lstmCellBackward`/`gruCellBackward`.
 * Plain functions of a ComputeBackend (no BaseBackend method): the recurrence matmuls stay with the caller, so
 * each side keeps its own weight layout; the gate order is an option, each side's convention at its API
 * (PyTorch: LSTM i, f, g, o and GRU r, z, n; ONNX: LSTM i, o, f, c and GRU z, r, h).
 *
 * Shapes: B rows (the batch), H hidden units. Gate blocks are columns [k·H, (k+1)·H) of a [B, G·H] array.
 * Every result is a new array the caller owns; the intermediates are freed before returning unless `track`
 * takes them over (an owner that frees them later, as the ONNX executor's tracking backend does).
 */
import type { ComputeBackend } from '../../backend.js';
import { InvalidArgumentError, ShapeMismatchError } from '../../core/errors.js';
import type { NDArray } from '../../core/ndarray.js';

/** An activation of a cell: one new array from x (it frees its own intermediates). */
export type CellActivation = (be: ComputeBackend, x: NDArray) => NDArray;

/** LSTM gate blocks in order: `ifgo` (PyTorch, tfjs: input, forget, cell, output) or `iofc` (ONNX). */
export type LstmGateOrder = 'ifgo' | 'iofc';
/** GRU gate blocks in order: `rzn` (PyTorch: reset, update, new) or `zrh` (ONNX: update, reset, hidden). */
export type GruGateOrder = 'rzn' | 'zrh';

/** What both cells take besides their operands. */
interface CellCommon {
  /** Clips every gate's input (bias and peepholes included) to [−clip, clip] before its activation (ONNX). */
  clip?: number;
  /**
   * Receives every intermediate the cell allocates; the receiver frees them. Default: the cell frees them
   * itself before returning.
   */
  track?: (a: NDArray) => void;
}

/** Options of `lstmCell`. */
export interface LstmCellOptions extends CellCommon {
  /** The gate blocks' order in `gates` (default `ifgo`). */
  order?: LstmGateOrder;
  /** The gates' activation f (i, f, o; default sigmoid). */
  gateActivation?: CellActivation;
  /** The candidate's activation g (default tanh). */
  cellActivation?: CellActivation;
  /** The activation h of the new cell state in the output (default tanh). */
  outputActivation?: CellActivation;
  /** Peephole weights [H] each: i and f add p·c, o adds p·c′ (ONNX P). */
  peepholes?: { i: NDArray; f: NDArray; o: NDArray };
  /** The forget gate is 1 − i (ONNX input_forget). */
  coupleInputForget?: boolean;
}

/** Options of `gruCell`. */
export interface GruCellOptions extends CellCommon {
  /** The gate blocks' order in `xg` and `hg` (default `rzn`); the candidate is the third block in both. */
  order?: GruGateOrder;
  /** The activation f of the reset and update gates (default sigmoid). */
  gateActivation?: CellActivation;
  /** The candidate's activation g (default tanh). */
  candidateActivation?: CellActivation;
  /**
   * ONNX linear_before_reset 0: the candidate's recurrent term computed from r ⊙ h (its matmul and bias);
   * `hg` then holds the two gate blocks only, [B, 2H]. Without it the term is r ⊙ hg's third block (PyTorch).
   */
  recurrentCandidate?: (rh: NDArray) => NDArray;
}

const LSTM_ORDER: Record<LstmGateOrder, { i: number; f: number; g: number; o: number }> = {
  ifgo: { i: 0, f: 1, g: 2, o: 3 },
  iofc: { i: 0, o: 1, f: 2, g: 3 },
};
const GRU_ORDER: Record<GruGateOrder, { r: number; z: number }> = { rzn: { r: 0, z: 1 }, zrh: { z: 0, r: 1 } };

const sigmoid: CellActivation = (be, x) => be.sigmoid(x);
const tanh: CellActivation = (be, x) => be.tanh(x);

/** Columns [k·H, (k+1)·H) of a [B, n·H] array (a view). */
const block = (be: ComputeBackend, a: NDArray, k: number, H: number): NDArray =>
  be.shrink(a, [
    [0, a.shape[0]!],
    [k * H, (k + 1) * H],
  ]);

/** Runs `fn` with a `t` that collects what it allocates; frees them after (or hands them to `track`). */
function withCellTemps<T>(be: ComputeBackend, track: ((a: NDArray) => void) | undefined, fn: (t: Temp) => T): T {
  const temps: NDArray[] = [];
  const t: Temp = (a) => {
    temps.push(a);
    return a;
  };
  try {
    return fn(t);
  } finally {
    for (const a of temps) track ? track(a) : be.free(a);
  }
}
type Temp = <A extends NDArray>(a: A) => A;

function checkRank2(op: string, name: string, a: NDArray, rows: number, cols: number): void {
  if (!a || typeof a !== 'object' || !Array.isArray(a.shape))
    throw new InvalidArgumentError(`${op}: ${name} must be an NDArray`);
  if (a.shape.length !== 2 || a.shape[0] !== rows || a.shape[1] !== cols)
    throw new ShapeMismatchError(`${op}: ${name} must be [${rows}, ${cols}], got [${a.shape.join(', ')}]`, [
      a.shape,
      [rows, cols],
    ]);
}

/** B and H of an LSTM step, with every operand checked. */
function lstmDims(op: string, gates: NDArray, c: NDArray): [number, number] {
  if (!c || typeof c !== 'object' || !Array.isArray(c.shape) || c.shape.length !== 2)
    throw new ShapeMismatchError(`${op}: c must be [B, H], got ${c?.shape ? `[${c.shape.join(', ')}]` : c}`);
  const [B, H] = c.shape as [number, number];
  checkRank2(op, 'gates', gates, B, 4 * H);
  return [B, H];
}

/**
 * One LSTM step from its gates' pre-activations: gates [B, 4H] (x·W_ihᵀ + h·W_hhᵀ + biases, blocks in
 * `order`), c [B, H] → h′ = o ⊙ h(c′) and c′ = f ⊙ c + i ⊙ g, with i, f, o = f(their blocks) and g = g(its
 * block). ShapeMismatchError when gates is not [B, 4H] for c's [B, H]; InvalidArgumentError for a clip ≤ 0.
 */
export function lstmCell(
  be: ComputeBackend,
  gates: NDArray,
  c: NDArray,
  options: LstmCellOptions = {},
): { h: NDArray; c: NDArray } {
  const [, H] = lstmDims('lstmCell', gates, c);
  const { clip, peepholes } = options;
  if (clip !== undefined && !(clip > 0)) throw new InvalidArgumentError(`lstmCell: clip must be > 0, got ${clip}`);
  if (peepholes)
    for (const k of ['i', 'f', 'o'] as const) {
      const s = peepholes[k]?.shape;
      if (!Array.isArray(s) || s.length !== 1 || s[0] !== H)
        throw new ShapeMismatchError(`lstmCell: peepholes.${k} must be [${H}]`, s ? [s, [H]] : []);
    }
  const at = LSTM_ORDER[options.order ?? 'ifgo'];
  const f = options.gateActivation ?? sigmoid;
  const g = options.cellActivation ?? tanh;
  const hAct = options.outputActivation ?? tanh;
  return withCellTemps(be, options.track, (t) => {
    const clipped = (v: NDArray): NDArray => (clip === undefined ? v : t(be.minimum(t(be.maximum(v, -clip)), clip)));
    const pre = (k: number, peep: NDArray | undefined, cell: NDArray): NDArray =>
      clipped(peep ? t(be.add(block(be, gates, k, H), t(be.mul(peep, cell)))) : block(be, gates, k, H));
    let i: NDArray;
    let fg: NDArray;
    let oGate: (cNew: NDArray) => NDArray;
    if (!peepholes) {
      // one activation over every block ([B, 4H]); g's block is read from the pre-activations
      const acts = t(f(be, clipped(gates)));
      i = block(be, acts, at.i, H);
      fg = options.coupleInputForget ? t(be.sub(1, i)) : block(be, acts, at.f, H);
      oGate = () => block(be, acts, at.o, H);
    } else {
      i = t(f(be, pre(at.i, peepholes.i, c)));
      fg = options.coupleInputForget ? t(be.sub(1, i)) : t(f(be, pre(at.f, peepholes.f, c)));
      oGate = (cNew) => t(f(be, pre(at.o, peepholes.o, cNew)));
    }
    const cand = t(g(be, clipped(block(be, gates, at.g, H))));
    const cNew = be.add(t(be.mul(fg, c)), t(be.mul(i, cand)));
    try {
      const h = be.mul(oGate(cNew), t(hAct(be, cNew)));
      return { h, c: cNew };
    } catch (e) {
      (options.track ?? ((a: NDArray) => be.free(a)))(cNew);
      throw e;
    }
  });
}

/**
 * The gradients of a default `lstmCell` (sigmoid, tanh, tanh; no clip, peepholes or coupling) for upstream
 * gh and gc (each [B, H]), from its operands and its c′: dGates [B, 4H] (blocks in `order`) and dc [B, H].
 * ShapeMismatchError on shapes that do not fit.
 */
export function lstmCellBackward(
  be: ComputeBackend,
  gh: NDArray,
  gc: NDArray,
  gates: NDArray,
  c: NDArray,
  cNew: NDArray,
  options: { order?: LstmGateOrder } = {},
): { dGates: NDArray; dc: NDArray } {
  const [B, H] = lstmDims('lstmCellBackward', gates, c);
  for (const [name, a] of [
    ['gh', gh],
    ['gc', gc],
    ['cNew', cNew],
  ] as const)
    checkRank2('lstmCellBackward', name, a, B, H);
  const at = LSTM_ORDER[options.order ?? 'ifgo'];
  return withCellTemps(be, undefined, (t) => {
    const s = t(be.sigmoid(gates));
    const dS = t(be.mul(s, t(be.sub(1, s)))); // σ′ of every block
    const [i, fg, o] = [block(be, s, at.i, H), block(be, s, at.f, H), block(be, s, at.o, H)];
    const cand = t(be.tanh(block(be, gates, at.g, H)));
    const tc = t(be.tanh(cNew));
    // dc′ = gc + gh ⊙ o ⊙ (1 − tanh²c′)
    const dcn = t(be.add(gc, t(be.mul(t(be.mul(gh, o)), t(be.sub(1, t(be.mul(tc, tc))))))));
    const parts: NDArray[] = [];
    parts[at.i] = t(be.mul(t(be.mul(dcn, cand)), block(be, dS, at.i, H)));
    parts[at.f] = t(be.mul(t(be.mul(dcn, c)), block(be, dS, at.f, H)));
    parts[at.g] = t(be.mul(t(be.mul(dcn, i)), t(be.sub(1, t(be.mul(cand, cand))))));
    parts[at.o] = t(be.mul(t(be.mul(gh, tc)), block(be, dS, at.o, H)));
    const dGates = be.concat(parts, 1);
    try {
      return { dGates, dc: be.mul(dcn, fg) };
    } catch (e) {
      be.free(dGates);
      throw e;
    }
  });
}

/** B and H of a GRU step, with every operand checked (`hgBlocks`: 3, or 2 with a recurrent candidate). */
function gruDims(op: string, xg: NDArray, hg: NDArray, h: NDArray, hgBlocks: number): [number, number] {
  if (!h || typeof h !== 'object' || !Array.isArray(h.shape) || h.shape.length !== 2)
    throw new ShapeMismatchError(`${op}: h must be [B, H], got ${h?.shape ? `[${h.shape.join(', ')}]` : h}`);
  const [B, H] = h.shape as [number, number];
  checkRank2(op, 'xg', xg, B, 3 * H);
  checkRank2(op, 'hg', hg, B, hgBlocks * H);
  return [B, H];
}

/**
 * One GRU step: xg [B, 3H] (x·W_ihᵀ + b_ih), hg [B, 3H] (h·W_hhᵀ + b_hh; [B, 2H] with `recurrentCandidate`),
 * h [B, H] → h′ = (1 − z) ⊙ n + z ⊙ h, with r, z = f(xg + hg) on their blocks and n = g(xn + r ⊙ hn) (or
 * g(xn + recurrentCandidate(r ⊙ h))). ShapeMismatchError when the operands do not fit h's [B, H].
 */
export function gruCell(
  be: ComputeBackend,
  xg: NDArray,
  hg: NDArray,
  h: NDArray,
  options: GruCellOptions = {},
): NDArray {
  const [, H] = gruDims('gruCell', xg, hg, h, options.recurrentCandidate ? 2 : 3);
  const { clip } = options;
  if (clip !== undefined && !(clip > 0)) throw new InvalidArgumentError(`gruCell: clip must be > 0, got ${clip}`);
  const at = GRU_ORDER[options.order ?? 'rzn'];
  const f = options.gateActivation ?? sigmoid;
  const g = options.candidateActivation ?? tanh;
  return withCellTemps(be, options.track, (t) => {
    const clipped = (v: NDArray): NDArray => (clip === undefined ? v : t(be.minimum(t(be.maximum(v, -clip)), clip)));
    const two = (a: NDArray): NDArray =>
      be.shrink(a, [
        [0, a.shape[0]!],
        [0, 2 * H],
      ]);
    const rz = t(f(be, clipped(t(be.add(two(xg), two(hg)))))); // both gates in one activation
    const [r, z] = [block(be, rz, at.r, H), block(be, rz, at.z, H)];
    const rec = options.recurrentCandidate
      ? t(options.recurrentCandidate(t(be.mul(r, h))))
      : t(be.mul(r, block(be, hg, 2, H)));
    const n = t(g(be, clipped(t(be.add(block(be, xg, 2, H), rec)))));
    return be.add(n, t(be.mul(z, t(be.sub(h, n))))); // n + z ⊙ (h − n)
  });
}

/**
 * The gradients of a default `gruCell` (sigmoid, tanh; no clip, hg [B, 3H]) for upstream gh [B, H]: dxg and dhg
 * [B, 3H] (blocks in `order`; they differ in the candidate's block only) and dh [B, H] (the direct path).
 */
export function gruCellBackward(
  be: ComputeBackend,
  gh: NDArray,
  xg: NDArray,
  hg: NDArray,
  h: NDArray,
  options: { order?: GruGateOrder } = {},
): { dxg: NDArray; dhg: NDArray; dh: NDArray } {
  const [B, H] = gruDims('gruCellBackward', xg, hg, h, 3);
  checkRank2('gruCellBackward', 'gh', gh, B, H);
  const at = GRU_ORDER[options.order ?? 'rzn'];
  return withCellTemps(be, undefined, (t) => {
    const two = (a: NDArray): NDArray =>
      be.shrink(a, [
        [0, B],
        [0, 2 * H],
      ]);
    const rz = t(be.sigmoid(t(be.add(two(xg), two(hg)))));
    const [r, z] = [block(be, rz, at.r, H), block(be, rz, at.z, H)];
    const hn = block(be, hg, 2, H);
    const n = t(be.tanh(t(be.add(block(be, xg, 2, H), t(be.mul(r, hn))))));
    const dnp = t(be.mul(t(be.mul(gh, t(be.sub(1, z)))), t(be.sub(1, t(be.mul(n, n)))))); // through tanh
    const dRZ = t(be.mul(rz, t(be.sub(1, rz)))); // σ′ of both gates
    const parts: NDArray[] = [];
    parts[at.r] = t(be.mul(t(be.mul(dnp, hn)), block(be, dRZ, at.r, H)));
    parts[at.z] = t(be.mul(t(be.mul(gh, t(be.sub(h, n)))), block(be, dRZ, at.z, H)));
    const out: NDArray[] = [];
    try {
      out.push(be.concat([parts[0]!, parts[1]!, dnp], 1));
      out.push(be.concat([parts[0]!, parts[1]!, t(be.mul(dnp, r))], 1));
      out.push(be.mul(gh, z));
    } catch (e) {
      for (const a of out) be.free(a);
      throw e;
    }
    return { dxg: out[0]!, dhg: out[1]!, dh: out[2]! };
  });
}
