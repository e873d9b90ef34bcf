/**
 * Recurrent layers as PyTorch's nn.RNN, nn.LSTM and nn.GRU: (inputSize, hiddenSize, { numLayers, bias,
 * batchFirst, bidirectional, dropout }), PyTorch's gate order (LSTM i, f, g, o; GRU r, z, n), parameter names
 * (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, ..._reverse) and shapes, so a PyTorch state dict loads
 * as it is, and its init U(±1/√hidden). Each step is an ordinary matmul per weight and, for LSTM and GRU, one
 * cell op (recurrent-cells.ts: the HAL's shared cell, the one the ONNX LSTM/GRU mappings run).
 *
 * Shapes: x [T, B, inputSize] ([B, T, inputSize] with batchFirst) float32; output [T, B, D·hiddenSize]
 * ([B, T, D·hiddenSize] with batchFirst), D = 2 when bidirectional, the directions' features concatenated;
 * states h and c [numLayers·D, B, hiddenSize] whatever batchFirst (PyTorch's), row l·D + d for layer l and
 * direction d. Unbatched, as PyTorch: x [T, inputSize] → output [T, D·hiddenSize], states [numLayers·D, hiddenSize].
 */
import { DTypeError, InvalidArgumentError, ShapeMismatchError } from '@polyhal/hal';
import { dropoutFromStream } from './dropout.js';
import { concat, stack } from './layout.js';
import { reshape, shrink, transpose } from './movement.js';
import type { InitializerLike } from './init.js';
import { type LayerConfig, type LayerOptions, layerParameter, Module, toRng } from './nn.js';
import { add, matmul, relu, tanh } from './ops.js';
import { gruCell, lstmCell } from './recurrent-cells.js';
import { Tensor } from './tensor.js';

/** Which recurrence a layer runs (PyTorch's `mode`). */
export type RecurrentMode = 'LSTM' | 'GRU' | 'RNN_TANH' | 'RNN_RELU';

/** The options of RNN, LSTM and GRU (PyTorch's keyword arguments) beside the backend and the rng. */
export interface RecurrentOptions extends LayerOptions {
  /** Stacked layers, each reading the one below's output (default 1). */
  numLayers?: number;
  /** Whether the layers have bias_ih and bias_hh (default true). */
  bias?: boolean;
  /** x and the output are [B, T, features] instead of [T, B, features] (default false); states are not. */
  batchFirst?: boolean;
  /** A second pass from the last step to the first, its features after the forward pass's (default false). */
  bidirectional?: boolean;
  /** Dropout on every layer's output but the last's, in training mode (default 0). */
  dropout?: number;
  /** Seed of that dropout's Philox stream (default 0); each forward continues the stream. */
  dropoutSeed?: number;
  /**
   * `forward` returns the whole output sequence (default true, PyTorch's), or with false only the last layer's
   * final state [B, D·hiddenSize] ([D·hiddenSize] unbatched), each direction's in turn: Keras's and tfjs's
   * `returnSequences: false`, what a classifier head reads.
   */
  returnSequences?: boolean;
  /** Initializer of every weight_ih (default U(±1/√hiddenSize) as PyTorch; tfjs's default is 'glorotUniform'). */
  kernelInitializer?: InitializerLike;
  /** Initializer of every weight_hh (default U(±1/√hiddenSize); tfjs's default is 'orthogonal'). */
  recurrentInitializer?: InitializerLike;
  /** Initializer of each of bias_ih and bias_hh (default U(±1/√hiddenSize); tfjs's one bias is 'zeros'). */
  biasInitializer?: InitializerLike;
}

const GATES: Record<RecurrentMode, number> = { LSTM: 4, GRU: 3, RNN_TANH: 1, RNN_RELU: 1 };

function checkCount(layer: string, name: string, v: unknown, min: number): void {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min)
    throw new InvalidArgumentError(`${layer}: ${name} must be an integer ≥ ${min}, got ${String(v)}`);
}

/** The layers' common machinery: parameters, checks and the unrolled recurrence. */
export abstract class RecurrentBase extends Module {
  /** Stacked layers. */
  readonly numLayers: number;
  /** Whether the layers have biases. */
  readonly hasBias: boolean;
  /** Whether x and the output put the batch first. */
  readonly batchFirst: boolean;
  /** Whether each layer also runs backwards in time. */
  readonly bidirectional: boolean;
  /** Dropout probability between layers (training only). */
  readonly dropout: number;
  /** Whether `forward` returns the output sequence (true) or the last layer's final state. */
  readonly returnSequences: boolean;
  /** Stream position of the next forward's first dropped element (seed `dropoutSeed`). */
  dropoutOffset = 0;
  private readonly dropoutSeed: number;

  constructor(
    /** Which recurrence. */
    readonly mode: RecurrentMode,
    /** Size of x's last dim. */
    readonly inputSize: number,
    /** Size of each direction's state and output features. */
    readonly hiddenSize: number,
    opts: RecurrentOptions,
  ) {
    super();
    const name = mode.startsWith('RNN') ? 'RNN' : mode;
    if (opts === null || typeof opts !== 'object' || !opts.backend)
      throw new InvalidArgumentError(`${name}: options must be an object with a backend`);
    checkCount(name, 'inputSize', inputSize, 1);
    checkCount(name, 'hiddenSize', hiddenSize, 1);
    this.numLayers = opts.numLayers ?? 1;
    checkCount(name, 'numLayers', this.numLayers, 1);
    this.dropout = opts.dropout ?? 0;
    if (typeof this.dropout !== 'number' || !(this.dropout >= 0 && this.dropout <= 1))
      throw new InvalidArgumentError(`${name}: dropout must be a number in [0, 1], got ${String(opts.dropout)}`);
    this.hasBias = opts.bias ?? true;
    this.batchFirst = opts.batchFirst ?? false;
    this.bidirectional = opts.bidirectional ?? false;
    this.dropoutSeed = opts.dropoutSeed ?? 0;
    this.returnSequences = opts.returnSequences ?? true;
    if (typeof this.returnSequences !== 'boolean')
      throw new InvalidArgumentError(`${name}: returnSequences must be a boolean, got ${String(opts.returnSequences)}`);
    const rng = toRng(opts.rng);
    const bound = 1 / Math.sqrt(hiddenSize);
    const G = GATES[mode] * hiddenSize;
    const D = this.bidirectional ? 2 : 1;
    for (let l = 0; l < this.numLayers; l++)
      for (let d = 0; d < D; d++) {
        const sfx = `_l${l}${d ? '_reverse' : ''}`;
        const inSize = l === 0 ? inputSize : D * hiddenSize;
        const param = (shape: number[], spec: InitializerLike | undefined) =>
          layerParameter(opts.backend, shape, spec, bound, rng);
        this.params.set(`weight_ih${sfx}`, param([G, inSize], opts.kernelInitializer));
        this.params.set(`weight_hh${sfx}`, param([G, hiddenSize], opts.recurrentInitializer));
        if (this.hasBias) {
          this.params.set(`bias_ih${sfx}`, param([G], opts.biasInitializer));
          this.params.set(`bias_hh${sfx}`, param([G], opts.biasInitializer));
        }
      }
  }

  /** { inputSize, hiddenSize, numLayers, bias, batchFirst, bidirectional, dropout, dropoutSeed, returnSequences }. */
  override getConfig(): LayerConfig {
    const { inputSize, hiddenSize, numLayers, hasBias: bias, batchFirst, bidirectional, dropout } = this;
    return {
      inputSize,
      hiddenSize,
      numLayers,
      bias,
      batchFirst,
      bidirectional,
      dropout,
      dropoutSeed: this.dropoutSeed,
      ...(this.returnSequences ? {} : { returnSequences: false }),
    };
  }

  /** Number of directions (2 when bidirectional). */
  get numDirections(): number {
    return this.bidirectional ? 2 : 1;
  }

  /**
   * The output sequence only (x as in the class docs): lets a recurrent layer sit in a Sequential. With
   * `returnSequences: false`, the last layer's final state instead: [B, D·hiddenSize] (forward's then reverse's).
   */
  forward(x: Tensor): Tensor {
    const r = this.run(x, undefined, undefined);
    if (this.returnSequences) return r.output;
    const D = this.numDirections;
    const L = this.numLayers;
    const rows = Array.from({ length: D }, (_, d) => {
      const row = (L - 1) * D + d;
      const bounds = r.h.shape.map((n, i): [number, number] => (i === 0 ? [row, row + 1] : [0, n]));
      return reshape(shrink(r.h, bounds), r.h.shape.slice(1));
    });
    return D === 1 ? rows[0]! : concat(rows, -1);
  }

  /** Checks x and a state; returns T and B. */
  private check(x: Tensor, states: [string, Tensor | undefined][]): [number, number] {
    const layer = this.mode.startsWith('RNN') ? 'RNN' : this.mode;
    if (!(x instanceof Tensor)) throw new InvalidArgumentError(`${layer}: x must be a Tensor`);
    if (x.dtype !== 'float32') throw new DTypeError(`${layer}: x must be float32, got ${x.dtype}`);
    const want = `${this.batchFirst ? '[B, T, inputSize]' : '[T, B, inputSize]'} or [T, inputSize]`;
    if (x.rank !== 3 || x.shape[2] !== this.inputSize)
      throw new ShapeMismatchError(
        `${layer}: x must be ${want} with inputSize ${this.inputSize}, got [${x.shape.join(', ')}]`,
        [x.shape],
      );
    const [T, B] = (this.batchFirst ? [x.shape[1], x.shape[0]] : [x.shape[0], x.shape[1]]) as [number, number];
    const stateShape = [this.numLayers * this.numDirections, B, this.hiddenSize];
    for (const [name, s] of states) {
      if (s === undefined) continue;
      if (!(s instanceof Tensor)) throw new InvalidArgumentError(`${layer}: ${name} must be a Tensor`);
      if (s.shape.length !== 3 || s.shape.some((v, i) => v !== stateShape[i]))
        throw new ShapeMismatchError(
          `${layer}: ${name} must be [numLayers·D, B, hiddenSize] = [${stateShape.join(', ')}], ` +
            `got [${s.shape.join(', ')}]`,
          [s.shape, stateShape],
        );
    }
    return [T, B];
  }

  /** The recurrence over every layer and direction: the output and the final states (c for LSTM). */
  protected run(x: Tensor, h0: Tensor | undefined, c0: Tensor | undefined): { output: Tensor; h: Tensor; c?: Tensor } {
    if (x instanceof Tensor && x.rank === 2) {
      // unbatched (PyTorch): x [T, inputSize] and states [numLayers·D, hiddenSize], run as a batch of one
      const one = (s: Tensor | undefined) => (s?.rank === 2 ? reshape(s, [s.shape[0]!, 1, s.shape[1]!]) : s);
      const [T, I] = x.shape as [number, number];
      const r = this.run(reshape(x, this.batchFirst ? [1, T, I] : [T, 1, I]), one(h0), one(c0));
      const drop = (t: Tensor, axis: number): Tensor =>
        reshape(
          t,
          t.shape.filter((_, i) => i !== axis),
        );
      return { output: drop(r.output, this.batchFirst ? 0 : 1), h: drop(r.h, 1), ...(r.c ? { c: drop(r.c, 1) } : {}) };
    }
    const [T, B] = this.check(x, [
      ['h0', h0],
      ['c0', c0],
    ]);
    const H = this.hiddenSize;
    const D = this.numDirections;
    const lstm = this.mode === 'LSTM';
    // row r of a [L·D, B, H] state, as [B, H]
    const rowOf = (s: Tensor | undefined, r: number): Tensor =>
      s
        ? reshape(
            shrink(s, [
              [r, r + 1],
              [0, B],
              [0, H],
            ]),
            [B, H],
          )
        : Tensor.full(x.backend, [B, H], 0);
    const at = (t: number): Tensor => {
      const b = x.shape.map((n, i) => (i === (this.batchFirst ? 1 : 0) ? [t, t + 1] : [0, n]) as [number, number]);
      return reshape(shrink(x, b), [B, this.inputSize]);
    };
    let steps = Array.from({ length: T }, (_, t) => at(t));
    const hs: Tensor[] = [];
    const cs: Tensor[] = [];
    for (let l = 0; l < this.numLayers; l++) {
      if (l > 0 && this.dropout > 0 && this.training)
        steps = steps.map((s) =>
          // the stream continues at dropoutOffset, in compile's replays too (dropoutFromStream)
          dropoutFromStream(s, this.dropout, this.dropoutSeed, (n) => {
            const at = this.dropoutOffset;
            this.dropoutOffset += n;
            return at;
          }),
        );
      const dirs: Tensor[][] = [];
      for (let d = 0; d < D; d++) {
        const sfx = `_l${l}${d ? '_reverse' : ''}`;
        const wih = transpose(this.param(`weight_ih${sfx}`));
        const whh = transpose(this.param(`weight_hh${sfx}`));
        const bih = this.params.get(`bias_ih${sfx}`) ?? null;
        const bhh = this.params.get(`bias_hh${sfx}`) ?? null;
        let h = rowOf(h0, l * D + d);
        let c = lstm ? rowOf(c0, l * D + d) : undefined;
        const outs: Tensor[] = new Array(T);
        for (let k = 0; k < T; k++) {
          const t = d ? T - 1 - k : k;
          const ih = matmul(steps[t]!, wih, bih);
          const hh = matmul(h, whh, bhh);
          if (lstm) [h, c] = lstmCell(add(ih, hh), c!);
          else if (this.mode === 'GRU') h = gruCell(ih, hh, h);
          else h = this.mode === 'RNN_RELU' ? relu(add(ih, hh)) : tanh(add(ih, hh));
          outs[t] = h;
        }
        dirs.push(outs);
        hs.push(h);
        if (c) cs.push(c);
      }
      steps = D === 1 ? dirs[0]! : steps.map((_, t) => concat([dirs[0]![t]!, dirs[1]![t]!], 1));
    }
    return {
      output: stack(steps, this.batchFirst ? 1 : 0),
      h: stack(hs, 0),
      ...(lstm ? { c: stack(cs, 0) } : {}),
    };
  }
}

/** What RNN takes beyond RecurrentOptions. */
export interface RNNOptions extends RecurrentOptions {
  /** h′ = tanh(x·W_ihᵀ + b_ih + h·W_hhᵀ + b_hh) (default) or relu(...). */
  nonlinearity?: 'tanh' | 'relu';
}

/**
 * An Elman RNN (PyTorch nn.RNN): h′ = tanh(x·W_ihᵀ + b_ih + h·W_hhᵀ + b_hh) per step (relu with nonlinearity
 * 'relu'). weight_ih_l{k} [H, in], weight_hh_l{k} [H, H], biases [H]. Shapes and errors: RecurrentBase.
 */
export class RNN extends RecurrentBase {
  constructor(inputSize: number, hiddenSize: number, opts: RNNOptions) {
    const nl = opts?.nonlinearity ?? 'tanh';
    if (nl !== 'tanh' && nl !== 'relu')
      throw new InvalidArgumentError(`RNN: nonlinearity must be 'tanh' or 'relu', got ${String(nl)}`);
    super(nl === 'relu' ? 'RNN_RELU' : 'RNN_TANH', inputSize, hiddenSize, opts);
  }

  /** RecurrentBase's config and { nonlinearity }. */
  override getConfig(): LayerConfig {
    return { ...super.getConfig(), nonlinearity: this.mode === 'RNN_RELU' ? 'relu' : 'tanh' };
  }

  /**
   * x and h0 [numLayers·D, B, H] (zeros when omitted) → [output, hN]: the output sequence and every layer's
   * and direction's last state. ShapeMismatchError for an x or h0 that does not fit; DTypeError for non-float32 x.
   */
  forwardWithState(x: Tensor, h0?: Tensor): [Tensor, Tensor] {
    const r = this.run(x, h0, undefined);
    return [r.output, r.h];
  }
}

/**
 * A GRU (PyTorch nn.GRU): r, z = σ(x·W_i{r,z}ᵀ + b_i{r,z} + h·W_h{r,z}ᵀ + b_h{r,z}), n = tanh(x·W_inᵀ + b_in +
 * r ⊙ (h·W_hnᵀ + b_hn)), h′ = (1 − z) ⊙ n + z ⊙ h. weight_ih_l{k} [3H, in] (blocks r, z, n), weight_hh_l{k}
 * [3H, H], biases [3H]. Shapes and errors: RecurrentBase.
 */
export class GRU extends RecurrentBase {
  constructor(inputSize: number, hiddenSize: number, opts: RecurrentOptions) {
    super('GRU', inputSize, hiddenSize, opts);
  }

  /** x and h0 [numLayers·D, B, H] (zeros when omitted) → [output, hN]; errors as RNN's. */
  forwardWithState(x: Tensor, h0?: Tensor): [Tensor, Tensor] {
    const r = this.run(x, h0, undefined);
    return [r.output, r.h];
  }
}

/**
 * An LSTM (PyTorch nn.LSTM): i, f, o = σ(...), g = tanh(...) of x·W_ihᵀ + b_ih + h·W_hhᵀ + b_hh (blocks i, f,
 * g, o), c′ = f ⊙ c + i ⊙ g, h′ = o ⊙ tanh(c′). weight_ih_l{k} [4H, in], weight_hh_l{k} [4H, H], biases [4H].
 * Shapes and errors: RecurrentBase.
 */
export class LSTM extends RecurrentBase {
  constructor(inputSize: number, hiddenSize: number, opts: RecurrentOptions) {
    super('LSTM', inputSize, hiddenSize, opts);
  }

  /**
   * x and [h0, c0], each [numLayers·D, B, H] (zeros when omitted) → [output, [hN, cN]]; errors as RNN's
   * (a state given without its partner: InvalidArgumentError).
   */
  forwardWithState(x: Tensor, state?: [Tensor, Tensor]): [Tensor, [Tensor, Tensor]] {
    if (state !== undefined && (!Array.isArray(state) || state.length !== 2))
      throw new InvalidArgumentError('LSTM: state must be [h0, c0]');
    const r = this.run(x, state?.[0], state?.[1]);
    return [r.output, [r.h, r.c!]];
  }
}
