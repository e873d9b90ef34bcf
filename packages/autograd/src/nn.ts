/**
 * Neural-network layers and losses on autograd tensors (PyTorch naming). Layers are created directly
 * on a backend and can move with `await module.to(backend)`. Initial weights come from a seeded host
 * RNG, so the same seed gives the same model on every backend.
 */
import {
  type ComputeBackend,
  DTypeError,
  InvalidArgumentError,
  mulberry32,
  type Rng,
  ShapeMismatchError,
} from '@polyhal/hal';
import { initParameter, type InitializerLike, type WeightInitOptions } from './init.js';
import { UninitializedParameterError } from './uninitialized.js';
import { flatten, transpose } from './movement.js';
import { gelu, geluTanh, matmul, mean, mul, relu, sigmoid, silu, sub, tanh } from './ops.js';
import { gather } from './indexing.js';
import { keep } from './scope.js';
import { Tensor } from './tensor.js';

/** What every layer's constructor takes: where its parameters live and how they are initialized. */
export interface LayerOptions {
  /** The backend the parameters are allocated on (move them later with `await module.to(other)`). */
  backend: ComputeBackend;
  /** Seed or RNG for the initial weights (default seed 0). */
  rng?: Rng | number;
}

/**
 * A layer's constructor arguments as JSON-able values (tfjs's `getConfig()`), without the backend, the rng or
 * initializers: what `saveModel` writes beside the class name, and what a registered `fromConfig` reads back.
 */
export type LayerConfig = Record<string, unknown>;

/** An Rng from a seed (mulberry32; default seed 0) or an Rng itself, returned as is. */
export const toRng = (r: Rng | number | undefined): Rng => (typeof r === 'function' ? r : mulberry32(r ?? 0));

/** A parameter: uniform in [−bound, bound], requiresGrad, exempt from scopes. */
export function parameter(be: ComputeBackend, shape: number[], bound: number, rng: Rng): Tensor {
  const n = shape.reduce((p, d) => p * d, 1);
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = (rng() * 2 - 1) * bound;
  return keep(Tensor.fromArray(be, data, shape, { requiresGrad: true }));
}

/** A parameter from `spec` when given, else the layer's default U(±bound) (`parameter`). */
export function layerParameter(
  be: ComputeBackend,
  shape: number[],
  spec: InitializerLike | undefined,
  bound: number,
  rng: Rng,
): Tensor {
  return spec === undefined ? parameter(be, shape, bound, rng) : initParameter(be, shape, spec, rng);
}

/** A parameter drawn from N(0, 1) (Box–Muller on the rng's uniforms), requiresGrad, exempt from scopes. */
function normalParameter(be: ComputeBackend, shape: number[], rng: Rng): Tensor {
  const data = new Float32Array(shape.reduce((p, d) => p * d, 1));
  for (let i = 0; i < data.length; i += 2) {
    const r = Math.sqrt(-2 * Math.log(1 - rng()));
    const t = 2 * Math.PI * rng();
    data[i] = r * Math.cos(t);
    if (i + 1 < data.length) data[i + 1] = r * Math.sin(t);
  }
  return keep(Tensor.fromArray(be, data, shape, { requiresGrad: true }));
}

/**
 * The base of every layer (PyTorch nn.Module): named parameters, buffers and child modules, registered by
 * subclasses' constructors; `forward` computes the output. Parameters are kept out of scopes (`keep`), so a
 * module lives until `dispose()`.
 */
export abstract class Module {
  /** Training mode (default) or evaluation mode, set by train()/eval(): Dropout and BatchNorm differ in them. */
  training = true;
  /** This module's own parameters by name (`weight`, `bias`), in registration order. */
  protected readonly params = new Map<string, Tensor>();
  /** State that is not trained (e.g. BatchNorm's running statistics): in stateDict, not in parameters(). */
  protected readonly buffers = new Map<string, Tensor>();
  /** Child modules by name: their parameters appear as `name.param` in namedParameters and stateDict. */
  protected readonly children = new Map<string, Module>();

  /** The layer's computation on input x (shapes per subclass); records the graph when x needs gradients. */
  abstract forward(x: Tensor): Tensor;

  /**
   * The constructor arguments that rebuild this layer (see LayerConfig): {} here; built-in layers override
   * it, and so does a user layer with arguments that `registerLayer` is to save. Children are not in it
   * (`saveModel` nests their own configs).
   */
  getConfig(): LayerConfig {
    return {};
  }

  /** Every parameter of this module and its children, in registration order. */
  parameters(): Tensor[] {
    return this.namedParameters().map(([, t]) => t);
  }

  /** This module's direct children with their names, in registration order (PyTorch named_children). */
  namedChildren(): [string, Module][] {
    return [...this.children];
  }

  /** This module and every descendant with its dotted name ('' for this one), depth first (PyTorch named_modules). */
  namedModules(prefix = ''): [string, Module][] {
    const all: [string, Module][] = [[prefix, this]];
    for (const [name, child] of this.children) all.push(...child.namedModules(prefix ? `${prefix}.${name}` : name));
    return all;
  }

  /** Every parameter with its dotted name (`0.weight`, `encoder.1.bias`), this module's first, then each child's. */
  namedParameters(prefix = ''): [string, Tensor][] {
    const pending = this.uninitialized();
    if (pending !== null)
      throw new UninitializedParameterError(
        `${prefix ? `${prefix.slice(0, -1)}: ` : ''}${pending}; call the model once on an input (or ` +
          'materialize(model, inputShape)) before parameters(), stateDict() or creating an optimizer',
      );
    const own: [string, Tensor][] = [...this.params].map(([k, t]) => [`${prefix}${k}`, t]);
    for (const [name, child] of this.children) own.push(...child.namedParameters(`${prefix}${name}.`));
    return own;
  }

  /**
   * Moves every parameter (and its gradient) to `backend` in place: the parameter tensors stay the
   * same objects, so an optimizer built on `parameters()` keeps updating them (its state is created
   * at a parameter's first step; state from steps before the move needs `await optimizer.to(backend)`,
   * see `Optimizer`). The old buffers are freed. Returns this module.
   */
  async to(backend: ComputeBackend): Promise<this> {
    for (const t of this.params.values()) await t.moveTo(backend);
    for (const t of this.buffers.values()) await t.moveTo(backend);
    for (const c of this.children.values()) await c.to(backend);
    return this;
  }

  /** Sets training mode (`on`, default true) on this module and every descendant; returns this module. */
  train(on = true): this {
    this.training = on;
    for (const c of this.children.values()) c.train(on);
    return this;
  }

  /** Sets evaluation mode (train(false)): Dropout passes inputs through, BatchNorm uses running statistics. */
  eval(): this {
    return this.train(false);
  }

  /** Every buffer of this module and its children, with dotted names. */
  namedBuffers(prefix = ''): [string, Tensor][] {
    const own: [string, Tensor][] = [...this.buffers].map(([k, t]) => [`${prefix}${k}`, t]);
    for (const [name, child] of this.children) own.push(...child.namedBuffers(`${prefix}${name}.`));
    return own;
  }

  /**
   * name → parameter or buffer tensor (the tensors themselves, as PyTorch's state_dict), children's
   * names dotted.
   */
  stateDict(): Record<string, Tensor> {
    return Object.fromEntries([...this.namedParameters(), ...this.namedBuffers()]);
  }

  /**
   * Copies `state` (name → tensor, on any backend) into the parameters in place: they stay the same
   * objects, so an optimizer keeps updating them. Checked before anything is copied: a shape that
   * differs is a ShapeMismatchError, a dtype a DTypeError, and with `strict` (default) a missing or
   * unexpected name an InvalidArgumentError. Returns the names missing from `state` and those it had
   * beyond the parameters. Entries an earlier version of a layer saved are upgraded first (upgradeStateDict).
   * Save and load files with `saveSafetensors`/`loadSafetensors`.
   */
  async loadStateDict(
    state: Readonly<Record<string, Tensor>>,
    options: { strict?: boolean } = {},
  ): Promise<{ missing: string[]; unexpected: string[] }> {
    const upgraded = this.upgradeStateDict(state);
    try {
      return await this.loadUpgraded(upgraded.state, options);
    } finally {
      for (const t of upgraded.created) t.dispose();
    }
  }

  /**
   * `state` with the entries that earlier versions of this module's layers saved renamed or packed into today's
   * (each layer's `upgradeState`, as PyTorch's `_load_from_state_dict`: MultiHeadAttention's q, k and v into its
   * inProj), and the tensors made for it, which the caller frees once loaded. `state` itself when nothing changed;
   * loadStateDict and loadModel upgrade before they match names.
   */
  upgradeStateDict(state: Readonly<Record<string, Tensor>>): {
    state: Readonly<Record<string, Tensor>>;
    created: Tensor[];
  } {
    const copy = { ...state };
    const created: Tensor[] = [];
    try {
      for (const [name, m] of this.namedModules()) created.push(...m.upgradeState(copy, name ? `${name}.` : ''));
    } catch (e) {
      for (const t of created) t.dispose();
      throw e;
    }
    return { state: created.length ? copy : state, created };
  }

  /**
   * Maps, in `state`, what an earlier version of this layer saved under `prefix` (`prefix` + its old names) to its
   * names now; returns the tensors it created. Nothing here; a layer whose parameters changed overrides it.
   */
  protected upgradeState(_state: Record<string, Tensor>, _prefix: string): Tensor[] {
    return [];
  }

  private async loadUpgraded(
    state: Readonly<Record<string, Tensor>>,
    options: { strict?: boolean },
  ): Promise<{ missing: string[]; unexpected: string[] }> {
    const params = this.stateDict();
    const missing = Object.keys(params).filter((k) => !Object.hasOwn(state, k));
    const unexpected = Object.keys(state).filter((k) => !Object.hasOwn(params, k));
    if ((options.strict ?? true) && (missing.length || unexpected.length))
      throw new InvalidArgumentError(
        `loadStateDict: ` +
          [
            missing.length ? `missing ${missing.join(', ')}` : '',
            unexpected.length ? `unexpected ${unexpected.join(', ')}` : '',
          ]
            .filter(Boolean)
            .join('; '),
      );
    const pairs = Object.entries(params).filter(([k]) => Object.hasOwn(state, k));
    for (const [name, p] of pairs) {
      const s = state[name]!;
      if (s.shape.length !== p.shape.length || s.shape.some((d, i) => d !== p.shape[i]))
        throw new ShapeMismatchError(
          `loadStateDict: ${name} is [${s.shape}] in the state, [${p.shape}] in the module`,
          [s.shape, p.shape],
        );
      if (s.dtype !== p.dtype)
        throw new DTypeError(`loadStateDict: ${name} is ${s.dtype} in the state, ${p.dtype} in the module`);
    }
    for (const [name, p] of pairs) {
      const s = state[name]!;
      const be = p.backend;
      const src = s.backend === be ? s.value : be.fromArray(await s.data(), s.shape, s.dtype);
      try {
        be.assign(p.value.buffer, src);
      } finally {
        if (src !== s.value) be.free(src);
      }
    }
    return { missing, unexpected };
  }

  /** Frees every parameter (and gradient). */
  dispose(): void {
    for (const t of this.params.values()) t.dispose();
    for (const t of this.buffers.values()) t.dispose();
    for (const c of this.children.values()) c.dispose();
  }

  /** Why this module's parameters do not exist yet (a lazy layer before its first forward), or null. */
  protected uninitialized(): string | null {
    return null;
  }

  /** The registered parameter `name` (it must exist: subclasses call it with their own names). */
  protected param(name: string): Tensor {
    return this.params.get(name)!;
  }
}

/**
 * y = x·Wᵀ + b. x: [N, in] → [N, out]; W: [out, in] used through a transposed view (no copy). Init: U(±1/√in)
 * for W and b as PyTorch (`kaimingUniform({ a: √5 })`); tfjs's Dense uses `kernelInitializer: 'glorotUniform'`,
 * `biasInitializer: 'zeros'`, which the options select. `inFeatures` null makes the layer lazy (PyTorch
 * LazyLinear): W and b are created at the first forward from x's last dim, drawn as an eager layer of that
 * size with the same options and seed would draw them (lazy.ts).
 */
export class Linear extends Module {
  private pending: { opts: LayerOptions & WeightInitOptions & { bias?: boolean }; rng: Rng } | null = null;
  private _inFeatures = 0;
  constructor(
    /** Size of each input's last dim, or null to infer it at the first forward. */
    inFeatures: number | null,
    /** Size of each output's last dim. */
    readonly outFeatures: number,
    opts: LayerOptions & WeightInitOptions & { bias?: boolean },
  ) {
    super();
    for (const [name, v] of [
      ['inFeatures', inFeatures ?? 1],
      ['outFeatures', outFeatures],
    ] as const)
      if (!Number.isInteger(v) || v < 0)
        throw new InvalidArgumentError(
          `Linear: ${name} must be an integer ≥ 0${name === 'inFeatures' ? ' or null' : ''}, got ${v}`,
        );
    const rng = toRng(opts.rng);
    if (inFeatures === null) this.pending = { opts, rng };
    else this.build(inFeatures, opts, rng);
  }

  private build(inFeatures: number, opts: LayerOptions & WeightInitOptions & { bias?: boolean }, rng: Rng): void {
    this._inFeatures = inFeatures;
    const bound = 1 / Math.sqrt(inFeatures);
    this.params.set(
      'weight',
      layerParameter(opts.backend, [this.outFeatures, inFeatures], opts.kernelInitializer, bound, rng),
    );
    if (opts.bias !== false)
      this.params.set('bias', layerParameter(opts.backend, [this.outFeatures], opts.biasInitializer, bound, rng));
  }

  /** Size of each input's last dim; UninitializedParameterError for a lazy layer before its first forward. */
  get inFeatures(): number {
    if (this.pending) throw new UninitializedParameterError(`Linear: ${this.uninitialized()}`);
    return this._inFeatures;
  }

  /** Whether the layer still waits for its first forward to create W and b (built with inFeatures null). */
  get isLazy(): boolean {
    return this.pending !== null;
  }

  /** { inFeatures (null while lazy), outFeatures, bias }. */
  override getConfig(): LayerConfig {
    const bias = this.pending ? this.pending.opts.bias !== false : this.params.has('bias');
    return { inFeatures: this.pending ? null : this._inFeatures, outFeatures: this.outFeatures, bias };
  }

  protected override uninitialized(): string | null {
    return this.pending ? `Linear(null → ${this.outFeatures}) infers its input size at its first forward` : null;
  }

  /** Moves the parameters; a lazy layer will create them on `backend` at its first forward. */
  override async to(backend: ComputeBackend): Promise<this> {
    if (this.pending) this.pending.opts = { ...this.pending.opts, backend };
    return super.to(backend);
  }

  /**
   * Set by `quantize` (quantize.ts): int8 inference through the HAL's integer matmul instead of the
   * float32 product; `observer` sees every input while a model is calibrated.
   */
  quantization: { forward(layer: Linear, x: Tensor): Tensor; dispose(): void } | null = null;
  /** Called with every input while `calibrate` (quantize.ts) records activation ranges; null otherwise. */
  observer: ((x: Tensor) => void) | null = null;

  /** The weight [out, in]. */
  get weight(): Tensor {
    return this.param('weight');
  }
  /** The bias [out], or null when built with `bias: false`. */
  get bias(): Tensor | null {
    return this.params.get('bias') ?? null;
  }

  /** x [..., in] → [..., out] float32 (int8 through the quantized path once `quantize` has run). */
  forward(x: Tensor): Tensor {
    if (this.pending) {
      x.assertLive('Linear');
      const inFeatures = x.shape[x.shape.length - 1];
      if (inFeatures === undefined)
        throw new ShapeMismatchError('Linear: a lazy layer needs an input of rank ≥ 1, got a scalar', [x.shape]);
      const { opts, rng } = this.pending;
      this.build(inFeatures, opts, rng);
      this.pending = null;
    }
    this.observer?.(x);
    if (this.quantization) return this.quantization.forward(this, x);
    // x·Wᵀ + b as one matmul with a bias (one kernel on webgpu).
    return matmul(x, transpose(this.param('weight')), this.params.get('bias') ?? null);
  }
}

/**
 * A lookup table (PyTorch nn.Embedding): weight [numEmbeddings, embeddingDim] drawn from N(0, 1) as
 * PyTorch initializes it (tfjs's default is `embeddingsInitializer: 'uniform'`, U(±0.05));
 * forward(indices int32 [...]) → [..., embeddingDim] = gather(weight, indices, 0). Negative indices count from
 * the end; an index out of range gives a row of NaN (the HAL's fill rule) and no gradient.
 */
export class Embedding extends Module {
  constructor(
    /** Number of rows (the index range). */
    readonly numEmbeddings: number,
    /** Length of each row. */
    readonly embeddingDim: number,
    opts: LayerOptions & { embeddingsInitializer?: InitializerLike },
  ) {
    super();
    for (const [name, v] of [
      ['numEmbeddings', numEmbeddings],
      ['embeddingDim', embeddingDim],
    ] as const)
      if (!Number.isInteger(v) || v < 0)
        throw new InvalidArgumentError(`Embedding: ${name} must be a non-negative integer, got ${v}`);
    const shape = [numEmbeddings, embeddingDim];
    const spec = opts.embeddingsInitializer;
    const rng = toRng(opts.rng);
    this.params.set(
      'weight',
      spec === undefined ? normalParameter(opts.backend, shape, rng) : initParameter(opts.backend, shape, spec, rng),
    );
  }

  /** { numEmbeddings, embeddingDim }. */
  override getConfig(): LayerConfig {
    return { numEmbeddings: this.numEmbeddings, embeddingDim: this.embeddingDim };
  }

  /** int32 indices [...] → [..., embeddingDim]: the weight's rows; DTypeError for non-int32 indices. */
  forward(indices: Tensor): Tensor {
    return gather(this.param('weight'), indices, 0);
  }
}

class Activation extends Module {
  constructor(private readonly fn: (x: Tensor) => Tensor) {
    super();
  }
  /** The function applied to x: elementwise for the activations (same shape), a reshape for Flatten. */
  forward(x: Tensor): Tensor {
    return this.fn(x);
  }
}

/** max(x, 0) elementwise, as PyTorch's nn.ReLU. */
export class ReLU extends Activation {
  constructor() {
    super(relu);
  }
}
/** x·Φ(x) (exact, erf form; `approximate: 'tanh'` for the tanh form), as PyTorch's nn.GELU. */
export class GELU extends Activation {
  /** 'none' (the erf form) or 'tanh'. */
  readonly approximate: 'none' | 'tanh';
  constructor(options: { approximate?: 'none' | 'tanh' } = {}) {
    if (options.approximate !== undefined && options.approximate !== 'none' && options.approximate !== 'tanh')
      throw new InvalidArgumentError(`GELU: approximate must be 'none' or 'tanh', got ${String(options.approximate)}`);
    super(options.approximate === 'tanh' ? geluTanh : gelu);
    this.approximate = options.approximate ?? 'none';
  }
  /** { approximate }. */
  override getConfig(): LayerConfig {
    return { approximate: this.approximate };
  }
}
/** x·sigmoid(x) (swish), as PyTorch's nn.SiLU. */
export class SiLU extends Activation {
  constructor() {
    super(silu);
  }
}
/** 1/(1 + e^−x) elementwise, as PyTorch's nn.Sigmoid. */
export class Sigmoid extends Activation {
  constructor() {
    super(sigmoid);
  }
}
/** tanh(x) elementwise, as PyTorch's nn.Tanh. */
export class Tanh extends Activation {
  constructor() {
    super(tanh);
  }
}
/** [N, ...] → [N, prod(...)]. */
export class Flatten extends Activation {
  constructor() {
    super((x) => flatten(x, 1));
  }
}

/** Applies modules in order. */
export class Sequential extends Module {
  /** The modules, in the order they apply (children named '0', '1', ...). */
  readonly layers: Module[];
  constructor(...layers: Module[]) {
    super();
    this.layers = layers;
    layers.forEach((m, i) => this.children.set(String(i), m));
  }
  /** Each layer's forward on the previous one's output. */
  forward(x: Tensor): Tensor {
    let h = x;
    for (const m of this.layers) h = m.forward(h);
    return h;
  }
}

/** Mean squared error: mean((pred − target)²) → scalar. */
export function mseLoss(pred: Tensor, target: Tensor): Tensor {
  const d = sub(pred, target);
  return mean(mul(d, d));
}
