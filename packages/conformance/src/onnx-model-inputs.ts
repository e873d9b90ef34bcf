/**
 * The inputs of a whole-model run (`polyhal-conformance --onnx-model`, `polyhal run`): `--input name=file`
 * specs read from `.npy` files (onnx-model-npy.ts) or ONNX TensorProto files (`.pb`, as ONNX's test data
 * sets hold them), and seeded values for the inputs given no file where the model fixes their dims.
 */
import { InvalidArgumentError } from '@polyhal/hal';
import { decodeTensor, type OnnxValueInfo, type TensorData } from '@polyhal/onnx';
import { NpyFormatError, readNpy } from './onnx-model-npy.js';

/** A bad `--input`: no `name=`, a file that cannot be read, a name the model has no input for. */
export class ModelInputError extends InvalidArgumentError {
  constructor(
    /** The input's name ('' where the spec gives none). */
    readonly input: string,
    message: string,
  ) {
    super(message);
  }
}

/** One `--input name=file`: the model input's name and the file's path. */
/** One `--input name=file` of the CLI, parsed. */
export interface ModelInputSpec {
  /** The model input it feeds. */
  readonly name: string;
  /** The file holding its values (.npy or a serialized TensorProto). */
  readonly path: string;
}

/** `name=file` → { name, path }: split at the first '='; a spec without a name or a path is a ModelInputError. */
export function parseInputSpec(spec: string): ModelInputSpec {
  const at = spec.indexOf('=');
  if (at <= 0 || at === spec.length - 1)
    throw new ModelInputError('', `--input '${spec}': expected name=file (e.g. x=image.npy)`);
  return { name: spec.slice(0, at), path: spec.slice(at + 1) };
}

const NPY_MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59];

/** Host data of a decoded TensorProto in the typed array a feed of its type takes. */
function feedData(dtype: string, data: NonNullable<ReturnType<typeof decodeTensor>['data']>): TensorData['data'] {
  if (dtype === 'uint8' || dtype === 'bool') return Uint8Array.from(data as Int32Array);
  if (dtype === 'int8') return Int8Array.from(data as Int32Array);
  return data;
}

/**
 * A tensor file's bytes as a feed: `.npy` (NumPy's magic string) or else an ONNX TensorProto. `source`
 * names the file in errors: NpyFormatError for a bad `.npy`, OnnxDecodeError for bytes that are neither.
 */
export function tensorFromFile(bytes: Uint8Array, source: string): TensorData {
  if (NPY_MAGIC.every((b, i) => bytes[i] === b) || source.endsWith('.npy')) {
    const a = readNpy(bytes, source);
    return { dtype: a.dtype, dims: a.dims, data: a.data };
  }
  const t = decodeTensor(bytes, { source: `${source} (neither .npy nor an ONNX TensorProto)` });
  if (!t.data) throw new NpyFormatError(source, `a TensorProto of ${t.dtype} whose data this reader does not take`);
  return { dtype: t.dtype, dims: t.dims, data: feedData(t.dtype, t.data) };
}

/**
 * Reads every spec's file with `readFile` and checks its name against the model's inputs; returns the
 * feeds by name. ModelInputError for a name the model has no input for, a name given twice or a file that
 * cannot be read; the readers' errors (NpyFormatError, OnnxDecodeError) name the file.
 */
export function readInputs(
  specs: readonly ModelInputSpec[],
  inputs: readonly OnnxValueInfo[],
  readFile: (path: string) => Uint8Array,
): Record<string, TensorData> {
  const feeds: Record<string, TensorData> = {};
  const names = inputs.map((v) => v.name);
  for (const { name, path } of specs) {
    if (!names.includes(name))
      throw new ModelInputError(
        name,
        `--input ${name}=${path}: the model has no input '${name}' (its inputs: ${names.join(', ')})`,
      );
    if (Object.hasOwn(feeds, name)) throw new ModelInputError(name, `--input ${name}: given twice`);
    let bytes: Uint8Array;
    try {
      bytes = readFile(path);
    } catch (e) {
      throw new ModelInputError(name, `--input ${name}=${path}: cannot be read (${(e as Error).message})`);
    }
    feeds[name] = tensorFromFile(bytes, path);
  }
  return feeds;
}

/** The most elements a generated input may have (2^26: 256 MiB of float32); larger needs --input. */
export const MAX_GENERATED_ELEMENTS = 2 ** 26;

/** A seeded generator of uniform values in [0, 1) (mulberry32). */
function uniform(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Values for an input given no file: its declared dims must all be fixed. Floats are uniform in [-1, 1)
 * from `seed` (and the input's position, so two inputs differ); integers are 0 and bools false (indices and
 * flags that are valid whatever the model). ModelInputError for symbolic or unknown dims, more than
 * MAX_GENERATED_ELEMENTS, or a type that has no generated form.
 */
export function generatedInput(info: OnnxValueInfo, seed: number, position = 0): TensorData {
  const name = info.name;
  if (!info.shape || info.shape.some((d) => d === null)) {
    const dims = info.shape?.map((d, i) => d ?? info.dimParams?.[i] ?? '?').join(', ');
    throw new ModelInputError(
      name,
      `input '${name}' has ${dims === undefined ? 'an unknown rank' : `symbolic dims [${dims}]`}: ` +
        `give its values with --input ${name}=file.npy`,
    );
  }
  const dims = info.shape as number[];
  const size = dims.reduce((p, d) => p * d, 1);
  if (size > MAX_GENERATED_ELEMENTS)
    throw new ModelInputError(
      name,
      `input '${name}' has dims [${dims.join(', ')}] (${size} elements, more than ${MAX_GENERATED_ELEMENTS} ` +
        `generated): give its values with --input ${name}=file.npy`,
    );
  const next = uniform(seed * 7919 + position);
  switch (info.dtype) {
    case 'float32':
    case 'float16':
      return { dtype: info.dtype, dims, data: Float32Array.from({ length: size }, () => next() * 2 - 1) };
    case 'float64':
      return { dtype: 'float64', dims, data: Float64Array.from({ length: size }, () => next() * 2 - 1) };
    case 'int64':
      return { dtype: 'int64', dims, data: new BigInt64Array(size) };
    case 'int32':
      return { dtype: 'int32', dims, data: new Int32Array(size) };
    case 'int8':
      return { dtype: 'int8', dims, data: new Int8Array(size) };
    case 'uint8':
    case 'bool':
      return { dtype: info.dtype, dims, data: new Uint8Array(size) };
    default:
      throw new ModelInputError(name, `input '${name}' of type ${info.dtype}: give its values with --input`);
  }
}

/** Where each input's values came from, for reports: the file, or "generated (seed N)". */
export interface InputSource {
  /** The model input. */
  readonly name: string;
  /** Its ONNX element type. */
  readonly dtype: string;
  /** Its dims as fed. */
  readonly dims: readonly number[];
  /** The file it was read from, or "generated (seed N)". */
  readonly from: string;
}

/**
 * The feeds of a run: the files of `specs`, and generated values (generatedInput) for every other input.
 * Returns the feeds and where each came from. Errors: those of readInputs and generatedInput.
 */
export function modelFeeds(
  specs: readonly ModelInputSpec[],
  inputs: readonly OnnxValueInfo[],
  seed: number,
  readFile: (path: string) => Uint8Array,
): { feeds: Record<string, TensorData>; sources: InputSource[] } {
  const feeds = readInputs(specs, inputs, readFile);
  const sources: InputSource[] = [];
  inputs.forEach((info, i) => {
    const file = specs.find((s) => s.name === info.name)?.path;
    if (!file) feeds[info.name] = generatedInput(info, seed, i);
    const f = feeds[info.name]!;
    const from = file ?? (f.dtype?.startsWith('float') ? `uniform [-1, 1), seed ${seed}` : 'zeros');
    sources.push({ name: info.name, dtype: f.dtype ?? '', dims: f.dims, from });
  });
  return { feeds, sources };
}
