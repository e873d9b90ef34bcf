/**
 * `model.summary()` / `summary(model)`: a table of the layers, their output shapes and parameter counts, as
 * Keras's `model.summary()` and torchinfo print them. Output shapes come from one forward without gradients,
 * in eval mode (training flags restored after), on zeros of `inputShape`; that forward also creates the
 * parameters of lazy layers. Without an input shape the shapes are '?', and so are a lazy layer's counts.
 */
import { type ComputeBackend, InvalidArgumentError } from '@polyhal/hal';
import { zeros } from './creation.js';
import { Module } from './nn.js';
import { scope } from './scope.js';
import { noGrad, Tensor } from './tensor.js';
import { UninitializedParameterError } from './uninitialized.js';

/** Options of `summary`. */
export interface SummaryOptions {
  /** The input's shape with its batch dim (`[1, 1, 28, 28]`); without it output shapes are '?'. */
  inputShape?: readonly number[];
  /** The input's dtype (default float32; int32 for an Embedding first). */
  inputDType?: 'float32' | 'int32';
  /** Where the input is created (default: the backend of the model's first parameter). */
  backend?: ComputeBackend;
  /** Where `model.summary()` prints the table (default console.log). */
  print?: (line: string) => void;
}

declare module './nn.js' {
  interface Module {
    /** Prints `summary(this, options)` (one call of `options.print`, default console.log) and returns it. */
    summary(options?: SummaryOptions): string;
  }
}

const describeOutput = (y: unknown): string => {
  if (y instanceof Tensor) return `[${y.shape.join(', ')}]`;
  if (Array.isArray(y)) return y.map(describeOutput).join(', ');
  return '?';
};

/** The parameters and buffers of `m` and its descendants, or null before a lazy layer's first forward. */
function counts(m: Module): { trainable: number; frozen: number } | null {
  try {
    const size = (t: Tensor): number => t.size;
    const params = m.namedParameters();
    const trainable = params.filter(([, t]) => t.requiresGrad).reduce((s, [, t]) => s + size(t), 0);
    const frozen =
      params.filter(([, t]) => !t.requiresGrad).reduce((s, [, t]) => s + size(t), 0) +
      m.namedBuffers().reduce((s, [, t]) => s + size(t), 0);
    return { trainable, frozen };
  } catch (e) {
    if (e instanceof UninitializedParameterError) return null;
    throw e;
  }
}

/** The backend of the first parameter or buffer of any module of `model` that has them (lazy layers skipped). */
function firstBackend(model: Module): ComputeBackend | undefined {
  for (const [, m] of model.namedModules()) {
    const c = counts(m);
    if (c === null) continue;
    const t = m.parameters()[0] ?? m.namedBuffers()[0]?.[1];
    if (t) return t.backend;
  }
  return undefined;
}

/** Records each module's output in one forward on zeros of `inputShape`. */
function traceShapes(model: Module, options: SummaryOptions): Map<Module, string> {
  const inputShape = options.inputShape!;
  const backend = options.backend ?? firstBackend(model);
  if (!backend)
    throw new InvalidArgumentError('summary: the model has no parameters yet to take a backend from; pass backend');
  const modules = model.namedModules().map(([, m]) => m);
  const shapes = new Map<Module, string>();
  const training = modules.map((m) => m.training);
  const own = modules.map((m) => Object.hasOwn(m, 'forward'));
  for (const m of modules) {
    const forward = m.forward;
    m.forward = (x: Tensor): Tensor => {
      const y = forward.call(m, x);
      shapes.set(m, describeOutput(y));
      return y;
    };
  }
  try {
    model.eval();
    scope(() => {
      noGrad(() => model.forward(zeros(backend, inputShape, { dtype: options.inputDType ?? 'float32' })));
    });
  } finally {
    modules.forEach((m, i) => {
      if (!own[i]) delete (m as Partial<Module>).forward;
      m.training = training[i]!;
    });
  }
  return shapes;
}

const thousands = (n: number): string => n.toLocaleString('en-US');

/**
 * The summary table of `model` (a string of lines): one row per module below the model (the model itself when
 * it has no children) with its dotted name and class, output shape and parameter count (its own and its
 * descendants'), then the totals: trainable parameters (requiresGrad), non-trainable ones (parameters
 * without requiresGrad, and buffers such as BatchNorm's running statistics). InvalidArgumentError when an
 * input shape is given but no backend can be found (a model of lazy layers only: pass `backend`); the
 * forward's own errors otherwise.
 */
export function summary(model: Module, options: SummaryOptions = {}): string {
  const shapes = options.inputShape ? traceShapes(model, options) : new Map<Module, string>();
  const all = model.namedModules();
  const rows = (all.length > 1 ? all.slice(1) : all).map(([name, m]) => {
    const depth = name ? name.split('.').length - 1 : 0;
    const c = counts(m);
    return [
      `${'  '.repeat(depth)}${name || 'model'} (${m.constructor.name})`,
      shapes.get(m) ?? '?',
      c ? thousands(c.trainable + c.frozen) : '?',
    ];
  });
  const header = ['Layer (type)', 'Output Shape', 'Param #'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)) + 2);
  const line = (r: string[]): string =>
    r
      .map((v, i) => (i < 2 ? v.padEnd(widths[i]!) : v))
      .join('')
      .trimEnd();
  const rule = (ch: string): string => ch.repeat(widths.reduce((s, w) => s + w, 0));
  const total = counts(model);
  const totals = total
    ? [
        `Total params: ${thousands(total.trainable + total.frozen)}`,
        `Trainable params: ${thousands(total.trainable)}`,
        `Non-trainable params: ${thousands(total.frozen)}`,
      ]
    : ['Total params: ? (lazy layers are created at the first forward: pass inputShape)'];
  return [
    `Model: ${model.constructor.name}`,
    rule('='),
    line(header),
    rule('='),
    ...rows.map(line),
    rule('='),
    ...totals,
  ].join('\n');
}

Module.prototype.summary = function summaryMethod(this: Module, options: SummaryOptions = {}): string {
  const text = summary(this, options);
  (options.print ?? console.log)(text);
  return text;
};
