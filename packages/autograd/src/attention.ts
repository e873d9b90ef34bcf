/**
 * Scaled dot-product attention (Vaswani et al. 2017) and multi-head attention, composed from autograd
 * ops (gradients follow from the composition), with PyTorch's conventions: batch-first [N, L, E]
 * inputs, additive float masks, `causal` hiding the keys after each query.
 */
import { InvalidArgumentError, ShapeMismatchError } from '@polyhal/hal';
import { attentionOp, attentionOpApplies } from './attention-op.js';
import { type LayerConfig, type LayerOptions, Linear, Module } from './nn.js';
import { Tensor } from './tensor.js';

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
 * Multi-head attention: projections of query, key and value split into `numHeads` heads of
 * embedDim/numHeads, attention per head, heads concatenated and projected. Inputs [N, L, E]
 * (batch first); forward(x) is self-attention. Init: each projection as Linear's (U(±1/√E)).
 */
export class MultiHeadAttention extends Module {
  /** embedDim / numHeads: each head's width. */
  readonly headDim: number;
  private readonly q: Linear;
  private readonly k: Linear;
  private readonly v: Linear;
  private readonly out: Linear;
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
    const layer = (i: number): Linear =>
      new Linear(embedDim, embedDim, { ...opts, rng: typeof opts.rng === 'function' ? opts.rng : seed * 4 + i });
    [this.q, this.k, this.v, this.out] = [layer(0), layer(1), layer(2), layer(3)];
    this.children.set('q', this.q);
    this.children.set('k', this.k);
    this.children.set('v', this.v);
    this.children.set('out', this.out);
  }

  /** { embedDim, numHeads, bias }. */
  override getConfig(): LayerConfig {
    return { embedDim: this.embedDim, numHeads: this.numHeads, bias: this.q.bias !== null };
  }

  /** [N, L, E] → [N, heads, L, E/heads]. */
  private split(x: Tensor): Tensor {
    const [N, L] = x.shape as [number, number];
    return x.reshape([N, L, this.numHeads, this.headDim]).permute([0, 2, 1, 3]);
  }

  /** query [N, L, E], key and value [N, S, E] → [N, L, E]. */
  attend(query: Tensor, key: Tensor, value: Tensor, options: AttentionOptions = {}): Tensor {
    for (const t of [query, key, value])
      if (t.rank !== 3 || t.shape[2] !== this.embedDim)
        throw new ShapeMismatchError(`MultiHeadAttention: inputs [N, L, ${this.embedDim}] needed, got [${t.shape}]`, [
          t.shape,
        ]);
    const [N, L] = query.shape as [number, number];
    const heads = scaledDotProductAttention(
      this.split(this.q.forward(query)),
      this.split(this.k.forward(key)),
      this.split(this.v.forward(value)),
      options,
    );
    return this.out.forward(heads.permute([0, 2, 1, 3]).reshape([N, L, this.embedDim]));
  }

  /** Self-attention: x [N, L, E] → [N, L, E] (attend(x, x, x), no mask). */
  forward(x: Tensor): Tensor {
    return this.attend(x, x, x);
  }
}
