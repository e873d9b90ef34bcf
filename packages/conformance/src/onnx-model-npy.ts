/**
 * NumPy's `.npy` format (numpy.lib.format, versions 1.0, 2.0 and 3.0), read and written in C order for the
 * dtypes an ONNX model's inputs and outputs take: float32 (`<f4`), float64 (`<f8`), int32 (`<i4`), int64
 * (`<i8`), uint8 (`|u1`), int8 (`|i1`) and bool (`|b1`); big-endian files (`>f4`, ...) are read too. What
 * `np.save(path, array)` writes is what `readNpy` takes, and `np.load` reads what `writeNpy` writes.
 */
import { InvalidArgumentError } from '@polyhal/hal';

/** A tensor as `.npy` holds it: its ONNX element type, dims and data (bool as 0/1 bytes). */
export interface NpyArray {
  /** 'float32', 'float64', 'int32', 'int64', 'uint8', 'int8' or 'bool'. */
  readonly dtype: string;
  /** The array's shape (C order). */
  readonly dims: readonly number[];
  /** prod(dims) values, row-major, in the typed array of the dtype (bool: Uint8Array of 0 and 1). */
  readonly data: Float32Array | Float64Array | Int32Array | BigInt64Array | Uint8Array | Int8Array;
}

/**
 * Bytes that are not a `.npy` file this reader takes: no magic string, an unknown version, a header that
 * runs past the end or is not the dict NumPy writes, a dtype outside the seven above, Fortran order, a
 * shape whose data is not exactly the bytes that follow (checked before anything of that size is allocated).
 * `source` is the file (or '' when none was given); the message starts with it.
 */
export class NpyFormatError extends InvalidArgumentError {
  constructor(
    /** The file (or '' for bytes): the message starts with it. */
    readonly source: string,
    /** What is wrong, in words. */
    readonly reason: string,
  ) {
    super(`${source ? `${source}: ` : ''}not a .npy file this reader takes: ${reason}`);
  }
}

interface Kind {
  readonly dtype: string;
  readonly bytes: number;
  readonly make: (n: number) => NpyArray['data'];
  readonly get: (v: DataView, at: number, little: boolean) => number | bigint;
}

/** NumPy type characters (kind + size) → the element type. */
const KINDS: Readonly<Record<string, Kind>> = {
  f4: { dtype: 'float32', bytes: 4, make: (n) => new Float32Array(n), get: (v, a, l) => v.getFloat32(a, l) },
  f8: { dtype: 'float64', bytes: 8, make: (n) => new Float64Array(n), get: (v, a, l) => v.getFloat64(a, l) },
  i4: { dtype: 'int32', bytes: 4, make: (n) => new Int32Array(n), get: (v, a, l) => v.getInt32(a, l) },
  i8: { dtype: 'int64', bytes: 8, make: (n) => new BigInt64Array(n), get: (v, a, l) => v.getBigInt64(a, l) },
  u1: { dtype: 'uint8', bytes: 1, make: (n) => new Uint8Array(n), get: (v, a) => v.getUint8(a) },
  i1: { dtype: 'int8', bytes: 1, make: (n) => new Int8Array(n), get: (v, a) => v.getInt8(a) },
  b1: { dtype: 'bool', bytes: 1, make: (n) => new Uint8Array(n), get: (v, a) => v.getUint8(a) },
};
/** The descr `writeNpy` writes per element type. */
const DESCR: Readonly<Record<string, string>> = {
  float32: '<f4',
  float16: '<f4', // an OutputTensor of float16 holds its values in a Float32Array, exactly
  float64: '<f8',
  int32: '<i4',
  int64: '<i8',
  uint8: '|u1',
  int8: '|i1',
  bool: '|b1',
};

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY

/** The header dict: `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }` (keys in any order). */
function parseHeader(text: string, fail: (why: string) => never): { descr: string; fortran: boolean; shape: number[] } {
  const body = text.trim();
  if (!body.startsWith('{') || !body.endsWith('}')) fail(`the header is not a dict: ${JSON.stringify(body)}`);
  const entry = /\s*'(\w+)'\s*:\s*('[^']*'|True|False|\([^)]*\))\s*(,|$)/y;
  const inner = body.slice(1, -1);
  const found = new Map<string, string>();
  entry.lastIndex = 0;
  while (entry.lastIndex < inner.length && inner.slice(entry.lastIndex).trim() !== '') {
    const m = entry.exec(inner);
    if (!m)
      fail(`the header dict is malformed at ${JSON.stringify(inner.slice(entry.lastIndex, entry.lastIndex + 20))}`);
    if (found.has(m[1]!)) fail(`the header names '${m[1]}' twice`);
    found.set(m[1]!, m[2]!);
  }
  const keys = [...found.keys()].sort().join(', ');
  if (keys !== 'descr, fortran_order, shape')
    fail(`the header has keys ${keys || 'none'} (descr, fortran_order and shape expected)`);
  const descr = found.get('descr')!;
  const fortran = found.get('fortran_order')!;
  const shape = found.get('shape')!;
  if (!descr.startsWith("'")) fail(`descr ${descr} is not a string`);
  if (fortran !== 'True' && fortran !== 'False') fail(`fortran_order ${fortran} is not True or False`);
  if (!shape.startsWith('(')) fail(`shape ${shape} is not a tuple`);
  const parts = shape
    .slice(1, -1)
    .split(',')
    .map((s) => s.trim());
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length === 1 && parts[0] === '') parts.pop();
  const dims = parts.map((p) => {
    if (!/^[0-9]+$/.test(p) || !Number.isSafeInteger(Number(p))) fail(`shape ${shape} holds '${p}', not a size`);
    return Number(p);
  });
  return { descr: descr.slice(1, -1), fortran: fortran === 'True', shape: dims };
}

/**
 * Reads `.npy` bytes. `source` (a path) starts error messages. Throws NpyFormatError for anything this
 * reader does not take (see there); never allocates more than the file's own size.
 */
export function readNpy(bytes: Uint8Array, source = ''): NpyArray {
  function fail(why: string): never {
    throw new NpyFormatError(source, why);
  }
  if (bytes.length < 10 || MAGIC.some((b, i) => bytes[i] !== b))
    fail(bytes.length === 0 ? 'empty file (0 bytes)' : 'no \\x93NUMPY magic string at its start');
  const major = bytes[6]!;
  if (major < 1 || major > 3) fail(`format version ${major}.${bytes[7]} (1.0, 2.0 and 3.0 are read)`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const wide = major >= 2;
  if (wide && bytes.length < 12) fail(`${bytes.length} bytes: the header length runs past the end`);
  const headerLength = wide ? view.getUint32(8, true) : view.getUint16(8, true);
  const start = wide ? 12 : 10;
  const dataStart = start + headerLength;
  if (dataStart > bytes.length) fail(`the header (${headerLength} bytes) runs past the end (${bytes.length} bytes)`);
  const raw = bytes.subarray(start, dataStart);
  if (major < 3 && raw.some((b) => b > 0x7f)) fail('the header is not ASCII (format version 3.0 is the UTF-8 one)');
  const { descr, fortran, shape } = parseHeader(new TextDecoder().decode(raw), fail);
  const order = descr[0];
  const k = KINDS[descr.slice(1)];
  if (!k || !'<>|='.includes(order ?? '') || descr.length !== 3)
    fail(`dtype '${descr}' (float32 <f4, float64 <f8, int32 <i4, int64 <i8, uint8 |u1, int8 |i1, bool |b1 are read)`);
  if (fortran) fail('Fortran order (save a C-ordered array: np.ascontiguousarray)');
  const available = bytes.length - dataStart;
  // the product is arithmetic on numbers, no allocation: a shape claiming more than the file holds stops here
  const count = shape.reduce((p, d) => p * d, 1);
  if (count * k.bytes !== available)
    fail(`shape (${shape.join(', ')}) of ${descr} needs ${count * k.bytes} bytes of data; the file holds ${available}`);
  const data = k.make(count);
  if (order !== '>') {
    // an aligned copy (the data's offset into the file's buffer may not be aligned for the type)
    new Uint8Array(data.buffer).set(bytes.subarray(dataStart));
  } else {
    const out = data as unknown as (number | bigint)[];
    for (let i = 0; i < count; i++) out[i] = k.get(view, dataStart + i * k.bytes, false);
  }
  if (k.dtype === 'bool' && (data as Uint8Array).some((b) => b > 1)) fail('a bool element that is not 0 or 1');
  return { dtype: k.dtype, dims: shape, data };
}

/**
 * Writes a tensor as `.npy` (format 1.0, C order, little-endian; the header padded to 64 bytes as NumPy pads
 * it). `dtype` is one of the seven above, or float16 (written as float32, whose values it holds exactly);
 * `data` holds prod(dims) elements of the matching typed array. InvalidArgumentError otherwise.
 */
export function writeNpy(t: NpyArray): Uint8Array {
  const descr = DESCR[t.dtype];
  if (!descr) throw new InvalidArgumentError(`writeNpy: dtype ${t.dtype} has no .npy form here`);
  const size = t.dims.reduce((p, d) => p * d, 1);
  if (t.data.length !== size)
    throw new InvalidArgumentError(`writeNpy: ${t.data.length} elements for dims [${t.dims.join(', ')}] (${size})`);
  const kind = KINDS[descr.slice(1)]!;
  const shape = t.dims.length === 1 ? `(${t.dims[0]},)` : `(${t.dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  const pad = 64 - ((10 + header.length + 1) % 64);
  header += `${' '.repeat(pad % 64)}\n`;
  const out = new Uint8Array(10 + header.length + size * kind.bytes);
  out.set(MAGIC);
  out[6] = 1;
  out[7] = 0;
  new DataView(out.buffer).setUint16(8, header.length, true);
  out.set(new TextEncoder().encode(header), 10);
  const typed = t.dtype === 'float16' ? Float32Array.from(t.data as Float32Array) : t.data;
  const want = kind.make(0).constructor;
  if (want !== typed.constructor) throw new InvalidArgumentError(`writeNpy: ${t.dtype} data must be a ${want.name}`);
  out.set(new Uint8Array(typed.buffer, typed.byteOffset, size * kind.bytes), 10 + header.length);
  return out;
}
