/**
 * A Vision Transformer for 28×28 digits (Dosovitskiy et al. 2021, "An Image is Worth 16x16 Words"),
 * written with PolyHAL's public autograd API only — copy it as an example. [N, 784] pixels → 7×7
 * patches (16 tokens of 49 pixels) → linear patch embedding, a learned class token and position
 * embedding → pre-norm encoder blocks (LayerNorm, multi-head self-attention, LayerNorm, GELU MLP, each
 * with a residual connection) → LayerNorm of the class token → linear head → [N, 10] logits.
 */
import { type ComputeBackend, mulberry32, type Rng } from '@polyhal/hal';
import { concat, keep, LayerNorm, Linear, Module, MultiHeadAttention, noGrad, Tensor } from '@polyhal/autograd';

/** Options of VisionTransformer: where it lives, its seed and its size. */
export interface VitOptions {
  /** The backend its parameters are allocated on. */
  backend: ComputeBackend;
  /** Seed of every initial weight (default 0): the same seed gives the same model on every backend. */
  seed?: number;
  /** Token width (default 64). */
  width?: number;
  /** Encoder blocks (default 4). */
  depth?: number;
  /** Attention heads (default 4). */
  heads?: number;
  /** MLP hidden width = width × mlpRatio (default 2). */
  mlpRatio?: number;
  /** Patch side in pixels; 28 must be a multiple (default 7: 16 patches). */
  patch?: number;
}

/**
 * One pre-norm encoder block: x + attention(norm(x)), then h + fc2(gelu(fc1(norm(h)))). x: [N, T, width] →
 * [N, T, width]; the attention's weights from `seed`, fc1's and fc2's from seed + 1 and seed + 2.
 */
export class EncoderBlock extends Module {
  /** LayerNorm before the attention. */
  readonly norm1: LayerNorm;
  /** Self-attention over the tokens. */
  readonly attention: MultiHeadAttention;
  /** LayerNorm before the MLP. */
  readonly norm2: LayerNorm;
  /** The MLP's first layer, width → hidden. */
  readonly fc1: Linear;
  /** The MLP's second layer, hidden → width. */
  readonly fc2: Linear;
  constructor(width: number, heads: number, hidden: number, backend: ComputeBackend, seed: number) {
    super();
    this.norm1 = new LayerNorm(width, { backend });
    this.attention = new MultiHeadAttention(width, heads, { backend, rng: seed });
    this.norm2 = new LayerNorm(width, { backend });
    this.fc1 = new Linear(width, hidden, { backend, rng: seed + 1 });
    this.fc2 = new Linear(hidden, width, { backend, rng: seed + 2 });
    for (const [name, m] of Object.entries({
      norm1: this.norm1,
      attention: this.attention,
      norm2: this.norm2,
      fc1: this.fc1,
      fc2: this.fc2,
    }))
      this.children.set(name, m);
  }
  forward(x: Tensor): Tensor {
    const h = x.add(this.attention.forward(this.norm1.forward(x)));
    return h.add(this.fc2.forward(this.fc1.forward(this.norm2.forward(h)).gelu()));
  }
}

/** The ViT above: forward(x [N, 784] float32 pixels) → [N, 10] logits. */
export class VisionTransformer extends Module {
  /** Patch side in pixels. */
  readonly patch: number;
  /** Patches per image, (28 / patch)²; the encoder sees tokens + 1 with the class token. */
  readonly tokens: number;
  /** Token width. */
  readonly width: number;
  private readonly embed: Linear;
  private readonly blocks: EncoderBlock[];
  private readonly norm: LayerNorm;
  private readonly head: Linear;

  constructor(o: VitOptions) {
    super();
    const seed = o.seed ?? 0;
    const backend = o.backend;
    this.width = o.width ?? 64;
    this.patch = o.patch ?? 7;
    const side = 28 / this.patch;
    this.tokens = side * side;
    this.embed = new Linear(this.patch * this.patch, this.width, { backend, rng: seed });
    // Class token and position embeddings: N(0, 0.02²)-like small values (uniform ±0.02·√3), as ViT.
    const rng = mulberry32(seed + 1000);
    const small = (shape: number[]): Tensor => {
      const n = shape.reduce((p, d) => p * d, 1);
      const v = Float32Array.from({ length: n }, () => (rng() * 2 - 1) * 0.02 * Math.sqrt(3));
      return keep(Tensor.fromArray(backend, v, shape, { requiresGrad: true }));
    };
    this.params.set('classToken', small([1, 1, this.width]));
    this.params.set('position', small([1, this.tokens + 1, this.width]));
    const heads = o.heads ?? 4;
    const hidden = this.width * (o.mlpRatio ?? 2);
    this.blocks = Array.from(
      { length: o.depth ?? 4 },
      (_, i) => new EncoderBlock(this.width, heads, hidden, backend, seed + 10 * (i + 1)),
    );
    this.norm = new LayerNorm(this.width, { backend });
    this.head = new Linear(this.width, 10, { backend, rng: seed + 7 });
    this.children.set('embed', this.embed);
    this.blocks.forEach((b, i) => this.children.set(`blocks.${i}`, b));
    this.children.set('norm', this.norm);
    this.children.set('head', this.head);
  }

  /** x: [N, 784] (or [N, 1, 28, 28]) pixels → [N, 10] logits. */
  forward(x: Tensor): Tensor {
    const N = x.shape[0]!;
    const p = this.patch;
    const side = 28 / p;
    // [N, 784] → [N, side, p, side, p] → [N, side, side, p, p] → [N, tokens, p·p]
    const patches = x
      .reshape([N, side, p, side, p])
      .permute([0, 1, 3, 2, 4])
      .reshape([N, this.tokens, p * p]);
    // Token 0 is the class token: the patch embeddings move one place right (zero-padded in front), and
    // the class token (zero-padded behind) fills place 0; then the position embeddings are added.
    const embedded = this.embed.forward(patches).pad([
      [0, 0],
      [1, 0],
      [0, 0],
    ]);
    const cls = this.param('classToken').pad([
      [0, 0],
      [0, this.tokens],
      [0, 0],
    ]);
    let h = embedded.add(cls.add(this.param('position')));
    for (const block of this.blocks) h = block.forward(h);
    const first = this.norm.forward(h).shrink([
      [0, N],
      [0, 1],
      [0, this.width],
    ]);
    return this.head.forward(first.reshape([N, this.width]));
  }
}

/**
 * Random translations of a batch of digits [N, 784] by up to `max` pixels in each direction (zeros
 * shifted in), one shift per digit drawn from `rng`: the augmentation a transformer needs on 8,000
 * digits (it has no convolution's built-in shift tolerance). On the device: pad, one window per digit,
 * concat.
 */
export function randomShift(x: Tensor, rng: Rng, max = 2): Tensor {
  return noGrad(() => {
    const N = x.shape[0]!;
    const padded = x.reshape([N, 28, 28]).pad([
      [0, 0],
      [max, max],
      [max, max],
    ]);
    const side = 2 * max + 1;
    const windows = Array.from({ length: N }, (_, i) => {
      const dy = Math.floor(rng() * side);
      const dx = Math.floor(rng() * side);
      return padded.shrink([
        [i, i + 1],
        [dy, dy + 28],
        [dx, dx + 28],
      ]);
    });
    return concat(windows, 0).reshape([N, 784]);
  });
}
