/**
 * The safetensors format (Hugging Face, https://github.com/huggingface/safetensors): an 8-byte
 * little-endian header length N, N bytes of UTF-8 JSON — `{"name": {"dtype": "F32", "shape": [..],
 * "data_offsets": [begin, end]}, ..., "__metadata__": {..}}`, padded with spaces to a multiple of 8 —
 * then the tensors' bytes, row-major and little-endian, offsets relative to the end of the header.
 * Files written here are read by the Python, Rust and JS safetensors libraries, and theirs here.
 * float32 (F32), int32 (I32), bool (BOOL, one byte 0/1 each), float16 (F16, IEEE binary16), int8 (I8),
 * uint8 (U8) and float64 (F64, loaded on backends that have float64) tensors; other dtypes (BF16, I64,
 * ...) are a DTypeError naming the dtype.
 */
import {
  type ComputeBackend,
  type DType,
  DTypeError,
  describeValue,
  float16Bits,
  float16FromBits,
  InvalidArgumentError,
  newHostArray,
  ShapeMismatchError,
} from '@polyhal/hal';
import { Tensor } from './tensor.js';

/** The file's dtype codes (own entries only: a header's "constructor" or "__proto__" is no dtype). */
const CODES: ReadonlyMap<string, DType> = new Map<string, DType>([
  ['F32', 'float32'],
  ['I32', 'int32'],
  ['BOOL', 'bool'],
  ['F16', 'float16'],
  ['I8', 'int8'],
  ['U8', 'uint8'],
  ['F64', 'float64'],
]);
const NAMES: ReadonlyMap<DType, string> = new Map([...CODES].map(([code, dtype]) => [dtype, code]));
/** Bytes per element in the file. */
const WIDTH: Record<DType, number> = { float32: 4, int32: 4, bool: 1, float16: 2, int8: 1, uint8: 1, float64: 8 };

/** Writes element `v` of `dtype` at byte `at` (little-endian). */
function put(view: DataView, dtype: DType, at: number, v: number): void {
  if (dtype === 'int32') view.setInt32(at, v, true);
  else if (dtype === 'bool') view.setUint8(at, v ? 1 : 0);
  else if (dtype === 'int8') view.setInt8(at, v);
  else if (dtype === 'uint8') view.setUint8(at, v);
  else if (dtype === 'float16') view.setUint16(at, float16Bits(v), true);
  else if (dtype === 'float64') view.setFloat64(at, v, true);
  else view.setFloat32(at, v, true);
}

/** Reads element of `dtype` at byte `at` (little-endian). */
function get(view: DataView, dtype: DType, at: number): number {
  if (dtype === 'int32') return view.getInt32(at, true);
  if (dtype === 'bool') return view.getUint8(at) ? 1 : 0;
  if (dtype === 'int8') return view.getInt8(at);
  if (dtype === 'uint8') return view.getUint8(at);
  if (dtype === 'float16') return float16FromBits(view.getUint16(at, true));
  if (dtype === 'float64') return view.getFloat64(at, true);
  return view.getFloat32(at, true);
}
/** Header lengths past this are refused as corrupt (the Rust reader's limit). */
const MAX_HEADER = 100_000_000;

/** A record with no prototype: every key, `__proto__` and `constructor` included, is an own entry. */
const record = <T>(): Record<string, T> => Object.create(null) as Record<string, T>;

/** A plain object (a literal, JSON's, one without prototype, any realm's), not an array, Map or typed array. */
const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && Object.prototype.toString.call(v) === '[object Object]';

/**
 * `__metadata__` as the format has it: an object of string → string, copied into a null-prototype
 * record; undefined or null is none (Python's `metadata=None`). InvalidArgumentError otherwise.
 */
function checkMetadata(op: string, m: unknown): Record<string, string> {
  const out = record<string>();
  if (m === undefined || m === null) return out;
  if (!isPlainObject(m))
    throw new InvalidArgumentError(`${op}: __metadata__ must be an object of strings, got ${describeValue(m)}`);
  for (const k of Object.keys(m)) {
    const v = m[k];
    if (typeof v !== 'string')
      throw new InvalidArgumentError(
        `${op}: __metadata__ value of ${JSON.stringify(k)} must be a string, got ${describeValue(v)}`,
      );
    out[k] = v;
  }
  return out;
}

/**
 * Serializes tensors (name → tensor, any backends) to safetensors bytes, in name order; `metadata`
 * string pairs go in `__metadata__`. Reads every tensor (waits for queued work). Every own key is a
 * name, `__proto__` and `constructor` included (a record built with Object.create(null) or
 * Object.defineProperty round-trips). Checked before anything is read: `tensors` must be a plain
 * object of Tensors and `metadata` (undefined or null for none) a plain object of strings
 * (InvalidArgumentError naming the key); the name `__metadata__` is refused (InvalidArgumentError);
 * a dtype the format lacks here is a DTypeError.
 */
export async function saveSafetensors(
  tensors: Readonly<Record<string, Tensor>>,
  metadata?: Readonly<Record<string, string>> | null,
): Promise<Uint8Array> {
  const op = 'saveSafetensors';
  if (!isPlainObject(tensors))
    throw new InvalidArgumentError(
      `${op}: tensors must be a record of name → Tensor, got ${describeValue(tensors)}` +
        ((tensors as unknown) instanceof Map ? ' (pass Object.fromEntries(map))' : ''),
    );
  const names = Object.keys(tensors).sort();
  const header = record<unknown>();
  const meta = checkMetadata(op, metadata);
  if (metadata !== undefined && metadata !== null) header['__metadata__'] = meta;
  for (const name of names) {
    if (name === '__metadata__') throw new InvalidArgumentError(`${op}: "__metadata__" is not a tensor name`);
    const t = tensors[name];
    if (!(t instanceof Tensor))
      throw new InvalidArgumentError(
        `${op}: tensors[${JSON.stringify(name)}] must be a Tensor, got ${describeValue(t)}`,
      );
    if (!NAMES.has(t.dtype))
      throw new DTypeError(
        `${op}: ${JSON.stringify(name)} has dtype ${t.dtype}, which safetensors here does not store`,
      );
  }
  const datas: Uint8Array[] = [];
  let offset = 0;
  for (const name of names) {
    const t = tensors[name]!;
    const host = await t.data();
    const bytes = new Uint8Array(host.length * WIDTH[t.dtype]);
    const view = new DataView(bytes.buffer);
    for (let i = 0; i < host.length; i++) put(view, t.dtype, i * WIDTH[t.dtype], host[i]!);
    header[name] = { dtype: NAMES.get(t.dtype), shape: [...t.shape], data_offsets: [offset, offset + bytes.length] };
    datas.push(bytes);
    offset += bytes.length;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((new TextEncoder().encode(json).length + 8) % 8)) % 8);
  const head = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + head.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(head.length), true);
  out.set(head, 8);
  let p = 8 + head.length;
  for (const d of datas) {
    out.set(d, p);
    p += d.length;
  }
  return out;
}

/** One checked header entry: its dtype, shape and data span. */
interface Entry {
  name: string;
  dtype: DType;
  shape: number[];
  begin: number;
  end: number;
}

/** Checks header entry `name` against the format and the `dataLength` data bytes (typed errors naming it). */
function checkEntry(name: string, e: unknown, dataLength: number): Entry {
  const at = `loadSafetensors: tensor ${JSON.stringify(name)}`;
  if (!isPlainObject(e))
    throw new InvalidArgumentError(`${at} must be an object {dtype, shape, data_offsets}, got ${describeValue(e)}`);
  const field = (k: string): unknown => (Object.hasOwn(e, k) ? e[k] : undefined);
  const code = field('dtype');
  if (typeof code !== 'string')
    throw new InvalidArgumentError(`${at}: dtype must be a string, got ${describeValue(code)}`);
  const dtype = CODES.get(code);
  if (!dtype)
    throw new DTypeError(`${at}: dtype ${JSON.stringify(code)} is not read; ${[...CODES.keys()].join(', ')} are`);
  const shape = field('shape');
  if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0))
    throw new InvalidArgumentError(`${at}: shape ${describeValue(shape)} is not a list of sizes (integers ≥ 0)`);
  const offsets = field('data_offsets');
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((d) => Number.isSafeInteger(d) && d >= 0))
    throw new InvalidArgumentError(`${at}: data_offsets ${describeValue(offsets)} is not [begin, end] (integers ≥ 0)`);
  const [begin, end] = offsets as [number, number];
  if (end < begin) throw new InvalidArgumentError(`${at}: data_offsets [${begin}, ${end}] end before they begin`);
  if (end > dataLength)
    throw new InvalidArgumentError(`${at}: data_offsets [${begin}, ${end}] outside the ${dataLength} data bytes`);
  const want = shape.reduce((p: number, d: number) => p * d, 1) * WIDTH[dtype];
  if (end - begin !== want)
    throw new ShapeMismatchError(`${at} has ${end - begin} bytes for ${code} shape [${shape}] (${want})`, [shape]);
  return { name, dtype, shape, begin, end };
}

/**
 * Parses safetensors bytes (a Uint8Array, e.g. a Node Buffer) into tensors on `backend` (the caller
 * owns them) and the metadata. Both records have no prototype (Object.create(null)): every tensor
 * name — `__proto__`, `constructor` and `hasOwnProperty` included — is an ordinary own entry, so read
 * them with `tensors[name]`, `Object.keys`/`Object.entries` or `Object.hasOwn`, not with methods
 * inherited from Object.prototype (`tensors.hasOwnProperty(...)` does not exist). Everything is
 * checked before any tensor is made (a bad file allocates nothing): InvalidArgumentError for bytes
 * that are not a Uint8Array, a header length past the file, a header that is not UTF-8 JSON of an
 * object, an entry that is not {dtype, shape, data_offsets}, offsets out of range, reversed or
 * overlapping, and a `__metadata__` that is not an object of strings (null is none); ShapeMismatchError
 * for a byte count other than shape × item size; DTypeError for a dtype other than F32, F16, F64,
 * I32, I8, U8 and BOOL. Each names the tensor or field. Gaps between tensors' data are allowed.
 */
export function loadSafetensors(
  bytes: Uint8Array,
  backend: ComputeBackend,
): { tensors: Record<string, Tensor>; metadata: Record<string, string> } {
  const bad = (why: string): InvalidArgumentError => new InvalidArgumentError(`loadSafetensors: ${why}`);
  if (!(bytes instanceof Uint8Array))
    throw bad(
      `bytes must be a Uint8Array, got ${describeValue(bytes)}` +
        ((bytes as unknown) instanceof ArrayBuffer ? ' (wrap it: new Uint8Array(buffer))' : ''),
    );
  if (backend === null || typeof backend !== 'object' || typeof backend.fromArray !== 'function')
    throw bad(`backend must be a ComputeBackend, got ${describeValue(backend)}`);
  if (bytes.length < 8) throw bad(`${bytes.length} bytes: too short for a header`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(dv.getBigUint64(0, true));
  if (n > MAX_HEADER || 8 + n > bytes.length) throw bad(`header length ${n} does not fit ${bytes.length} bytes`);
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + n)));
  } catch (e) {
    throw bad(`the header is not UTF-8 JSON (${(e as Error).message})`);
  }
  if (!isPlainObject(header)) throw bad(`the header is not an object, got ${describeValue(header)}`);
  const dataStart = 8 + n;
  const dataLength = bytes.length - dataStart;
  const metadata = checkMetadata(
    'loadSafetensors',
    Object.hasOwn(header, '__metadata__') ? header['__metadata__'] : null,
  );
  // Validate every entry before uploading anything, so a bad file allocates nothing.
  const entries = Object.keys(header)
    .filter((k) => k !== '__metadata__')
    .map((name) => checkEntry(name, header[name], dataLength));
  const spans = [...entries].sort((a, b) => a.begin - b.begin || a.end - b.end);
  for (let i = 1; i < spans.length; i++) {
    const [p, q] = [spans[i - 1]!, spans[i]!];
    if (q.begin < p.end)
      throw bad(
        `tensors ${JSON.stringify(p.name)} [${p.begin}, ${p.end}] and ${JSON.stringify(q.name)} ` +
          `[${q.begin}, ${q.end}] overlap`,
      );
  }
  const tensors = record<Tensor>();
  try {
    for (const { name, dtype, shape, begin, end } of entries) {
      const w = WIDTH[dtype];
      const count = (end - begin) / w;
      const host = newHostArray(dtype, count);
      for (let i = 0; i < count; i++) host[i] = get(dv, dtype, dataStart + begin + i * w);
      tensors[name] = Tensor.fromArray(backend, host, shape, { dtype });
    }
  } catch (err) {
    for (const t of Object.values(tensors)) t.dispose();
    throw err;
  }
  return { tensors, metadata };
}
