/**
 * The layer registry (tfjs's `serialization.registerClass`): a class name ↔ a Module class and the function that
 * rebuilds it from its config. `saveModel` describes a model as a tree of `{ className, config, children }`
 * (LayerSpec) and `loadModel` rebuilds it here, so a saved model loads without the code that built it. Every
 * built-in layer is registered; `registerLayer` adds a user-defined one.
 */
import { type ComputeBackend, describeValue, InvalidArgumentError, PolyHalError } from '@polyhal/hal';
import { MultiHeadAttention } from './attention.js';
import { Dropout } from './dropout.js';
import { LazyConv1d, LazyConv2d, LazyLinear } from './lazy.js';
import {
  Embedding,
  Flatten,
  GELU,
  Linear,
  type LayerConfig,
  Module,
  ReLU,
  Sequential,
  Sigmoid,
  SiLU,
  Tanh,
} from './nn.js';
import { AvgPool1d, AvgPool2d, Conv1d, Conv2d, ConvNd, ConvTranspose2d, MaxPool1d, MaxPool2d } from './nn-conv.js';
import { BatchNorm, GroupNorm, LayerNorm, RMSNorm } from './norm.js';
import { GRU, LSTM, RNN } from './recurrent.js';

/**
 * A model holds a layer whose class is not registered (`registerLayer`): thrown by `saveModel` before anything
 * is written (naming the class and where it sits in the model), and by `loadModel` for a file naming a class
 * the loading program has not registered.
 */
export class UnregisteredLayerError extends PolyHalError {}

/** What a `fromConfig` gets beside the config: the backend to build on and the children, already rebuilt. */
export interface LayerContext {
  /** The backend `loadModel` was given: create the layer's parameters there. */
  backend: ComputeBackend;
  /**
   * The saved children rebuilt, by name in their saved order (a container adopts them: Sequential takes them as
   * its layers). A layer that creates its own children in its constructor ignores them; they are freed.
   */
  children: ReadonlyMap<string, Module>;
}

/** Rebuilds a layer from `config` (its `getConfig()` as saved) on `context.backend`. */
export type LayerFactory = (config: LayerConfig, context: LayerContext) => Module;

/** One node of a saved architecture: the registered class name, its config and its children's specs. */
export interface LayerSpec {
  /** The name the class was registered under. */
  className: string;
  /** The layer's `getConfig()`. */
  config: LayerConfig;
  /** [name, spec] for each direct child, in registration order (absent for none). */
  children?: [string, LayerSpec][];
}

// biome-ignore lint/suspicious/noExplicitAny: a class of any constructor signature
type ModuleClass = abstract new (...args: any[]) => Module;

const factories = new Map<string, LayerFactory>();
const names = new Map<unknown, string>();

/**
 * Registers `cls` under `name` with the function that rebuilds it: its instances can then be saved by
 * `saveModel` (their `getConfig()` is written) and loaded by `loadModel`. Registering a name again replaces it.
 * Subclasses are not covered: each class is registered itself. InvalidArgumentError for an empty name, a `cls`
 * that is not a Module class or a `fromConfig` that is not a function.
 */
export function registerLayer(name: string, cls: ModuleClass, fromConfig: LayerFactory): void {
  if (typeof name !== 'string' || name === '')
    throw new InvalidArgumentError(`registerLayer: name must be a non-empty string, got ${describeValue(name)}`);
  if (typeof cls !== 'function' || !(cls.prototype instanceof Module))
    throw new InvalidArgumentError(`registerLayer: ${name}: cls must be a Module subclass, got ${describeValue(cls)}`);
  if (typeof fromConfig !== 'function')
    throw new InvalidArgumentError(`registerLayer: ${name}: fromConfig must be a function`);
  for (const [c, n] of [...names]) if (n === name) names.delete(c);
  factories.set(name, fromConfig);
  names.set(cls, name);
}

/** The name `layer`'s class is registered under, or null. */
export function registeredName(layer: Module): string | null {
  return names.get(layer.constructor) ?? null;
}

/**
 * The architecture of `model` as a LayerSpec tree (each layer's registered name, `getConfig()` and children).
 * UnregisteredLayerError naming the class and its dotted path for a layer whose class is not registered;
 * InvalidArgumentError for a config that is not JSON or a quantized layer (save before `quantize`).
 */
export function layerSpec(model: Module, path = ''): LayerSpec {
  const where = path === '' ? 'the model' : `layer ${JSON.stringify(path)}`;
  const className = registeredName(model);
  if (className === null)
    throw new UnregisteredLayerError(
      `saveModel: ${where} is a ${model.constructor.name}, which is not registered: call ` +
        `registerLayer('${model.constructor.name}', ${model.constructor.name}, fromConfig) before saving`,
    );
  if ((model as { quantization?: unknown }).quantization)
    throw new InvalidArgumentError(`saveModel: ${where} is quantized; save the float model before quantize()`);
  const config = model.getConfig();
  try {
    JSON.stringify(config);
  } catch (e) {
    throw new InvalidArgumentError(`saveModel: ${where}'s getConfig() is not JSON (${(e as Error).message})`);
  }
  const children = model
    .namedChildren()
    .map(([n, c]): [string, LayerSpec] => [n, layerSpec(c, path ? `${path}.${n}` : n)]);
  return { className, config, ...(children.length ? { children } : {}) };
}

/**
 * Rebuilds a LayerSpec tree on `backend` (children first, then the layer from its config); children a layer did
 * not adopt are freed. UnregisteredLayerError for a class name not registered here, InvalidArgumentError for a
 * spec that is not one and for a fromConfig that does not return a Module; a fromConfig's own errors pass through.
 */
export function buildLayer(spec: LayerSpec, backend: ComputeBackend, path = ''): Module {
  const where = path === '' ? 'the model' : `layer ${JSON.stringify(path)}`;
  if (spec === null || typeof spec !== 'object' || typeof spec.className !== 'string')
    throw new InvalidArgumentError(`loadModel: ${where} is not a {className, config} spec: ${describeValue(spec)}`);
  const factory = factories.get(spec.className);
  if (!factory)
    throw new UnregisteredLayerError(
      `loadModel: ${where} is a ${spec.className}, which is not registered here: call ` +
        `registerLayer('${spec.className}', ...) before loading`,
    );
  const children = new Map<string, Module>();
  let layer: Module;
  try {
    for (const [name, child] of spec.children ?? []) {
      if (typeof name !== 'string') throw new InvalidArgumentError(`loadModel: ${where} has a child without a name`);
      children.set(name, buildLayer(child, backend, path ? `${path}.${name}` : name));
    }
    const config = spec.config !== null && typeof spec.config === 'object' ? spec.config : {};
    const built: unknown = factory(config, { backend, children });
    if (!(built instanceof Module))
      throw new InvalidArgumentError(
        `loadModel: fromConfig of ${spec.className} returned ${describeValue(built)}, not a Module`,
      );
    layer = built;
  } catch (e) {
    for (const c of children.values()) c.dispose();
    throw e;
  }
  const adopted = new Set(layer.namedModules().map(([, m]) => m));
  for (const c of children.values()) if (!adopted.has(c)) c.dispose();
  return layer;
}

// The built-in layers. Lazy layers are saved materialized, as the eager class (PyTorch turns a LazyLinear into
// a Linear at its first forward); a lazy layer before its first forward has no weights to save.
type C = LayerConfig;
const num = (c: C, k: string): number => c[k] as number;
const opts = (c: C, ctx: LayerContext, ...drop: string[]): Record<string, unknown> & { backend: ComputeBackend } => {
  const o: Record<string, unknown> = { ...c };
  for (const k of drop) delete o[k];
  return { ...o, backend: ctx.backend };
};
const linear: LayerFactory = (c, ctx) =>
  new Linear(num(c, 'inFeatures'), num(c, 'outFeatures'), { backend: ctx.backend, bias: c['bias'] !== false });
const conv =
  (Cls: typeof Conv1d | typeof Conv2d | typeof ConvTranspose2d): LayerFactory =>
  (c, ctx) =>
    new Cls(
      num(c, 'inChannels'),
      num(c, 'outChannels'),
      c['kernelSize'] as number[],
      opts(c, ctx, 'rank', 'inChannels', 'outChannels', 'kernelSize'),
    );
const pool =
  (Cls: typeof MaxPool1d | typeof MaxPool2d | typeof AvgPool1d | typeof AvgPool2d): LayerFactory =>
  (c) => {
    const { kernelSize, ...rest } = c;
    return new Cls(kernelSize as number[], rest);
  };
const BUILT_IN: [string, ModuleClass[], LayerFactory][] = [
  ['Linear', [Linear, LazyLinear], linear],
  ['Embedding', [Embedding], (c, ctx) => new Embedding(num(c, 'numEmbeddings'), num(c, 'embeddingDim'), ctx)],
  ['ReLU', [ReLU], () => new ReLU()],
  ['GELU', [GELU], (c) => new GELU({ approximate: c['approximate'] === 'tanh' ? 'tanh' : 'none' })],
  ['SiLU', [SiLU], () => new SiLU()],
  ['Sigmoid', [Sigmoid], () => new Sigmoid()],
  ['Tanh', [Tanh], () => new Tanh()],
  ['Flatten', [Flatten], () => new Flatten()],
  ['Sequential', [Sequential], (_c, ctx) => new Sequential(...ctx.children.values())],
  [
    'ConvNd',
    [ConvNd],
    (c, ctx) =>
      new ConvNd(
        num(c, 'rank'),
        num(c, 'inChannels'),
        num(c, 'outChannels'),
        c['kernelSize'] as number[],
        opts(c, ctx, 'rank', 'inChannels', 'outChannels', 'kernelSize'),
      ),
  ],
  ['Conv1d', [Conv1d, LazyConv1d], conv(Conv1d)],
  ['Conv2d', [Conv2d, LazyConv2d], conv(Conv2d)],
  ['ConvTranspose2d', [ConvTranspose2d], conv(ConvTranspose2d)],
  ['MaxPool1d', [MaxPool1d], pool(MaxPool1d)],
  ['MaxPool2d', [MaxPool2d], pool(MaxPool2d)],
  ['AvgPool1d', [AvgPool1d], pool(AvgPool1d)],
  ['AvgPool2d', [AvgPool2d], pool(AvgPool2d)],
  [
    'LayerNorm',
    [LayerNorm],
    (c, ctx) => new LayerNorm(c['normalizedShape'] as number[], opts(c, ctx, 'normalizedShape')),
  ],
  ['RMSNorm', [RMSNorm], (c, ctx) => new RMSNorm(c['normalizedShape'] as number[], opts(c, ctx, 'normalizedShape'))],
  ['BatchNorm', [BatchNorm], (c, ctx) => new BatchNorm(num(c, 'numFeatures'), opts(c, ctx, 'numFeatures'))],
  [
    'GroupNorm',
    [GroupNorm],
    (c, ctx) => new GroupNorm(num(c, 'numGroups'), num(c, 'numChannels'), opts(c, ctx, 'numGroups', 'numChannels')),
  ],
  ['RNN', [RNN], (c, ctx) => new RNN(num(c, 'inputSize'), num(c, 'hiddenSize'), opts(c, ctx))],
  ['GRU', [GRU], (c, ctx) => new GRU(num(c, 'inputSize'), num(c, 'hiddenSize'), opts(c, ctx))],
  ['LSTM', [LSTM], (c, ctx) => new LSTM(num(c, 'inputSize'), num(c, 'hiddenSize'), opts(c, ctx))],
  [
    'MultiHeadAttention',
    [MultiHeadAttention],
    (c, ctx) => new MultiHeadAttention(num(c, 'embedDim'), num(c, 'numHeads'), opts(c, ctx)),
  ],
  ['Dropout', [Dropout], (c) => new Dropout(num(c, 'p'), num(c, 'seed'))],
];
for (const [name, classes, fromConfig] of BUILT_IN) {
  factories.set(name, fromConfig);
  for (const cls of classes) names.set(cls, name);
}
