/**
 * Weight initializers (tfjs `tf.initializers.*`, PyTorch `nn.init.*`): each one draws a float32 array of a
 * shape on the host from a seeded RNG and the tensor's fans, so a seed gives the same weights on every
 * backend. Pass one to a layer (`kernelInitializer`, `biasInitializer`; an initializer or its name), or fill
 * an existing tensor in place with `initialize(tensor, init.heNormal())` (PyTorch's `nn.init.kaiming_normal_`).
 *
 * Fans follow PyTorch's `_calculate_fan_in_and_fan_out` (and tfjs's, for PyTorch's weight layout): for a
 * weight [out, in, ...k], fanIn = in·∏k and fanOut = out·∏k (∏k the receptive field: 1 for Linear; a conv
 * weight [O, C/groups, kh, kw] has fanIn = C/groups·kh·kw); a 1-D tensor [n] has fanIn = fanOut = n (as tfjs),
 * a scalar 1.
 */
import { InvalidArgumentError, mulberry32, type Rng, ShapeMismatchError } from '@polyhal/hal';
import { keep } from './scope.js';
import { Tensor } from './tensor.js';

/** The fans of a weight: the number of inputs and of outputs each element connects. */
export interface Fans {
  /** Inputs each element connects: in·∏k for a weight [out, in, ...k]. */
  fanIn: number;
  /** Outputs each element connects: out·∏k for a weight [out, in, ...k]. */
  fanOut: number;
}

/** An initializer: `sample` draws prod(shape) float32 values (row-major) from `rng` given the fans. */
export interface Initializer {
  /** What `summary` and messages call it (`glorotUniform`, `normal(0, 0.02)`, ...). */
  readonly name: string;
  /** The values for `shape`, drawn from `rng` (uniforms in [0, 1)); InvalidArgumentError for a shape it cannot fill. */
  sample(shape: readonly number[], fans: Fans, rng: Rng): Float32Array;
}

/** The fans of a tensor of `shape` (see the module's comment): PyTorch's rule, tfjs's for rank ≤ 1. */
export function computeFans(shape: readonly number[]): Fans {
  if (shape.length === 0) return { fanIn: 1, fanOut: 1 };
  if (shape.length === 1) return { fanIn: shape[0]!, fanOut: shape[0]! };
  const receptive = shape.slice(2).reduce((p, d) => p * d, 1);
  return { fanIn: shape[1]! * receptive, fanOut: shape[0]! * receptive };
}

/**
 * PyTorch's `nn.init.calculate_gain`: the gain that keeps activations' variance through `nonlinearity` —
 * 1 for linear, conv, sigmoid; 5/3 for tanh; √2 for relu; √(2/(1 + a²)) for leakyRelu with slope `a`
 * (default 0.01); 3/4 for selu.
 */
export function calculateGain(
  nonlinearity: 'linear' | 'conv' | 'sigmoid' | 'tanh' | 'relu' | 'leakyRelu' | 'selu',
  a = 0.01,
): number {
  switch (nonlinearity) {
    case 'linear':
    case 'conv':
    case 'sigmoid':
      return 1;
    case 'tanh':
      return 5 / 3;
    case 'relu':
      return Math.SQRT2;
    case 'leakyRelu':
      return Math.sqrt(2 / (1 + a * a));
    case 'selu':
      return 3 / 4;
    default:
      throw new InvalidArgumentError(`calculateGain: unknown nonlinearity ${JSON.stringify(nonlinearity)}`);
  }
}

const count = (shape: readonly number[]): number => shape.reduce((p, d) => p * d, 1);

function checkNumber(op: string, name: string, v: number, min = -Infinity): void {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min)
    throw new InvalidArgumentError(
      `${op}: ${name} must be a finite number${min > -Infinity ? ` ≥ ${min}` : ''}, got ${v}`,
    );
}

/** U[low, high): (2u − 1)·high for a symmetric range (the draw layers have always used), else low + (high − low)·u. */
function sampleUniform(n: number, low: number, high: number, rng: Rng): Float32Array {
  const out = new Float32Array(n);
  if (low === -high) for (let i = 0; i < n; i++) out[i] = (rng() * 2 - 1) * high;
  else for (let i = 0; i < n; i++) out[i] = low + (high - low) * rng();
  return out;
}

/** N(mean, std²) by Box–Muller on pairs of uniforms (float64, rounded once to float32). */
function sampleNormal(n: number, mean: number, std: number, rng: Rng): Float64Array {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i += 2) {
    const r = Math.sqrt(-2 * Math.log(1 - rng()));
    const t = 2 * Math.PI * rng();
    out[i] = mean + std * r * Math.cos(t);
    if (i + 1 < n) out[i + 1] = mean + std * r * Math.sin(t);
  }
  return out;
}

/** N(mean, std²) restricted to [mean − 2·std, mean + 2·std] by redrawing (tfjs's truncatedNormal). */
function sampleTruncatedNormal(n: number, mean: number, std: number, rng: Rng): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let z: number;
    do z = sampleNormal(1, 0, 1, rng)[0]!;
    while (Math.abs(z) > 2);
    out[i] = mean + std * z;
  }
  return out;
}

/** A constant: every element `value` (PyTorch `nn.init.constant_`, tfjs `constant`). */
function constant(value: number): Initializer {
  checkNumber('constant', 'value', value);
  return { name: `constant(${value})`, sample: (shape) => new Float32Array(count(shape)).fill(value) };
}

/** Zeros (tfjs's default bias initializer). */
function zerosInit(): Initializer {
  return { ...constant(0), name: 'zeros' };
}

/** Ones (the default weight of the norm layers). */
function onesInit(): Initializer {
  return { ...constant(1), name: 'ones' };
}

/** U[low, high) (defaults ±0.05, tfjs's `randomUniform`, its Embedding default; PyTorch `nn.init.uniform_`). */
function uniform(opts: { low?: number; high?: number } = {}): Initializer {
  const low = opts.low ?? -0.05;
  const high = opts.high ?? 0.05;
  checkNumber('uniform', 'low', low);
  checkNumber('uniform', 'high', high);
  if (!(low <= high)) throw new InvalidArgumentError(`uniform: need low ≤ high, got [${low}, ${high})`);
  return { name: `uniform(${low}, ${high})`, sample: (shape, _f, rng) => sampleUniform(count(shape), low, high, rng) };
}

/** N(mean, std²) (defaults 0 and 1, PyTorch's Embedding default; `normal({ std: 0.02 })` as GPT-2 uses). */
function normal(opts: { mean?: number; std?: number } = {}): Initializer {
  const mean = opts.mean ?? 0;
  const std = opts.std ?? 1;
  checkNumber('normal', 'mean', mean);
  checkNumber('normal', 'std', std, 0);
  return {
    name: `normal(${mean}, ${std})`,
    sample: (shape, _f, rng) => Float32Array.from(sampleNormal(count(shape), mean, std, rng)),
  };
}

/** N(mean, std²) truncated at two standard deviations (tfjs `truncatedNormal`, defaults 0 and 0.05). */
function truncatedNormal(opts: { mean?: number; std?: number } = {}): Initializer {
  const mean = opts.mean ?? 0;
  const std = opts.std ?? 0.05;
  checkNumber('truncatedNormal', 'mean', mean);
  checkNumber('truncatedNormal', 'std', std, 0);
  return {
    name: `truncatedNormal(${mean}, ${std})`,
    sample: (shape, _f, rng) => sampleTruncatedNormal(count(shape), mean, std, rng),
  };
}

/** Options of `varianceScaling` (tfjs/Keras `VarianceScaling`). */
export interface VarianceScalingOptions {
  /** The target variance times n (default 1). */
  scale?: number;
  /** n: fanIn (default), fanOut or their mean fanAvg. */
  mode?: 'fanIn' | 'fanOut' | 'fanAvg';
  /**
   * uniform: U(±√(3·scale/n)); normal: N(0, scale/n) (PyTorch's kaiming/xavier normal); truncatedNormal
   * (default, tfjs's 'normal'): N(0, σ²) cut at ±2σ with σ = √(scale/n), so the variance is 0.7737·scale/n
   * (tfjs does not correct it; Keras ≥ 2.3 divides σ by 0.8796).
   */
  distribution?: 'uniform' | 'normal' | 'truncatedNormal';
}

/** Variance scaling (tfjs `varianceScaling`): every fan-based initializer below is one of these. */
function varianceScaling(opts: VarianceScalingOptions = {}, name = 'varianceScaling'): Initializer {
  const scale = opts.scale ?? 1;
  const mode = opts.mode ?? 'fanIn';
  const distribution = opts.distribution ?? 'truncatedNormal';
  checkNumber(name, 'scale', scale, 0);
  if (!['fanIn', 'fanOut', 'fanAvg'].includes(mode))
    throw new InvalidArgumentError(`${name}: mode must be fanIn, fanOut or fanAvg, got ${String(mode)}`);
  if (!['uniform', 'normal', 'truncatedNormal'].includes(distribution))
    throw new InvalidArgumentError(`${name}: unknown distribution ${String(distribution)}`);
  return {
    name,
    sample(shape, fans, rng) {
      const n = mode === 'fanIn' ? fans.fanIn : mode === 'fanOut' ? fans.fanOut : (fans.fanIn + fans.fanOut) / 2;
      const variance = scale / Math.max(1, n);
      if (distribution === 'uniform') {
        const bound = Math.sqrt(3 * variance);
        return sampleUniform(count(shape), -bound, bound, rng);
      }
      if (distribution === 'normal') return Float32Array.from(sampleNormal(count(shape), 0, Math.sqrt(variance), rng));
      return sampleTruncatedNormal(count(shape), 0, Math.sqrt(variance), rng);
    },
  };
}

type FanMode = 'fanIn' | 'fanOut';

/** Glorot/Xavier uniform (tfjs's Dense and Conv default): U(±gain·√(6/(fanIn + fanOut))), gain default 1. */
function glorotUniform(opts: { gain?: number } = {}): Initializer {
  const g = opts.gain ?? 1;
  return varianceScaling({ scale: g * g, mode: 'fanAvg', distribution: 'uniform' }, 'glorotUniform');
}

/** Glorot normal as tfjs: N(0, σ²) cut at ±2σ, σ² = gain²·2/(fanIn + fanOut) (variance 0.7737·σ²). */
function glorotNormal(opts: { gain?: number } = {}): Initializer {
  const g = opts.gain ?? 1;
  return varianceScaling({ scale: g * g, mode: 'fanAvg', distribution: 'truncatedNormal' }, 'glorotNormal');
}

/** PyTorch's `xavier_uniform_`: the same distribution as glorotUniform. */
function xavierUniform(opts: { gain?: number } = {}): Initializer {
  return { ...glorotUniform(opts), name: 'xavierUniform' };
}

/** PyTorch's `xavier_normal_`: N(0, gain²·2/(fanIn + fanOut)), not truncated (tfjs's glorotNormal is). */
function xavierNormal(opts: { gain?: number } = {}): Initializer {
  const g = opts.gain ?? 1;
  return varianceScaling({ scale: g * g, mode: 'fanAvg', distribution: 'normal' }, 'xavierNormal');
}

/** He uniform as tfjs: U(±√(6/fanIn)). */
function heUniform(): Initializer {
  return varianceScaling({ scale: 2, mode: 'fanIn', distribution: 'uniform' }, 'heUniform');
}

/** He normal as tfjs: N(0, σ²) cut at ±2σ, σ² = 2/fanIn (variance 0.7737·σ²). */
function heNormal(): Initializer {
  return varianceScaling({ scale: 2, mode: 'fanIn', distribution: 'truncatedNormal' }, 'heNormal');
}

/** Options of PyTorch's kaiming initializers. */
export interface KaimingOptions {
  /** The negative slope of leakyRelu (default 0; PyTorch's Linear and Conv defaults use √5). */
  a?: number;
  /** fanIn (default: keeps the forward pass's variance) or fanOut (the backward pass's). */
  mode?: FanMode;
  /** The gain's nonlinearity (default leakyRelu, with slope a; relu gives √2). */
  nonlinearity?: 'leakyRelu' | 'relu' | 'linear' | 'tanh' | 'sigmoid' | 'selu';
}

const kaimingScale = (o: KaimingOptions): number => calculateGain(o.nonlinearity ?? 'leakyRelu', o.a ?? 0) ** 2;

/**
 * PyTorch's `kaiming_uniform_`: U(±gain·√(3/fan)). `kaimingUniform({ a: Math.sqrt(5) })` is U(±1/√fanIn),
 * PyTorch's Linear and Conv default.
 */
function kaimingUniform(opts: KaimingOptions = {}): Initializer {
  return varianceScaling({ scale: kaimingScale(opts), mode: opts.mode, distribution: 'uniform' }, 'kaimingUniform');
}

/** PyTorch's `kaiming_normal_`: N(0, gain²/fan), not truncated (tfjs's heNormal is). */
function kaimingNormal(opts: KaimingOptions = {}): Initializer {
  return varianceScaling({ scale: kaimingScale(opts), mode: opts.mode, distribution: 'normal' }, 'kaimingNormal');
}

/** LeCun uniform (tfjs): U(±√(3/fanIn)). */
function lecunUniform(): Initializer {
  return varianceScaling({ scale: 1, mode: 'fanIn', distribution: 'uniform' }, 'lecunUniform');
}

/** LeCun normal as tfjs (SELU networks): N(0, σ²) cut at ±2σ, σ² = 1/fanIn (variance 0.7737·σ²). */
function lecunNormal(): Initializer {
  return varianceScaling({ scale: 1, mode: 'fanIn', distribution: 'truncatedNormal' }, 'lecunNormal');
}

/**
 * A (semi-)orthogonal matrix times `gain` (PyTorch `orthogonal_`, tfjs `orthogonal`): the tensor seen as
 * [shape[0], prod(rest)]; from an N(0, 1) matrix, the Q of its QR decomposition (Gram–Schmidt twice, in
 * float64; R's diagonal made positive, as PyTorch does), so rows (or columns, whichever are fewer) are
 * orthonormal. InvalidArgumentError for a tensor of fewer than 2 dims.
 */
function orthogonal(opts: { gain?: number } = {}): Initializer {
  const gain = opts.gain ?? 1;
  checkNumber('orthogonal', 'gain', gain);
  return {
    name: 'orthogonal',
    sample(shape, _fans, rng) {
      if (shape.length < 2)
        throw new InvalidArgumentError(`orthogonal: needs a tensor of 2 or more dims, got [${shape.join(', ')}]`);
      const rows = shape[0]!;
      const cols = count(shape) / Math.max(1, rows);
      const [n, m] = rows < cols ? [cols, rows] : [rows, cols]; // orthonormalize the m columns of an n×m matrix
      const a = sampleNormal(n * m, 0, 1, rng); // column j at a[j*n .. j*n + n)
      for (let j = 0; j < m; j++) {
        const v = a.subarray(j * n, j * n + n);
        for (let pass = 0; pass < 2; pass++)
          for (let k = 0; k < j; k++) {
            const q = a.subarray(k * n, k * n + n);
            let dot = 0;
            for (let i = 0; i < n; i++) dot += q[i]! * v[i]!;
            for (let i = 0; i < n; i++) v[i]! -= dot * q[i]!;
          }
        let norm = 0;
        for (let i = 0; i < n; i++) norm += v[i]! * v[i]!;
        norm = Math.sqrt(norm);
        for (let i = 0; i < n; i++) v[i]! /= norm;
      }
      const out = new Float32Array(rows * cols);
      for (let r = 0; r < rows; r++)
        for (let c = 0; c < cols; c++) out[r * cols + c] = gain * (rows < cols ? a[r * n + c]! : a[c * n + r]!);
      return out;
    },
  };
}

/** The initializers by name, as a layer's `kernelInitializer: 'heNormal'` names them (each with its defaults). */
export const init = {
  zeros: zerosInit,
  ones: onesInit,
  constant,
  uniform,
  normal,
  truncatedNormal,
  varianceScaling,
  glorotUniform,
  glorotNormal,
  xavierUniform,
  xavierNormal,
  heUniform,
  heNormal,
  kaimingUniform,
  kaimingNormal,
  lecunUniform,
  lecunNormal,
  orthogonal,
} as const;

/** A name from `init` whose initializer needs no argument, or an initializer. */
export type InitializerLike = Exclude<keyof typeof init, 'constant'> | Initializer;

/**
 * A layer's initializer options (tfjs names): `kernelInitializer` for the weight (fans from the weight's
 * shape), `biasInitializer` for the bias (fans from the bias's own shape [out], as tfjs). Unset, a layer keeps
 * its default (PyTorch's; see each layer).
 */
export interface WeightInitOptions {
  /** The weight's initializer, or its name in `init` (`'glorotUniform'` is tfjs's Dense and Conv default). */
  kernelInitializer?: InitializerLike;
  /** The bias's initializer, or its name (`'zeros'` is tfjs's default). */
  biasInitializer?: InitializerLike;
}

/** The initializer `spec` names (or `spec` itself); InvalidArgumentError naming `where` for an unknown name. */
export function resolveInitializer(spec: InitializerLike, where = 'initializer'): Initializer {
  if (typeof spec === 'object' && spec !== null && typeof spec.sample === 'function') return spec;
  if (typeof spec === 'string' && Object.hasOwn(init, spec) && (spec as string) !== 'constant')
    return (init[spec] as () => Initializer)();
  throw new InvalidArgumentError(
    `${where}: unknown initializer ${JSON.stringify(spec)}; one of ${Object.keys(init).join(', ')} or an Initializer`,
  );
}

/** Values for `shape` from `spec`, checked to have prod(shape) elements (a custom initializer may not). */
export function sampleInitializer(
  spec: InitializerLike,
  shape: readonly number[],
  rng: Rng,
  fans?: Fans,
): Float32Array {
  const initializer = resolveInitializer(spec);
  const data = initializer.sample(shape, fans ?? computeFans(shape), rng);
  if (data.length !== count(shape))
    throw new ShapeMismatchError(
      `${initializer.name}: gave ${data.length} values for shape [${shape.join(', ')}] (${count(shape)} elements)`,
      [shape],
    );
  return data;
}

/** A parameter of `shape` drawn from `spec` (requiresGrad, exempt from scopes), as layers create them. */
export function initParameter(be: Tensor['backend'], shape: number[], spec: InitializerLike, rng: Rng): Tensor {
  return keep(Tensor.fromArray(be, sampleInitializer(spec, shape, rng), shape, { requiresGrad: true }));
}

/**
 * Fills `tensor` in place from `spec` (PyTorch's `nn.init.*_`: `initialize(layer.weight, 'orthogonal')`),
 * with fans from its shape unless given; `rng` a seed (default 0) or an RNG. The tensor stays the same
 * object, so an optimizer built on it keeps it. InvalidArgumentError for a non-float32 tensor or a view
 * (a tensor that does not cover its whole buffer); returns the tensor.
 */
export function initialize(
  tensor: Tensor,
  spec: InitializerLike,
  opts: { rng?: Rng | number; fans?: Fans } = {},
): Tensor {
  tensor.assertLive('initialize');
  if (tensor.dtype !== 'float32' || !tensor.isWhole)
    throw new InvalidArgumentError(
      `initialize: needs a whole float32 tensor, got tensor ${tensor.id} ` +
        `(${tensor.dtype}${tensor.isWhole ? '' : ', a view'})`,
    );
  const rng = typeof opts.rng === 'function' ? opts.rng : mulberry32(opts.rng ?? 0);
  const be = tensor.backend;
  const src = be.fromArray(sampleInitializer(spec, tensor.shape, rng, opts.fans), tensor.shape, 'float32');
  try {
    be.assign(tensor.value.buffer, src);
  } finally {
    be.free(src);
  }
  return tensor;
}
