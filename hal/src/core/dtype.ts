import { DTypeError } from './errors.js';

/**
 * Data types of the HAL (names as NumPy and PyTorch spell them).
 *
 * - `float32` is the working type of every op.
 * - `int32` carries labels and indices and supports the subset of ops listed in `ops.ts` (others throw
 *   UnsupportedOpError).
 * - `bool` is the result of the comparisons, the operand of the logical ops, `where`'s condition and
 *   `any`/`all`'s input. On a device a bool element is stored as an int32 holding 0 or 1 (4 bytes, so
 *   every copy, gather and layout kernel moves it as an int32); on the host it is a Uint8Array of 0/1.
 * - `int8`, `uint8` and `float16` are *narrow* dtypes: stored on a device in a wide storage dtype
 *   (`storageDType`: int32 for the integers, float32 for float16, 4 bytes per element), holding only
 *   values the dtype represents. Every op whose result is narrow computes in the storage dtype and then
 *   narrows (hal/src/contract/kernel-router.ts, in one place for every backend): int8 and uint8 wrap modulo 2^8 (two's
 *   complement, as NumPy and PyTorch integer arithmetic do), float16 rounds to nearest, ties to even,
 *   overflowing to ±Inf (IEEE 754 binary16; NaN stays NaN, −0 stays −0, gradual underflow down to the
 *   subnormal 2^-24). int8 and uint8 take the ops int32 takes; float16 the elementwise ops and
 *   reductions float32 takes, plus movement, layout, index, where, cast and matmul (summed in float32,
 *   rounded once; convolutions, losses and the composites stay float32: cast first). Host arrays:
 *   Int8Array for int8, Uint8Array for uint8 (a Uint8Array is bool unless a dtype says otherwise), and
 *   for float16 a Float32Array holding exact float16 values (Float16Array is missing from Node 20 and 22).
 *
 * - `float64` (8 bytes per element, host Float64Array — pass the dtype: a Float64Array alone uploads as
 *   float32) exists on backends whose storage the host addresses (cpu, wasm, reference: the optional
 *   `hostStorage` hook); there every kernel that touches float64 runs on the host, evaluating the op
 *   table's float64 definitions (hal/src/contract/host-float64.ts). It takes what float32 takes among the
 *   elementwise ops, reductions, movement, layout, index ops, where, cast, cumsum, topk, mean and
 *   logsumexp. webgpu (WGSL has no f64) throws UnsupportedOpError naming float64 when one is created.
 *
 * Host numbers (fromArray, full, scalar operands, pad values) convert to a dtype as the typed arrays do
 * (`hostValue`): int32, int8 and uint8 truncate toward zero and wrap (ToInt32, ToInt8, ToUint8; NaN and
 * ±Inf → 0), float16 rounds as Math.f16round, float64 keeps the number. `cast` between device arrays
 * follows `cast`'s rules (base.ts): float → integer saturates.
 */
export type DType = 'float32' | 'int32' | 'bool' | 'int8' | 'uint8' | 'float16' | 'float64';

/**
 * How the kernels meet a dtype (hal/src/contract/kernel-router.ts routes every kernel call by it):
 * - `native`: the backend's own kernels take it (float32, int32, bool);
 * - `narrow`: stored in its wider `storage` dtype; kernels compute there and copyKernel narrows the result;
 * - `host`: kernels touching it run on the host (host-float64.ts) through the optional `hostStorage` hook,
 *   and a backend without that hook cannot create it.
 */
export type DTypeRoute = 'native' | 'narrow' | 'host';

/** The dtypes a device stores: what storage hooks exchange and kernels compute in. */
export type StorageDType = 'float32' | 'int32' | 'float64';

/**
 * Everything the HAL needs to know about a dtype, in one record (DTYPE_DESCRIPTORS): the functions of this
 * file and the kernel routing (kernel-router.ts, host-float64.ts) read it; a new dtype is one descriptor
 * plus the kernels its route asks for (docs/guide/adding-a-dtype.md).
 */
export interface DTypeDescriptor {
  /** The dtype its elements are stored and computed in on a device (`storageDType`). */
  readonly storage: StorageDType;
  /** Bytes per element on a device (`bytesPerElement`). */
  readonly bytes: number;
  /** `float` (isFloatDType), `int` (isIntDType) or `bool`. */
  readonly kind: 'float' | 'int' | 'bool';
  /** How kernels meet it (DTypeRoute). */
  readonly route: DTypeRoute;
  /** The [min, max] of an integer dtype (`intRange`): casts from floats saturate there. */
  readonly range?: readonly [number, number];
  /** A host number as an element of the dtype holds it (`hostValue`): ints wrap, floats round. */
  readonly fromHost: (v: number) => number;
  /** The host typed array of its data (`read`, `write`, `newHostArray`; TypedArrayFor). */
  readonly hostArray:
    | Float32ArrayConstructor
    | Int32ArrayConstructor
    | Uint8ArrayConstructor
    | Int8ArrayConstructor
    | Float64ArrayConstructor;
  /**
   * A narrow dtype's gather fill for an index out of range where its storage kernel's fill (int32's −2^31)
   * is not a value of the dtype (JAX's fills: int8 −128, uint8 255); float16 keeps float32's NaN.
   */
  readonly gatherFill?: number;
}

const INT32_RANGE = [-2147483648, 2147483647] as const;

/** The descriptor of every dtype, in a stable order (DTYPES, conformance reports). */
export const DTYPE_DESCRIPTORS = {
  /** The working dtype of every op. */
  float32: {
    storage: 'float32',
    bytes: 4,
    kind: 'float',
    route: 'native',
    fromHost: Math.fround,
    hostArray: Float32Array,
  },
  /** Labels, indices and the integer ops, wrapping modulo 2^32. */
  int32: {
    storage: 'int32',
    bytes: 4,
    kind: 'int',
    route: 'native',
    range: INT32_RANGE,
    fromHost: (v: number) => v | 0,
    hostArray: Int32Array,
  },
  /** Comparisons' results and the logical ops' operands: an int32 0 or 1 on a device. */
  bool: {
    storage: 'int32',
    bytes: 4,
    kind: 'bool',
    route: 'native',
    fromHost: (v: number) => (v !== 0 ? 1 : 0),
    hostArray: Uint8Array,
  },
  /** Narrow: int32 storage holding −128 … 127, computed in int32 and wrapped modulo 2^8. */
  int8: {
    storage: 'int32',
    bytes: 4,
    kind: 'int',
    route: 'narrow',
    range: [-128, 127],
    fromHost: (v: number) => wrapInt8(v | 0),
    hostArray: Int8Array,
    gatherFill: -128,
  },
  /** Narrow: int32 storage holding 0 … 255, computed in int32 and wrapped modulo 2^8. */
  uint8: {
    storage: 'int32',
    bytes: 4,
    kind: 'int',
    route: 'narrow',
    range: [0, 255],
    fromHost: (v: number) => (v | 0) & 255,
    hostArray: Uint8Array,
    gatherFill: 255,
  },
  /** Narrow: float32 storage holding float16 values, computed in float32 and rounded once. */
  float16: {
    storage: 'float32',
    bytes: 4,
    kind: 'float',
    route: 'narrow',
    fromHost: (v: number) => roundFloat16(v),
    hostArray: Float32Array,
  },
  /** On the host: backends with the hostStorage hook only; host-float64.ts computes it. */
  float64: {
    storage: 'float64',
    bytes: 8,
    kind: 'float',
    route: 'host',
    fromHost: (v: number) => +v,
    hostArray: Float64Array,
  },
} as const satisfies Record<DType, DTypeDescriptor>;

/** All dtypes the HAL knows, in a stable order (used by conformance reports). */
export const DTYPES: readonly DType[] = Object.keys(DTYPE_DESCRIPTORS) as DType[];

/** The dtypes stored in a wider storage dtype, narrowed after every computing kernel (route `narrow`). */
export type NarrowDType = {
  [D in DType]: (typeof DTYPE_DESCRIPTORS)[D]['route'] extends 'narrow' ? D : never;
}[DType];
export const NARROW_DTYPES: readonly NarrowDType[] = DTYPES.filter(isNarrow);

/** The descriptor of `dtype` (its storage, size, kind, route, host conversions). */
export function dtypeDescriptor(dtype: DType): DTypeDescriptor {
  return DTYPE_DESCRIPTORS[dtype];
}

/** The typed array that holds host-side data of a dtype (float16: a Float32Array of float16 values). */
export type TypedArrayFor<D extends DType> = D extends 'float32' | 'float16'
  ? Float32Array
  : D extends 'int32'
    ? Int32Array
    : D extends 'int8'
      ? Int8Array
      : D extends 'float64'
        ? Float64Array
        : Uint8Array;
/** Host-side data of any dtype (what `read` resolves with). */
export type HostArray = Float32Array | Int32Array | Uint8Array | Int8Array | Float64Array;
/**
 * What a backend's storage hooks exchange: a Float32Array for float32 and float16, an Int32Array for
 * int32, bool (0 or 1 per element), int8 and uint8, a Float64Array for float64. The HAL converts host
 * arrays on the way in and out.
 */
export type StorageArray = Float32Array | Int32Array | Float64Array;

/** Bytes per element on a device: 8 for float64, 4 for the rest (bool, int8, uint8, float16 in 32-bit storage). */
export function bytesPerElement(dtype: DType): number {
  return DTYPE_DESCRIPTORS[dtype].bytes;
}

/** The dtype a buffer is stored as: float32 for float32 and float16, float64 for float64, int32 for the rest. */
export function storageDType(dtype: DType): StorageDType {
  return DTYPE_DESCRIPTORS[dtype].storage;
}

/** Whether `dtype` is narrow (int8, uint8, float16): stored wider and narrowed after computing kernels. */
export function isNarrow(dtype: DType): dtype is NarrowDType {
  return DTYPE_DESCRIPTORS[dtype].route === 'narrow';
}

/** Whether `dtype` is a floating-point dtype (float32, float16, float64). */
export function isFloatDType(dtype: DType): boolean {
  return DTYPE_DESCRIPTORS[dtype].kind === 'float';
}

/** Whether `dtype` is an integer dtype (int32, int8, uint8; not bool). */
export function isIntDType(dtype: DType): boolean {
  return DTYPE_DESCRIPTORS[dtype].kind === 'int';
}

/** The range [min, max] of an integer dtype (int32, int8, uint8). */
export function intRange(dtype: 'int32' | 'int8' | 'uint8'): readonly [number, number] {
  return DTYPE_DESCRIPTORS[dtype].range;
}

const F16_MAX_ROUNDED = 65520; // the midpoint between 65504 (the largest float16) and 2^16: ties go to ±Inf

/**
 * `v` rounded to the nearest float16 (IEEE 754 binary16), ties to even, as Math.f16round: |v| ≥ 65520
 * → ±Inf, NaN → NaN, ±0 and the sign of a result that underflows to 0 kept, subnormals (multiples of
 * 2^-24 below 2^-14) exact. One rounding of the float64 `v` (no double rounding through float32).
 */
export function roundFloat16(v: number): number {
  const a = Math.abs(v);
  if (!(a > 0) || a === Infinity) return v; // NaN, ±0, ±Inf
  if (a >= F16_MAX_ROUNDED) return v > 0 ? Infinity : -Infinity;
  // the quantum: 2^(e − 10) for a in [2^e, 2^(e+1)), e ≥ −14; 2^-24 below 2^-14 (subnormals)
  let q = 2 ** -24;
  if (a >= 2 ** -14) {
    let e = Math.floor(Math.log2(a));
    if (2 ** e > a) e--;
    else if (2 ** (e + 1) <= a) e++;
    q = 2 ** (e - 10);
  }
  const s = a / q; // exact: a power-of-two scaling of a double that stays normal
  let r = Math.round(s); // halves round up ...
  if (r - s === 0.5 && r % 2 !== 0) r -= 1; // ... ties to even
  const out = r * q;
  return v < 0 ? -out : out;
}

/** int32 `v` (any integer in [−2^31, 2^31)) wrapped to int8: two's complement modulo 2^8. */
export const wrapInt8 = (v: number): number => (v << 24) >> 24;
/** int32 `v` wrapped to uint8: modulo 2^8. */
export const wrapUint8 = (v: number): number => v & 255;

/**
 * A host number as stored in a buffer of `dtype`, as the typed arrays convert: float32 Math.fround;
 * int32, int8 and uint8 truncate toward zero and wrap (ToInt32, ToInt8, ToUint8; NaN and ±Inf → 0);
 * bool v ≠ 0 (NaN is true, as NumPy's bool(nan)); float16 roundFloat16; float64 the number itself.
 */
export function hostValue(dtype: DType, v: number): number {
  return DTYPE_DESCRIPTORS[dtype].fromHost(v);
}

/** Allocates a zero-filled host array of `size` elements of `dtype` (its TypedArrayFor). */
export function newHostArray(dtype: DType, size: number): HostArray {
  return new DTYPE_DESCRIPTORS[dtype].hostArray(size);
}

/** Allocates zero-filled storage for `size` elements of `dtype` (its storageDType): for backends. */
export function newStorageArray(dtype: DType, size: number): StorageArray {
  const s = storageDType(dtype);
  return s === 'float32' ? new Float32Array(size) : s === 'float64' ? new Float64Array(size) : new Int32Array(size);
}

/** bool host data (any nonzero value, NaN included, is true) as its storage: an Int32Array of 0/1. */
export function boolToStorage(data: ArrayLike<number>): Int32Array {
  const out = new Int32Array(data.length);
  for (let i = 0; i < data.length; i++) out[i] = data[i] !== 0 ? 1 : 0;
  return out;
}

/** bool storage (int32, nonzero is true) as host data: a Uint8Array of 0/1. */
export function storageToBool(data: ArrayLike<number>): Uint8Array {
  const out = new Uint8Array(data.length);
  for (let i = 0; i < data.length; i++) out[i] = data[i] !== 0 ? 1 : 0;
  return out;
}

/**
 * Host data of `dtype` (its TypedArrayFor, or any numbers) as storage: each value through `hostValue`
 * (float16 host values that are not float16 are rounded; int8 and uint8 values wrap).
 */
export function hostToStorage(dtype: DType, data: ArrayLike<number>): StorageArray {
  if (dtype === 'bool') return boolToStorage(data);
  if (dtype === 'float32') return data instanceof Float32Array ? data : Float32Array.from(data);
  if (dtype === 'int32') return data instanceof Int32Array ? data : Int32Array.from(data);
  if (dtype === 'float64') return data instanceof Float64Array ? data : Float64Array.from(data);
  const out = newStorageArray(dtype, data.length);
  for (let i = 0; i < data.length; i++) out[i] = hostValue(dtype, data[i]!);
  return out;
}

/** Storage of `dtype` (its storageDType) as host data of `dtype` (a copy for bool and the narrow dtypes). */
export function storageToHost(dtype: DType, data: StorageArray): HostArray {
  if (dtype === 'bool') return storageToBool(data);
  // float32, int32, float64 and float16 (a Float32Array of float16 values) as they are; int8, uint8 a copy
  const host = DTYPE_DESCRIPTORS[dtype].hostArray;
  return data instanceof host ? data : host.from(data);
}

/**
 * The dtype of a host typed array: Float32Array float32, Int32Array int32, Uint8Array bool, Int8Array
 * int8, Float64Array float64 (uint8 and float16 need an explicit dtype); throws DTypeError for any
 * other array type.
 */
export function dtypeOfArray(data: ArrayLike<number>): DType {
  if (data instanceof Float32Array) return 'float32';
  if (data instanceof Int32Array) return 'int32';
  if (data instanceof Uint8Array) return 'bool';
  if (data instanceof Int8Array) return 'int8';
  if (data instanceof Float64Array) return 'float64';
  throw new DTypeError(
    `expected a Float32Array, an Int32Array, a Uint8Array (bool), an Int8Array or a Float64Array, got ${
      (data as object)?.constructor?.name ?? String(data)
    }`,
  );
}

/**
 * The dtype `fromArray` infers when none is given: as dtypeOfArray, float32 for anything else — a
 * Float64Array included (float64 is asked for by name: not every backend has it).
 */
export function inferDType(data: ArrayLike<number>): DType {
  return data instanceof Int32Array
    ? 'int32'
    : data instanceof Uint8Array
      ? 'bool'
      : data instanceof Int8Array
        ? 'int8'
        : 'float32';
}

export function isDType(value: unknown): value is DType {
  return typeof value === 'string' && (DTYPES as readonly string[]).includes(value);
}

/** "float32, int32, bool, int8, uint8 or float16": for error messages. */
export const DTYPE_LIST = `${DTYPES.slice(0, -1).join(', ')} or ${DTYPES[DTYPES.length - 1]}`;

/**
 * The numeric cast of one stored value into narrow `dtype` (the copyKernel rule of `cast`; `fromFloat`:
 * the source is float32/float16, else int32/int8/uint8): float → int8/uint8 truncates toward zero and
 * saturates (NaN → 0); int → int8/uint8 wraps modulo 2^8; → float16 roundFloat16.
 */
export function narrowCast(dtype: NarrowDType, fromFloat: boolean): (v: number) => number {
  const d: DTypeDescriptor = DTYPE_DESCRIPTORS[dtype];
  if (d.kind === 'float' || !d.range || !fromFloat) return d.fromHost; // round, or wrap an int32 value
  const [lo, hi] = d.range;
  return (v) => (v !== v ? 0 : v <= lo ? lo : v >= hi ? hi : Math.trunc(v) | 0);
}

/**
 * The IEEE 754 binary16 bits of `v` rounded to float16 (roundFloat16): sign, 5 exponent bits, 10
 * fraction bits; NaN → 0x7e00 (a quiet NaN, the sign kept). For files and wire formats (safetensors F16).
 */
export function float16Bits(v: number): number {
  const r = roundFloat16(v);
  const sign = r < 0 || Object.is(r, -0) ? 0x8000 : 0;
  const a = Math.abs(r);
  if (a !== a) return (v < 0 ? 0x8000 : 0) | 0x7e00;
  if (a === Infinity) return sign | 0x7c00;
  if (a < 2 ** -14) return sign | (a * 2 ** 24); // subnormal (or 0): a multiple of 2^-24
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  else if (2 ** (e + 1) <= a) e++;
  return sign | ((e + 15) << 10) | ((a / 2 ** e - 1) * 1024);
}

/** The float16 value of IEEE 754 binary16 bits `h` (0 ... 0xffff): exact as a number. */
export function float16FromBits(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0x1f) return f ? Number.NaN : sign * Infinity;
  return sign * (e === 0 ? f * 2 ** -24 : (1 + f / 1024) * 2 ** (e - 15));
}
