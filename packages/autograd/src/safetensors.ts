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
  float16Bits,
  float16FromBits,
  InvalidArgumentError,
  newHostArray,
  ShapeMismatchError,
} from '@polyhal/hal';
import { Tensor } from './tensor.js';

const CODES: Record<string, DType> = {
  F32: 'float32',
  I32: 'int32',
  BOOL: 'bool',
  F16: 'float16',
  I8: 'int8',
  U8: 'uint8',
  F64: 'float64',
};
const NAMES: Record<DType, string> = {
  float32: 'F32',
  int32: 'I32',
  bool: 'BOOL',
  float16: 'F16',
  int8: 'I8',
  uint8: 'U8',
  float64: 'F64',
};
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

interface Entry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

/**
 * Serializes tensors (name → tensor, any backends) to safetensors bytes, in name order; `metadata`
 * string pairs go in `__metadata__`. Reads every tensor (waits for queued work).
 */
export async function saveSafetensors(
  tensors: Readonly<Record<string, Tensor>>,
  metadata?: Readonly<Record<string, string>>,
): Promise<Uint8Array> {
  const names = Object.keys(tensors).sort();
  const header: Record<string, unknown> = {};
  if (metadata) header['__metadata__'] = { ...metadata };
  const datas: Uint8Array[] = [];
  let offset = 0;
  for (const name of names) {
    if (name === '__metadata__') throw new InvalidArgumentError('saveSafetensors: "__metadata__" is not a tensor name');
    const t = tensors[name]!;
    const code = NAMES[t.dtype];
    if (!code)
      throw new DTypeError(`saveSafetensors: ${name} has dtype ${t.dtype}, which safetensors here does not store`);
    const host = await t.data();
    const bytes = new Uint8Array(host.length * WIDTH[t.dtype]);
    const view = new DataView(bytes.buffer);
    for (let i = 0; i < host.length; i++) put(view, t.dtype, i * WIDTH[t.dtype], host[i]!);
    header[name] = { dtype: code, shape: [...t.shape], data_offsets: [offset, offset + bytes.length] };
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

/**
 * Parses safetensors bytes into tensors on `backend` (name → tensor, the caller owns them) and the
 * metadata. InvalidArgumentError for a malformed file (header length, JSON, offsets out of range,
 * overlapping or not matching the shape); DTypeError for a dtype other than F32, F16, F64, I32, I8, U8 and BOOL.
 */
export function loadSafetensors(
  bytes: Uint8Array,
  backend: ComputeBackend,
): { tensors: Record<string, Tensor>; metadata: Record<string, string> } {
  const bad = (why: string): InvalidArgumentError => new InvalidArgumentError(`loadSafetensors: ${why}`);
  if (bytes.length < 8) throw bad(`${bytes.length} bytes: too short for a header`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(dv.getBigUint64(0, true));
  if (n > MAX_HEADER || 8 + n > bytes.length) throw bad(`header length ${n} does not fit ${bytes.length} bytes`);
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + n)));
  } catch (e) {
    throw bad(`the header is not UTF-8 JSON (${(e as Error).message})`);
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) throw bad('the header is not an object');
  const dataStart = 8 + n;
  const dataLength = bytes.length - dataStart;
  const metadata = (header['__metadata__'] ?? {}) as Record<string, string>;
  const entries = Object.entries(header).filter(([k]) => k !== '__metadata__') as [string, Entry][];
  // Validate every entry before uploading anything, so a bad file allocates nothing.
  const spans: [number, number, string][] = [];
  for (const [name, e] of entries) {
    const dtype = CODES[e?.dtype];
    if (!dtype)
      throw new DTypeError(
        `loadSafetensors: ${name} has dtype ${String(e?.dtype)}; F32, F16, F64, I32, I8, U8 and BOOL are read`,
      );
    if (!Array.isArray(e.shape) || !e.shape.every((d) => Number.isInteger(d) && d >= 0))
      throw bad(`${name}: shape ${JSON.stringify(e.shape)} is not a list of sizes`);
    const [begin, end] = Array.isArray(e.data_offsets) ? e.data_offsets : [NaN, NaN];
    if (!Number.isInteger(begin) || !Number.isInteger(end) || begin < 0 || end < begin || end > dataLength)
      throw bad(`${name}: data_offsets ${JSON.stringify(e.data_offsets)} outside the ${dataLength} data bytes`);
    const want = e.shape.reduce((p, d) => p * d, 1) * WIDTH[dtype];
    if (end - begin !== want)
      throw new ShapeMismatchError(
        `loadSafetensors: ${name} has ${end - begin} bytes for shape [${e.shape}] (${want})`,
        [e.shape],
      );
    spans.push([begin, end, name]);
  }
  spans.sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < spans.length; i++)
    if (spans[i]![0] < spans[i - 1]![1]) throw bad(`${spans[i - 1]![2]} and ${spans[i]![2]} overlap`);
  const tensors: Record<string, Tensor> = {};
  try {
    for (const [name, e] of entries) {
      const dtype = CODES[e.dtype]!;
      const count = (e.data_offsets[1] - e.data_offsets[0]) / WIDTH[dtype];
      const host = newHostArray(dtype, count);
      for (let i = 0; i < count; i++) host[i] = get(dv, dtype, dataStart + e.data_offsets[0] + i * WIDTH[dtype]);
      tensors[name] = Tensor.fromArray(backend, host, e.shape, { dtype });
    }
  } catch (err) {
    for (const t of Object.values(tensors)) t.dispose();
    throw err;
  }
  return { tensors, metadata };
}
