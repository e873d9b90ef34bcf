/**
 * `exportOnnx`: a Module, a function of tensors or a `compile`d function, traced once on example inputs, written
 * as an ONNX model (opset 17, IR version 8) — the path from training here to serving with onnxruntime or any
 * ONNX tool. The trace records every backend call the forward makes (trace.ts); each becomes standard ONNX
 * nodes (map-elementwise.ts, map-ops.ts); views that are no call (reshape, permute, shrink, expand) become
 * Reshape, Transpose, Slice and Expand nodes, or a Gather as a last resort (views.ts); the parameters (and any
 * other array the forward reads and no traced call made) become initializers, named after the module's named
 * parameters.
 */
import {
  BINARY_OPS,
  type DeviceBuffer,
  InvalidArgumentError,
  isWholeBuffer,
  type NDArray,
  UNARY_OPS,
} from '@polyhal/hal';
import { type CompiledFunction, generatorState, Module, noGrad, scope, Tensor } from '@polyhal/autograd';
import { ExportContext, isArray } from './context.js';
import { encodeModel } from './encode.js';
import { OnnxExportRandomError, OnnxExportUnmappedError } from './errors.js';
import { elemType, GraphBuilder, type TensorObject } from './graph.js';
import { mapBinary, mapFused, mapUnary } from './map-elementwise.js';
import { OP_MAPPINGS } from './map-ops.js';
import { traceBackend } from './trace.js';
import { type BufferValue, ValueTable } from './views.js';

export { OnnxExportRandomError, OnnxExportUnmappedError } from './errors.js';

/** The opset of exported models. */
export const EXPORT_OPSET = 17;

/** Options of `exportOnnx`. */
export interface ExportOptions {
  /** Names of the graph inputs, one per example input (default `input_0`, `input_1`, ...). */
  readonly inputNames?: readonly string[];
  /** Names of the graph outputs, one per returned tensor (default `output_0`, ...). */
  readonly outputNames?: readonly string[];
  /**
   * Symbolic dims of the graph inputs and outputs' declared shapes, by value name and axis:
   * `{ input_0: { 0: 'batch' } }`. Declared only: the nodes keep the traced shapes (Reshape targets are
   * constants), so the model runs at the traced sizes.
   */
  readonly dynamicAxes?: Readonly<Record<string, Readonly<Record<number, string>>>>;
  /** The module whose named parameters and buffers name the initializers (default: the exported module). */
  readonly module?: Module;
  /** The graph's name (default `polyhal`). */
  readonly graphName?: string;
  /** The model's doc_string. */
  readonly docString?: string;
}

/** What `exportOnnx` exports: a module (its forward), a function of tensors, or a compiled function. */
export type Exportable = Module | ((...inputs: Tensor[]) => Tensor | Tensor[]) | CompiledFunction<Tensor[], Tensor>;

/** Methods that compute nothing a graph holds (reads, stats, synchronization). */
const IGNORED = new Set([
  'read',
  'readSync',
  'copyFromDevice',
  'readHandle',
  'synchronize',
  'memoryAvailable',
  'liveBufferCount',
  'memoryStats',
  'supportsDType',
]);
/** Methods that return a view of their input (no copy) — unless the strides force reshape to copy. */
const VIEWS = new Set(['reshape', 'permute', 'expand', 'shrink', 'stride']);
const UNARY = new Set<string>(UNARY_OPS);
const BINARY = new Set<string>(BINARY_OPS);

/** One recorded call → nodes, or why not. */
function mapCall(c: ExportContext, m: string, args: readonly unknown[], result: unknown): string | undefined {
  if (m === 'free') return void c.values.forget((args[0] as NDArray).buffer);
  if (m === 'deallocate') return void c.values.forget(args[0] as DeviceBuffer);
  if (IGNORED.has(m)) return undefined;
  if (VIEWS.has(m) && isArray(result) && isArray(args[0]) && result.buffer === args[0].buffer) return undefined;
  if (!isArray(result) && !(m === 'layerNorm' && result)) return `${m} (no ONNX mapping)`;
  if (m === 'unary') return mapUnary(c, args[0] as string, args[1] as NDArray, result as NDArray);
  if (m === 'binary') return mapBinary(c, args[0] as string, args[1] as NDArray, args[2] as NDArray, result as NDArray);
  if (UNARY.has(m)) return mapUnary(c, m, args[0] as NDArray, result as NDArray);
  if (BINARY.has(m)) return mapBinary(c, m, args[0] as NDArray, args[1] as NDArray, result as NDArray);
  if (m === 'fusedElementwise') return mapFused(c, args, result);
  const f = OP_MAPPINGS[m];
  return f ? f(c, args, result) : `${m} (no ONNX mapping)`;
}

/** The function a target runs on its inputs. */
function forwardOf(target: Exportable): (...inputs: Tensor[]) => unknown {
  if (target instanceof Module) return (...xs: Tensor[]) => (target.forward as (...a: Tensor[]) => unknown)(...xs);
  if (typeof target !== 'function')
    throw new InvalidArgumentError('exportOnnx: target must be a Module, a function of tensors or a compiled one');
  const compiled = (target as Partial<CompiledFunction<Tensor[], Tensor>>).fn;
  return typeof compiled === 'function' ? compiled : target;
}

/**
 * Traces `target` (a Module's forward, a function of tensors returning a tensor or an array of them, or a
 * `compile`d function's own function) once on `exampleInputs` and returns the ONNX model (ModelProto bytes,
 * opset 17, IR version 8) computing it: graph inputs of the examples' shapes and dtypes, the parameters as
 * initializers, one output per returned tensor. The model is valid at the traced shapes. Write it with Node's
 * `writeFileSync('model.onnx', bytes)`, or run it with `InferenceSession.create(backend, bytes)`.
 *
 * Throws, before anything is written: InvalidArgumentError for a bad target, inputs that are not live tensors of
 * one backend, each a whole contiguous buffer (call `.contiguous()`), or names of the wrong count;
 * OnnxExportRandomError when the traced function draws random numbers (call `model.eval()`);
 * OnnxExportUnmappedError listing every call with no ONNX form; UnsupportedOpError for a float16 value.
 */
export async function exportOnnx(
  target: Exportable,
  exampleInputs: Tensor | readonly Tensor[],
  options: ExportOptions = {},
): Promise<Uint8Array> {
  const run = forwardOf(target);
  const inputs = exampleInputs instanceof Tensor ? [exampleInputs] : [...exampleInputs];
  if (!inputs.length || inputs.some((t) => !(t instanceof Tensor) || t.isDisposed))
    throw new InvalidArgumentError('exportOnnx: exampleInputs must be one or more live tensors');
  const be = inputs[0]!.backend;
  if (inputs.some((t) => t.backend !== be))
    throw new InvalidArgumentError('exportOnnx: the example inputs must be tensors of one backend');
  if (inputs.some((t) => !isWholeBuffer(t.value)) || new Set(inputs.map((t) => t.value.buffer)).size < inputs.length)
    throw new InvalidArgumentError('exportOnnx: each example input must be its own whole buffer (use .contiguous())');
  const inputNames = options.inputNames ?? inputs.map((_, i) => `input_${i}`);
  if (inputNames.length !== inputs.length)
    throw new InvalidArgumentError(`exportOnnx: ${inputs.length} inputs but ${inputNames.length} inputNames`);
  const module = options.module ?? (target instanceof Module ? target : undefined);

  const g = new GraphBuilder();
  const symbolic = (name: string, shape: readonly number[]): (number | string)[] =>
    shape.map((d, i) => options.dynamicAxes?.[name]?.[i] ?? d);
  inputs.forEach((t, i) => {
    const name = inputNames[i]!;
    if (!g.reserve(name)) throw new InvalidArgumentError(`exportOnnx: input name '${name}' is given twice`);
    g.inputs.push({ name, elemType: elemType(t.dtype), dims: symbolic(name, t.shape) });
  });
  const named = new Map<DeviceBuffer, BufferValue>();
  if (module)
    for (const [name, t] of [...module.namedParameters(), ...module.namedBuffers()])
      if (isWholeBuffer(t.value) && !named.has(t.value.buffer)) named.set(t.value.buffer, { name, shape: t.shape });

  let originals: Readonly<Record<string, (...a: unknown[]) => unknown>> = {};
  const pending: { tensor: TensorObject; buffer: DeviceBuffer }[] = [];
  // a buffer no input or traced call made: a weight or a constant, read into an initializer
  const unknown = (buffer: DeviceBuffer): BufferValue => {
    const known = named.get(buffer);
    const name = g.fresh(known?.name ?? 'constant');
    const shape = known?.shape ?? [buffer.size];
    const tensor: TensorObject = {
      name,
      dims: [...shape],
      data_type: elemType(buffer.dtype),
      raw_data: new Uint8Array(),
    };
    g.initializers.push(tensor);
    pending.push({ tensor, buffer });
    if (originals.readSync) {
      const data = originals.readSync(buffer) as ArrayLike<number>;
      tensor.raw_data = g.bytes(tensor.data_type, data);
      pending.pop();
    }
    return { name, shape };
  };
  const values = new ValueTable(g, unknown);
  inputs.forEach((t, i) => values.define(t.value.buffer, inputNames[i]!, t.shape));
  const c = new ExportContext(g, values);
  const unmapped: string[] = [];
  const onCall = (m: string, args: readonly unknown[], result: unknown): void => {
    let why: string | undefined;
    try {
      why = mapCall(c, m, args, result);
    } catch (e) {
      why = `${m}: ${(e as Error).message}`;
    }
    if (why && !unmapped.includes(why)) unmapped.push(why);
  };

  const marker = new Tensor(be, be.full([], 0));
  const firstId = marker.id;
  marker.dispose();
  const before = generatorState();
  let outs: Tensor[] = [];
  try {
    const traced = traceBackend(be, onCall, (o) => {
      originals = o;
      return noGrad(() => scope(() => run(...inputs)));
    });
    const r = traced.result;
    const list = r instanceof Tensor ? [r] : Array.isArray(r) && r.every((t) => t instanceof Tensor) ? r : null;
    if (!list)
      throw new InvalidArgumentError('exportOnnx: the traced function must return a tensor or an array of them');
    outs = list as Tensor[];
    const after = generatorState();
    const random = [...traced.random];
    if (after.seed !== before.seed || after.offset !== before.offset) random.push("autograd's generator");
    if (random.length) throw new OnnxExportRandomError(random);
    if (unmapped.length) throw new OnnxExportUnmappedError(unmapped);
    const outputNames = options.outputNames ?? outs.map((_, i) => `output_${i}`);
    if (outputNames.length !== outs.length)
      throw new InvalidArgumentError(`exportOnnx: ${outs.length} outputs but ${outputNames.length} outputNames`);
    outs.forEach((t, i) => {
      const name = outputNames[i]!;
      if (!g.reserve(name)) throw new InvalidArgumentError(`exportOnnx: output name '${name}' is taken`);
      g.nodes.push({
        name: g.fresh('Identity'),
        op_type: 'Identity',
        input: [values.express(t.value)],
        output: [name],
        attribute: [],
      });
      g.outputs.push({ name, elemType: elemType(t.dtype), dims: symbolic(name, t.shape) });
    });
  } finally {
    for (const t of new Set(outs)) if (t.id >= firstId && !inputs.includes(t)) t.dispose();
  }
  for (const p of pending)
    p.tensor.raw_data = g.bytes(p.tensor.data_type, (await be.read(p.buffer)) as ArrayLike<number>);
  return encodeModel(g, {
    opset: EXPORT_OPSET,
    graphName: options.graphName ?? 'polyhal',
    producerVersion: '0.1.0',
    ...(options.docString ? { docString: options.docString } : {}),
  });
}
