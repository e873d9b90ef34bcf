/** Loads the embedded kernels (.wasm as base64): no file paths, works in Node (ESM/CJS) and browsers. */
import {
  KERNELS_MT_RELAXED_WASM_BASE64,
  KERNELS_MT_WASM_BASE64,
  KERNELS_RELAXED_WASM_BASE64,
  KERNELS_WASM_BASE64,
} from './generated/kernels.js';

/**
 * WebAssembly.Memory where the program has WebAssembly types (the DOM lib or @types/node), else `object`:
 * the published declarations stay free of the WebAssembly namespace, which ES libs alone lack.
 */
export type WasmMemory = typeof globalThis extends { WebAssembly: { Memory: { prototype: infer M } } } ? M : object;

/**
 * Every pointer argument and result is an unsigned byte offset into linear memory (wasm32: below
 * 2^32). JavaScript passes numbers up to 2^32 − 1 (ToInt32 keeps their bits); a pointer or byte count
 * that comes back is read with `>>> 0`.
 */
/** A binary kernel over rows of a and b (addresses, row starts, steps) into out; `op` is BINARY_OPS' index. */
type BinaryKernel = (
  op: number,
  n: number,
  rows: number,
  a: number,
  aStarts: number,
  aStep: number,
  b: number,
  bStarts: number,
  bStep: number,
  out: number,
) => void;

export interface KernelExports {
  memory: WasmMemory;
  /** Not a wasm export: the memory's maximum in bytes (declared pages × 64 KiB), set by instantiateKernels. */
  memoryMaxBytes: number;
  heapBase(): number;
  /** assembly/argreduce.ts: argmax (isMax 1) or argmin of `rows` rows of n at rowStride/stride elements. */
  argReduce32(
    float: number,
    isMax: number,
    last: number,
    x: number,
    rows: number,
    rowStride: number,
    n: number,
    stride: number,
    out: number,
  ): void;
  binaryF32: BinaryKernel;
  /** int32 and bool operands: every int32 op, the comparisons (into bool 0/1), fmod, logical and bitwise. */
  binaryI32: BinaryKernel;
  /** assembly/logic.ts: the float32 comparisons (EQUAL … GREATER_EQUAL codes) into a bool (int32 0/1) out. */
  compareF32: BinaryKernel;
  /**
   * assembly/logic.ts: out = cond ? x : y as 32-bit words over rows (pointer, row starts, step of cond, x,
   * then y; cond bool, int32 0/1).
   */
  where32(
    n: number,
    rows: number,
    c: number,
    cStarts: number,
    cStep: number,
    x: number,
    xStarts: number,
    xStep: number,
    y: number,
    yStarts: number,
    yStep: number,
    out: number,
  ): void;
  unaryF32(op: number, n: number, rows: number, x: number, xStarts: number, xStep: number, out: number): void;
  /**
   * assembly/fused-elementwise.ts: the chain of `count` steps (records of kind, op code, scalar bits or array
   * address and period at `steps`) over n contiguous float32 elements of x into out, x's first being chain
   * element `base`.
   */
  fusedF32(n: number, x: number, out: number, steps: number, count: number, base: number): void;
  unaryI32(op: number, n: number, rows: number, x: number, xStarts: number, xStep: number, out: number): void;
  copyRows(
    mode: number,
    n: number,
    rows: number,
    x: number,
    xStarts: number,
    xStep: number,
    out: number,
    oStarts: number,
    oStep: number,
  ): void;
  copyNd(
    mode: number,
    rank: number,
    meta: number,
    idx: number,
    x: number,
    xOff: number,
    out: number,
    oOff: number,
  ): void;
  fillF32(out: number, n: number, value: number): void;
  fillI32(out: number, n: number, value: number): void;
  reduceF32(
    /** The reduction's code, REDUCE_CODES[op] (generated/op-codes.ts). */
    op: number,
    x: number,
    kN: number,
    kRows: number,
    kStarts: number,
    kStep: number,
    rN: number,
    rRows: number,
    rStarts: number,
    rStep: number,
    out: number,
    outer: number,
    scratch: number,
    reps: number,
  ): void;
  reduceI32(
    /** The reduction's code, REDUCE_CODES[op] (generated/op-codes.ts). */
    op: number,
    x: number,
    kN: number,
    kRows: number,
    kStarts: number,
    kStep: number,
    rN: number,
    rRows: number,
    rStarts: number,
    rStep: number,
    out: number,
    reps: number,
  ): void;
  gemm(
    M: number,
    N: number,
    K: number,
    a: number,
    sam: number,
    sak: number,
    b: number,
    sbk: number,
    sbn: number,
    c: number,
    scratch: number,
    rowStart: number,
    rowEnd: number,
  ): void;
  /** assembly/matmul.ts: every row of C, N columns (C's rows ldc floats apart): a column part of a gemm. */
  gemmCols(
    M: number,
    N: number,
    K: number,
    a: number,
    sam: number,
    sak: number,
    b: number,
    sbk: number,
    sbn: number,
    c: number,
    ldc: number,
    scratch: number,
  ): void;
  /**
   * assembly/matmul-batched.ts: items [itemStart, itemEnd) of a batched product C[t] = A[t]·B[t], each as
   * gemm(…, 0, M) computes it; the geometry, base pointers and batch plan in the parameter block at `params`.
   */
  gemmBatched(params: number, scratch: number, itemStart: number, itemEnd: number): void;
  gemmRowBlock(): number;
  /**
   * assembly/conv.ts: one group's y[M, P] = w · im2col(x) over pixels [colStart, colEnd), the geometry and
   * pointers in the parameter block at `params` (GEO_* words); `scratch` holds convScratchBytes(M).
   */
  convGemm(params: number, colStart: number, colEnd: number, scratch: number): void;
  /** Packs w [M, K] for convGemm into convPackBytesA(M, K) bytes at dst. */
  convPackA(w: number, M: number, K: number, dst: number, panelStart: number, panelEnd: number): void;
  convPackBytesA(M: number, K: number): number;
  convScratchBytes(M: number): number;
  /**
   * assembly/conv-direct.ts: one group's stride-1 conv over wide output pixels [q0, q1) (OH rows of the padded
   * width), B read from the (padded) image; the parameter block is convGemm's.
   */
  convDirect(params: number, q0: number, q1: number, scratch: number): void;
  /** Bytes of scratch one convDirect part over [q0, q1) needs. */
  convDirectScratchBytes(params: number, q0: number, q1: number): number;
  /** Depthwise conv of planes [planeStart, planeEnd); `scratch` holds depthwiseScratchBytes(params). */
  depthwiseConv(params: number, planeStart: number, planeEnd: number, scratch: number): void;
  depthwiseScratchBytes(params: number): number;
  /**
   * assembly/conv-transpose.ts: output channels [o0, o1) from input rows [r0, r1) of one batch item and group;
   * `scratch` holds Cg × (W rounded up to 8, plus 8 where that is a multiple of 256) floats.
   */
  convTranspose(params: number, o0: number, o1: number, r0: number, r1: number, scratch: number): void;
  /** Packs one group's w [Cg, Og, K] as [K, Cg, Og] at dst. */
  convTransposePackW(w: number, Cg: number, Og: number, K: number, dst: number): void;
  /** assembly/resize.ts: output rows [row0, row1) of a nearest resize; scratch holds rank i32 words. */
  resizeNearest(params: number, row0: number, row1: number, scratch: number): void;
  packBytesA(): number;
  packBytesB(n: number): number;
  adamF32(
    n: number,
    p: number,
    g: number,
    m: number,
    v: number,
    lr: number,
    b1: number,
    b2: number,
    eps: number,
    decay: number,
    c1: number,
    c2: number,
    oneMinusBeta1: number,
    oneMinusBeta2: number,
  ): void;
  sgdF32(n: number, p: number, g: number, vel: number, lr: number, momentum: number, wd: number): void;
  softmaxCrossEntropyF32(N: number, C: number, z: number, y: number, loss: number, grad: number): void;
  /** assembly/unscale.ts: n floats at g multiplied by inv in place; 1 when a product is Inf or NaN, else 0. */
  unscaleF32(n: number, g: number, inv: number): number;
  /** assembly/softmax.ts: softmax of rows [rowStart, rowEnd) of n contiguous floats, x into y. */
  softmaxF32(n: number, x: number, y: number, rowStart: number, rowEnd: number): void;
  /** Philox4x32-10 uniforms: n floats at out, word `skip` of block (b0, b1) first, key (k0, k1). */
  philoxF32(out: number, n: number, k0: number, k1: number, b0: number, b1: number, skip: number): void;
  /** assembly/matmul-int.ts: C [M, N] = A·B on int32 storage, exact modulo 2^32; strides in elements. */
  gemmI32(
    a: number,
    sam: number,
    sak: number,
    b: number,
    sbk: number,
    sbn: number,
    c: number,
    M: number,
    K: number,
    N: number,
  ): void;
  /** assembly/matmul-int.ts: rows of K int32 (src, rows, K, strides sr/sc) as int16 rows of Kp; 0 if any overflows. */
  packI16(src: number, rows: number, K: number, sr: number, sc: number, dst: number, Kp: number): number;
  /** assembly/matmul-int.ts: C [M, N] int32 from packed A [M, Kp] and packed Bᵀ [N, Kp] (int16). */
  gemmI16(pa: number, pb: number, c: number, M: number, N: number, Kp: number): void;
  /** assembly/gather.ts: x (ptr, offset, strides o/d/i), O, D, I, indices (ptr, offset, stride), K, out, fill bits. */
  gather32(...args: number[]): void;
  /**
   * assembly/gather.ts: reduction (SCATTER_CODES: none, add, mul), isInt, target (ptr, offset, strides), O, D, I,
   * indices (ptr, offset, stride), K, updates (ptr, offset, strides), out.
   */
  scatter32(...args: number[]): void;
  /**
   * assembly/gather.ts: index tuples (ptr, offset, strides s0/s1), L, q, rows per batch, ΠQ, total,
   * dims Q (ptr to q i32), their row-major strides (ptr to q i32), out.
   */
  positions32(...args: number[]): void;
  /**
   * assembly/scan.ts: isFloat, x (byte pointer, offset included), O, n, I, strides s0/s1/s2, out,
   * exclusive, reverse (0/1).
   */
  cumsum32(...args: number[]): void;
  /**
   * assembly/scan.ts: isFloat, largest, x (byte pointer), O, n, I, strides s0/s1/s2, k ≤ 64, values,
   * indices, scratch for k values, scratch for k positions.
   */
  topk32(...args: number[]): void;
}

function decodeBase64(b64: string): Uint8Array<ArrayBuffer> {
  const bin = atob(b64);
  const out = new Uint8Array(new ArrayBuffer(bin.length));
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

const compiled = new Map<string, Promise<WebAssembly.Module>>();

/**
 * Compiles the kernels once per process: the single-threaded build or the shared-memory one, each
 * with plain SIMD or relaxed SIMD (the GEMM micro-kernel then uses fused multiply-add).
 */
export function kernelModule(threaded = false, relaxed = false): Promise<WebAssembly.Module> {
  const key = `${threaded}/${relaxed}`;
  let m = compiled.get(key);
  if (!m) {
    const b64 = threaded
      ? relaxed
        ? KERNELS_MT_RELAXED_WASM_BASE64
        : KERNELS_MT_WASM_BASE64
      : relaxed
        ? KERNELS_RELAXED_WASM_BASE64
        : KERNELS_WASM_BASE64;
    compiled.set(key, (m = compile(decodeBase64(b64))));
  }
  return m;
}

/**
 * Compiles on the calling thread where the runtime allows it (Node, Deno, Bun, workers), else
 * asynchronously (a browser's main thread refuses modules over 4 KiB). WebAssembly.compile and
 * WebAssembly.instantiate queue behind the background compilation of other modules: beside
 * onnxruntime-web's 10 MB module in one Node process, these 84 KB waited 4-5 s for it (each), where
 * compiling and instantiating them here takes milliseconds.
 */
function compile(bytes: Uint8Array<ArrayBuffer>): Promise<WebAssembly.Module> {
  try {
    return Promise.resolve(new WebAssembly.Module(bytes));
  } catch {
    return WebAssembly.compile(bytes);
  }
}

/** Instantiates on the calling thread where allowed (see compile), else asynchronously. */
async function instantiate(module: WebAssembly.Module, imports: WebAssembly.Imports): Promise<WebAssembly.Instance> {
  try {
    return new WebAssembly.Instance(module, imports);
  } catch {
    return WebAssembly.instantiate(module, imports);
  }
}

/** Pages (64 KiB) a wasm32 memory may have: 4 GiB. The builds of scripts/embed.mjs declare this maximum. */
export const MAX_MEMORY_PAGES = 65536;

/**
 * The shared memory of the threaded build: maximum 4 GiB, or 2 GiB where the runtime cannot reserve
 * that much shared address space (some 32-bit and mobile browsers). Returns the memory and its
 * maximum in bytes.
 */
export function createSharedMemory(): { memory: WebAssembly.Memory; maxBytes: number } {
  for (const maximum of [MAX_MEMORY_PAGES, MAX_MEMORY_PAGES / 2]) {
    try {
      return { memory: new WebAssembly.Memory({ initial: 64, maximum, shared: true }), maxBytes: maximum * 65536 };
    } catch (e) {
      if (maximum === MAX_MEMORY_PAGES / 2) throw e;
    }
  }
  throw new Error('unreachable');
}

const abort = (): never => {
  throw new Error('wasm kernel abort');
};

/**
 * Instantiates the kernels; with `memory` (shared, of maximum `maxBytes`), the threaded build on that
 * memory. The single-threaded build's own memory may grow to MAX_MEMORY_PAGES.
 */
export async function instantiateKernels(
  memory?: WebAssembly.Memory,
  relaxed = false,
  maxBytes = MAX_MEMORY_PAGES * 65536,
): Promise<KernelExports> {
  const instance = await instantiate(await kernelModule(Boolean(memory), relaxed), {
    env: memory ? { memory, abort } : { abort },
  });
  const exports = instance.exports as unknown as KernelExports;
  return { ...exports, ...(memory ? { memory } : {}), memoryMaxBytes: maxBytes } as KernelExports;
}

/**
 * True when this runtime validates a module that uses a SIMD instruction (i32x4.splat), i.e. WASM
 * SIMD is available. (0x00 asm header, one type/func/code section with `i32.const 0; i32x4.splat; drop`.)
 */
export function hasWasmSimd(): boolean {
  if (typeof WebAssembly !== 'object' || typeof WebAssembly.validate !== 'function') return false;
  const probe = new Uint8Array([
    0, 97, 115, 109, 1, 0, 0, 0, 1, 4, 1, 96, 0, 0, 3, 2, 1, 0, 10, 9, 1, 7, 0, 65, 0, 253, 17, 26, 11,
  ]);
  return WebAssembly.validate(probe);
}

/**
 * True when this runtime validates a module that uses f32x4.relaxed_madd (relaxed SIMD: on by default
 * in V8 ≥ 11.4 — Chrome 114, Node 22, Deno — and in Bun; Node 20 needs --experimental-wasm-relaxed-simd).
 * (Three `f32.const 0; f32x4.splat`, then `f32x4.relaxed_madd; drop`.)
 */
export function hasRelaxedSimd(): boolean {
  if (typeof WebAssembly !== 'object' || typeof WebAssembly.validate !== 'function') return false;
  const splat = [0x43, 0, 0, 0, 0, 0xfd, 0x13];
  const body = [0, ...splat, ...splat, ...splat, 0xfd, 0x85, 0x02, 0x1a, 0x0b];
  const probe = new Uint8Array([
    0,
    97,
    115,
    109,
    1,
    0,
    0,
    0,
    1,
    4,
    1,
    96,
    0,
    0,
    3,
    2,
    1,
    0,
    10,
    body.length + 2,
    1,
    body.length,
    ...body,
  ]);
  return WebAssembly.validate(probe);
}

let fused: boolean | undefined;

/**
 * True when this runtime's f32x4.relaxed_madd rounds once (a fused multiply-add): it computes
 * (1 + 2^-23)·(1 − 2^-23) − 1, which is −2^-46 fused and 0 when the product is rounded first. V8 fuses
 * on x64 with FMA3 and on arm64; JavaScriptCore (Bun, Safari) multiplies then adds. False without
 * relaxed SIMD. (One function: three f32 params, each `f32x4.splat`, `f32x4.relaxed_madd`, lane 0.)
 */
export function relaxedMaddIsFused(): boolean {
  if (fused !== undefined) return fused;
  fused = false;
  if (!hasRelaxedSimd()) return fused;
  const get = (i: number): number[] => [0x20, i, 0xfd, 0x13];
  const body = [0, ...get(0), ...get(1), ...get(2), 0xfd, 0x85, 0x02, 0xfd, 0x1f, 0, 0x0b];
  const bytes = new Uint8Array([
    0,
    97,
    115,
    109,
    1,
    0,
    0,
    0,
    1,
    8,
    1,
    0x60,
    3,
    0x7d,
    0x7d,
    0x7d,
    1,
    0x7d,
    3,
    2,
    1,
    0,
    7,
    5,
    1,
    1,
    0x66,
    0,
    0,
    10,
    body.length + 2,
    1,
    body.length,
    ...body,
  ]);
  try {
    const f = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports['f'] as (
      a: number,
      b: number,
      c: number,
    ) => number;
    fused = f(1 + 2 ** -23, 1 - 2 ** -23, -1) !== 0;
  } catch {
    fused = false;
  }
  return fused;
}
