/**
 * Scaled dot-product attention (Vaswani et al. 2017) and multi-head attention, composed from autograd
 * ops (gradients follow from the composition), with PyTorch's conventions: batch-first [N, L, E]
 * inputs, additive float masks, `causal` hiding the keys after each query.
 */
import { InvalidArgumentError, type Rng, ShapeMismatchError } from '@polyhal/hal';
import { attentionOp, attentionOpApplies } from './attention-op.js';
import { packedSelfAttention, packedSelfAttentionApplies } from './attention-packed.js';
import type { Initializer } from './init.js';
import { concat } from './layout.js';
import { type LayerConfig, type LayerOptions, Linear, Module, toRng } from './nn.js';
import { noGrad, Tensor } from './tensor.js';

/** Options of scaledDotProductAttention and MultiHeadAttention.attend. */
export interface AttentionOptions {
  /** Added to the scores before softmax, broadcast to [..., L, S] (−Inf hides a key). */
  mask?: Tensor;
  /** Hide every key after the query's position (key j > query i). */
  causal?: boolean;
  /** Score scale (default 1/√d). */
  scale?: number;
}

/**
 * softmax(q·kᵀ·scale + mask)·v. q: [..., L, d], k: [..., S, d], v: [..., S, dv] → [..., L, dv]; leading
 * dims broadcast. A query whose keys are all hidden gets NaN (softmax over −Inf only), as PyTorch.
 */
export function scaledDotProductAttention(q: Tensor, k: Tensor, v: Tensor, options: AttentionOptions = {}): Tensor {
  const d = q.shape.at(-1)!;
  if (q.rank < 2 || k.rank < 2 || v.rank < 2 || k.shape.at(-1) !== d || v.shape.at(-2) !== k.shape.at(-2))
    throw new ShapeMismatchError(
      `scaledDotProductAttention: q [..., L, d], k [..., S, d], v [..., S, dv] needed, got ` +
        `[${q.shape}], [${k.shape}], [${v.shape}]`,
      [q.shape, k.shape, v.shape],
    );
  const L = q.shape.at(-2)!;
  const S = k.shape.at(-2)!;
  // without a mask: one op (a fused kernel forward and backward where the backend has them; attention-op.ts)
  if (!options.mask && !options.causal && attentionOpApplies(q, k, v))
    return attentionOp(q, k, v, options.scale ?? 1 / Math.sqrt(d));
  let scores = q.matmul(k.transpose()).mul(options.scale ?? 1 / Math.sqrt(d));
  if (options.mask) scores = scores.add(options.mask);
  if (options.causal) {
    const hide = new Float32Array(L * S);
    for (let i = 0; i < L; i++) for (let j = i + 1; j < S; j++) hide[i * S + j] = -Infinity;
    const maskTensor = Tensor.fromArray(q.backend, hide, [L, S]);
    scores = scores.add(maskTensor);
    if (!scores.node) maskTensor.dispose(); // with a graph, the graph holds it
  }
  return scores.softmax(-1).matmul(v);
}

/**
 * Multi-head attention (PyTorch's nn.MultiheadAttention, batch first): the query, key and value projected by
 * one packed in-projection `inProj` (Linear(E, 3E): the rows of Wq, then Wk, then Wv, as PyTorch's
 * in_proj_weight [3E, E] and in_proj_bias [3E]), split into `numHeads` heads of embedDim/numHeads, attention
 * per head, heads concatenated and projected by `out` (Linear(E, E)). Inputs [N, L, E]; forward(x) is
 * self-attention: one product x·Wᵀ + b → [N, L, 3E], whose thirds are q, k and v as views (no copy); without a
 * mask, in float32, the whole projection goes to one attention op whose gradient is one array
 * (attention-packed.ts). `attend` with distinct inputs projects each with its rows of the packed weight
 * (PyTorch's _in_projection_packed). Init: Wq, Wk, Wv and `out` each as a Linear(E, E) of its own (U(±1/√E)) with seeds
 * 4·seed + 0, 1, 2, 3 (or drawn in that order from an Rng), so packing changed no initial weight.
 * State dicts and model files of the earlier layout (children `q`, `k`, `v`, `out`) load: their q, k and v
 * weights and biases are packed into inProj's (`upgradeState`).
 */
export class MultiHeadAttention extends Module {
  /** embedDim / numHeads: each head's width. */
  readonly headDim: number;
  /** The packed in-projection: weight [3E, E] (Wq; Wk; Wv), bias [3E] (absent with `bias: false`). */
  readonly inProj: Linear;
  /** The output projection, weight [E, E] and bias [E]. */
  readonly out: Linear;
  constructor(
    /** E: the inputs' and output's last dim. */
    readonly embedDim: number,
    /** Heads; embedDim must be a multiple (InvalidArgumentError otherwise). */
    readonly numHeads: number,
    opts: LayerOptions & { bias?: boolean },
  ) {
    super();
    if (!Number.isInteger(embedDim / numHeads) || numHeads < 1)
      throw new InvalidArgumentError(
        `MultiHeadAttention: embedDim ${embedDim} is not a multiple of numHeads ${numHeads}`,
      );
    this.headDim = embedDim / numHeads;
    const seed = typeof opts.rng === 'number' ? opts.rng : 0;
    const rngOf = (i: number): Rng => (typeof opts.rng === 'function' ? opts.rng : toRng(seed * 4 + i));
    // Wq, bq, Wk, bk, Wv, bv drawn as three Linear(E, E) layers draw them (W then b, U(±1/√E)), then packed.
    const bias = opts.bias !== false;
    const bound = 1 / Math.sqrt(embedDim);
    const E2 = embedDim * embedDim;
    const weight = new Float32Array(3 * E2);
    const biases = new Float32Array(3 * embedDim);
    for (let i = 0; i < 3; i++) {
      const rng = rngOf(i);
      for (let j = 0; j < E2; j++) weight[i * E2 + j] = (rng() * 2 - 1) * bound;
      if (bias) for (let j = 0; j < embedDim; j++) biases[i * embedDim + j] = (rng() * 2 - 1) * bound;
    }
    const given = (name: string, data: Float32Array): Initializer => ({ name, sample: () => data });
    this.inProj = new Linear(embedDim, 3 * embedDim, {
      backend: opts.backend,
      bias,
      kernelInitializer: given('packed Wq, Wk, Wv', weight),
      biasInitializer: given('packed bq, bk, bv', biases),
    });
    this.out = new Linear(embedDim, embedDim, { ...opts, rng: rngOf(3) });
    this.children.set('inProj', this.inProj);
    this.children.set('out', this.out);
  }

  /** { embedDim, numHeads, bias }. */
  override getConfig(): LayerConfig {
    return { embedDim: this.embedDim, numHeads: this.numHeads, bias: this.inProj.bias !== null };
  }

  /**
   * The earlier layout's `q`, `k` and `v` weights (and biases) under `prefix`, when `state` has all three, of one
   * shape, dtype and backend, and not inProj's: replaced by their concatenation `inProj.weight` [3E, E]
   * (`inProj.bias` [3E]); returns the packed tensors (the loader frees them). Parts that differ stay as they are
   * (the load then names them as unexpected, and inProj's as missing).
   */
  protected override upgradeState(state: Record<string, Tensor>, prefix: string): Tensor[] {
    const made: Tensor[] = [];
    for (const p of ['weight', 'bias']) {
      const names = ['q', 'k', 'v'].map((n) => `${prefix}${n}.${p}`);
      const target = `${prefix}inProj.${p}`;
      if (Object.hasOwn(state, target) || !names.every((k) => Object.hasOwn(state, k))) continue;
      const parts = names.map((k) => state[k]!);
      const [a] = parts as [Tensor];
      const alike = (t: Tensor): boolean =>
        t.backend === a.backend &&
        t.dtype === a.dtype &&
        t.rank === a.rank &&
        t.shape.every((d, i) => d === a.shape[i]);
      if (a.rank === 0 || !parts.every(alike)) continue;
      const packed = noGrad(() => concat(parts));
      made.push(packed);
      for (const k of names) delete state[k];
      state[target] = packed;
    }
    return made;
  }

  /**
   * [N, L, n·E] → n tensors [N, heads, L, E/heads]: views of y (no copy). Backward pads each view's gradient
   * back to y's shape and sums them (2 kernels a view and n − 1 adds): an autograd node of several outputs
   * would write them into one array instead.
   */
  private split(y: Tensor, n: number): Tensor[] {
    const [N, L] = y.shape as [number, number];
    const [H, D] = [this.numHeads, this.headDim];
    const heads = (t: Tensor): Tensor => t.reshape([N, L, H, D]).permute([0, 2, 1, 3]);
    if (n === 1) return [heads(y)];
    const parts = y.reshape([N, L, n, H, D]);
    return Array.from({ length: n }, (_, i) =>
      heads(
        parts.shrink([
          [0, N],
          [0, L],
          [i, i + 1],
          [0, H],
          [0, D],
        ]),
      ),
    );
  }

  /**
   * x [N, L, E] projected by rows [from·E, to·E) of the packed in-projection (one or two of q, k, v), split into
   * to − from tensors of heads: a view of the weight (and bias) in one product, or, while inProj is quantized or
   * calibrated (quantize.ts), a view of inProj's whole output.
   */
  private projectHeads(x: Tensor, from: number, to: number): Tensor[] {
    const E = this.embedDim;
    const rows: [number, number] = [from * E, to * E];
    let y: Tensor;
    if (this.inProj.quantization || this.inProj.observer)
      y = this.inProj.forward(x).shrink([...x.shape.slice(0, -1).map((d): [number, number] => [0, d]), rows]);
    else y = x.matmul(this.inProj.weight.shrink([rows, [0, E]]).transpose(), this.inProj.bias?.shrink([rows]) ?? null);
    return this.split(y, to - from);
  }

  /**
   * query [N, L, E], key and value [N, S, E] → [N, L, E]. The same tensor as query, key and value is
   * self-attention (one packed product); key the same as value: two products (q, then k and v packed);
   * three tensors: three products.
   */
  attend(query: Tensor, key: Tensor, value: Tensor, options: AttentionOptions = {}): Tensor {
    for (const t of [query, key, value])
      if (t.rank !== 3 || t.shape[2] !== this.embedDim)
        throw new ShapeMismatchError(`MultiHeadAttention: inputs [N, L, ${this.embedDim}] needed, got [${t.shape}]`, [
          t.shape,
        ]);
    const [N, L] = query.shape as [number, number];
    const merge = (heads: Tensor): Tensor =>
      this.out.forward(heads.permute([0, 2, 1, 3]).reshape([N, L, this.embedDim]));
    let qkv: Tensor[];
    if (query === key && key === value) {
      const y = this.inProj.forward(query);
      // Without a mask, [N, L, 3, H, D] goes whole to one attention op whose gradient is one array
      // (attention-packed.ts); with one or under autocast, q, k and v are views of it.
      if (!options.mask && !options.causal && packedSelfAttentionApplies(y)) {
        const packed = y.reshape([N, L, 3, this.numHeads, this.headDim]);
        return merge(packedSelfAttention(packed, options.scale ?? 1 / Math.sqrt(this.headDim)));
      }
      qkv = this.split(y, 3);
    } else if (key === value) qkv = [...this.projectHeads(query, 0, 1), ...this.projectHeads(key, 1, 3)];
    else qkv = [query, key, value].flatMap((t, i) => this.projectHeads(t, i, i + 1));
    const [q, k, v] = qkv as [Tensor, Tensor, Tensor];
    return merge(scaledDotProductAttention(q, k, v, options));
  }

  /** Self-attention: x [N, L, E] → [N, L, E] (attend(x, x, x), no mask). */
  forward(x: Tensor): Tensor {
    return this.attend(x, x, x);
  }
}
