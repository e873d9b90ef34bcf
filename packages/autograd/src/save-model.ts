/**
 * Whole models in one file (PyTorch's `torch.save(model)`, tfjs's `model.save`): a safetensors file whose
 * tensors are the model's stateDict (parameters and buffers) and whose `__metadata__` holds the architecture,
 * `"polyhal.model"`: JSON `{ "formatVersion": 1, "training": bool, "model": LayerSpec }` (layer-registry.ts).
 * Any safetensors reader opens the weights; `loadModel` rebuilds the layers from their registered classes,
 * without the code that built the model.
 */
import {
  type ComputeBackend,
  describeValue,
  DTypeError,
  InvalidArgumentError,
  PolyHalError,
  ShapeMismatchError,
} from '@polyhal/hal';
import { buildLayer, layerSpec, type LayerSpec } from './layer-registry.js';
import { readModelBytes, writeModelBytes } from './model-storage.js';
import { Module } from './nn.js';
import { loadSafetensors, saveSafetensors } from './safetensors.js';
import type { Tensor } from './tensor.js';
import type { BlobLike } from './dom-types.js';

/** The architecture format this version writes and reads. */
export const MODEL_FORMAT_VERSION = 1;
/** The `__metadata__` key holding the architecture JSON. */
export const MODEL_METADATA_KEY = 'polyhal.model';

/**
 * A model file that cannot be loaded: truncated or corrupt bytes, a safetensors file without an architecture
 * (weights only), a format version newer than this reader, or weights that do not match the architecture
 * (the message names the missing, unexpected or mis-shaped tensors). An InvalidArgumentError.
 */
export class ModelFormatError extends InvalidArgumentError {}

/** The architecture and mode read from a model file's metadata (`readModelSpec`). */
export interface ModelFileSpec {
  /** The format version the file was written in. */
  formatVersion: number;
  /** Whether the model was in training mode when saved (loadModel restores it). */
  training: boolean;
  /** The layer tree. */
  model: LayerSpec;
}

/**
 * Saves `model`'s architecture and weights as one safetensors file and returns its bytes; with `target`, also
 * writes them there: a path or `file://` URL in Node, or in a browser `localstorage://name`,
 * `indexeddb://name` or `downloads://name` (model-storage.ts). `metadata` string pairs are added to
 * `__metadata__`. Checked before anything is written: UnregisteredLayerError naming a layer whose class is not
 * registered (`registerLayer`), UninitializedParameterError for a lazy layer before its first forward,
 * InvalidArgumentError for a quantized layer; StorageQuotaError when browser storage refuses the size.
 */
export async function saveModel(
  model: Module,
  target?: string,
  metadata: Readonly<Record<string, string>> = {},
): Promise<Uint8Array> {
  if (!(model instanceof Module))
    throw new InvalidArgumentError(`saveModel: model must be a Module, got ${describeValue(model)}`);
  if (target !== undefined && typeof target !== 'string')
    throw new InvalidArgumentError(`saveModel: target must be a path or URL string, got ${describeValue(target)}`);
  const spec: ModelFileSpec = {
    formatVersion: MODEL_FORMAT_VERSION,
    training: model.training,
    model: layerSpec(model),
  };
  const bytes = await saveSafetensors(model.stateDict(), { ...metadata, [MODEL_METADATA_KEY]: JSON.stringify(spec) });
  if (target !== undefined) await writeModelBytes(target, bytes);
  return bytes;
}

/** The architecture in `metadata`, checked (ModelFormatError otherwise). */
function specOf(metadata: Record<string, string>): ModelFileSpec {
  const text = metadata[MODEL_METADATA_KEY];
  if (text === undefined)
    throw new ModelFormatError(
      `loadModel: the file has no "${MODEL_METADATA_KEY}" architecture (weights only?): build the model in code ` +
        'and load the weights with loadSafetensors and model.loadStateDict',
    );
  let spec: unknown;
  try {
    spec = JSON.parse(text);
  } catch (e) {
    throw new ModelFormatError(`loadModel: the architecture is not JSON (${(e as Error).message})`);
  }
  const s = spec as Partial<ModelFileSpec> | null;
  if (s === null || typeof s !== 'object' || typeof s.formatVersion !== 'number')
    throw new ModelFormatError('loadModel: the architecture has no formatVersion');
  if (s.formatVersion !== MODEL_FORMAT_VERSION)
    throw new ModelFormatError(
      `loadModel: format version ${s.formatVersion} is not read by this version (it reads ${MODEL_FORMAT_VERSION})` +
        (s.formatVersion > MODEL_FORMAT_VERSION ? '; update @polyhal/autograd' : ''),
    );
  if (s.model === null || typeof s.model !== 'object') throw new ModelFormatError('loadModel: no model in the file');
  return { formatVersion: s.formatVersion, training: s.training !== false, model: s.model };
}

/** Parses safetensors bytes, turning the parser's errors into ModelFormatError (a truncated or corrupt file). */
function parse(bytes: Uint8Array, backend: ComputeBackend): ReturnType<typeof loadSafetensors> {
  try {
    return loadSafetensors(bytes, backend);
  } catch (e) {
    if (e instanceof InvalidArgumentError || e instanceof ShapeMismatchError || e instanceof DTypeError)
      throw new ModelFormatError(
        `loadModel: not a model file, or a truncated or corrupt one (${bytes.length} bytes): ${e.message}`,
      );
    throw e;
  }
}

/**
 * Reads the architecture of a model file (any `loadModel` source) without building it: for inspection, or to
 * check that every class it names is registered. ModelFormatError as loadModel.
 */
export async function readModelSpec(source: string | Uint8Array | ArrayBuffer | BlobLike): Promise<ModelFileSpec> {
  const bytes = await readModelBytes(source);
  if (bytes.length < 8) throw new ModelFormatError(`loadModel: ${bytes.length} bytes is no model file`);
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true));
  if (n > bytes.length - 8)
    throw new ModelFormatError(`loadModel: header length ${n} does not fit ${bytes.length} bytes (truncated?)`);
  let header: { __metadata__?: Record<string, string> };
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + n)));
  } catch (e) {
    throw new ModelFormatError(`loadModel: the header is not UTF-8 JSON (${(e as Error).message})`);
  }
  return specOf(header?.__metadata__ ?? {});
}

/** Names missing from or unexpected in the file, and shapes that differ: one ModelFormatError naming them. */
function checkWeights(model: Module, tensors: Record<string, Tensor>): void {
  const want = model.stateDict();
  const missing = Object.keys(want).filter((k) => !Object.hasOwn(tensors, k));
  const unexpected = Object.keys(tensors).filter((k) => !Object.hasOwn(want, k));
  const shapes = Object.keys(want)
    .filter((k) => Object.hasOwn(tensors, k))
    .filter((k) => want[k]!.shape.join() !== tensors[k]!.shape.join() || want[k]!.dtype !== tensors[k]!.dtype)
    .map((k) => {
      const [f, m] = [tensors[k]!, want[k]!];
      return `${k} is ${f.dtype} [${f.shape}] in the file, ${m.dtype} [${m.shape}] in the model`;
    });
  const parts = [
    missing.length ? `missing weights ${missing.join(', ')}` : '',
    unexpected.length ? `unexpected weights ${unexpected.join(', ')}` : '',
    ...shapes,
  ].filter(Boolean);
  if (parts.length)
    throw new ModelFormatError(`loadModel: the weights do not fit the architecture: ${parts.join('; ')}`);
}

/**
 * Loads a model saved by `saveModel` from `source` (bytes, a Blob or File, a path or `file://` URL, an
 * `http(s)://` URL, `localstorage://name` or `indexeddb://name`) onto `options.backend`: rebuilds its layers
 * from their registered classes, loads the weights (same backend, same outputs bit for bit) and restores the
 * training mode. ModelFormatError for a truncated or corrupt file, a weights-only file, an unknown format version
 * and weights that do not fit (named); UnregisteredLayerError for a class not registered here;
 * InvalidArgumentError for a missing backend or a source with nothing stored. Nothing stays allocated on error.
 */
export async function loadModel<M extends Module = Module>(
  source: string | Uint8Array | ArrayBuffer | BlobLike,
  options: { backend: ComputeBackend },
): Promise<M> {
  const backend = options?.backend;
  if (backend === null || typeof backend !== 'object' || typeof backend.fromArray !== 'function')
    throw new InvalidArgumentError(
      `loadModel: options.backend must be a ComputeBackend, got ${describeValue(backend)}`,
    );
  const bytes = await readModelBytes(source);
  const { tensors, metadata } = parse(bytes, backend);
  let model: Module | undefined;
  const made: Tensor[] = [];
  try {
    const spec = specOf(metadata);
    model = buildLayer(spec.model, backend);
    // Weights saved by earlier versions of a layer, under today's names (Module.upgradeStateDict).
    const upgraded = model.upgradeStateDict(tensors);
    made.push(...upgraded.created);
    checkWeights(model, upgraded.state);
    await model.loadStateDict(upgraded.state);
    model.train(spec.training);
    return model as M;
  } catch (e) {
    model?.dispose();
    throw e instanceof PolyHalError || !(e instanceof Error) ? e : new ModelFormatError(`loadModel: ${e.message}`);
  } finally {
    for (const t of [...Object.values(tensors), ...made]) t.dispose();
  }
}
