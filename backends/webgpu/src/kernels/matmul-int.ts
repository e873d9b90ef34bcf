/**
 * WGSL for integer matmul, C [M, N] (i32) = A [M, K] · B [K, N] over i32 storage, exact modulo 2^32
 * (WGSL's i32 multiply and add wrap), one batch item per dispatch:
 *  - `intMatmulWgsl`: any int32 values; 16×16 invocations, 4×4 outputs each (a 64×64 tile), strided
 *    operands through workgroup memory.
 *  - int8 values (every element in [−128, 127]: the int8 dtype) take a packed path: `packInt8Wgsl` packs
 *    A row-major and B transposed, four bytes to a u32 along K, zero-padded to the kernel's tile; then
 *    `dot4MatmulWgsl` (`dot4I8Packed`, core WGSL; products of 256+ tiles of 128×128 take the register-blocked
 *    `dot4LargeWgsl` of kernels/dot4-large.ts) or, where the device has
 *    `chromium-experimental-subgroup-matrix` with an i8×i8→i32 16×16×32 configuration,
 *    `subgroupMatrixMatmulWgsl` of kernels/matmul-subgroup-matrix.ts (tensor cores on NVIDIA).
 *  - `int8GemvWgsl`: products of fewer than 16 rows (batch-1 inference), where a 64-row tile would be
 *    mostly padding: one invocation per output over the unpacked operands (no packing passes).
 * Measured on an NVIDIA H100 with `benches/probes/webgpu-int8-probe.ts`: dot4I8Packed 48–53 TOPS (64-tile); through
 * the backend the 128-tile dot4 kernel runs at 69–74 TOPS (4096, 8192), 1.54–1.67× float32
 * (`benches/results/h100/webgpu-int8-*.json`).
 *
 * `rescale` variants of the kernels that write C (dot4, few rows, the crop after subgroup matrices) store
 * float32 f32(sum) · (aScale · bScale[n]) + bias[n] instead (the integerMatmulToFloatKernel hook).
 *
 * Params (i32 words): 0 M · 1 N · 2 K · 3 offset a · 4 offset b · 5 offset out · 6 a row stride ·
 * 7 a column stride · 8 b row stride · 9 b column stride · 10 padded K words (Kp/4) · 11 padded rows;
 * rescale adds 12 offset aScale · 13 offset bScale · 14 bScale stride (0: per tensor) · 15 offset bias ·
 * 16 bias stride · 17 has bias (0 or 1).
 */
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude } from '../layout.js';

export const INT_MATMUL_WORDS = 12;
export const RESCALE_WORDS = 18;

/**
 * Declarations of C (binding `at`; rescale: aScale, bScale and bias at the next three) and of
 * `store(out index, column, sum)`: the int32 sum, or its rescaled float32.
 */
export function storeWgsl(rescale: boolean, at = 3): string {
  if (!rescale)
    return `@group(0) @binding(${at}) var<storage, read_write> c: array<i32>;
fn store(o: i32, col: i32, acc: i32) { c[o] = acc; }`;
  return `@group(0) @binding(${at}) var<storage, read_write> c: array<f32>;
@group(0) @binding(${at + 1}) var<storage, read> a_scale: array<f32>;
@group(0) @binding(${at + 2}) var<storage, read> b_scale: array<f32>;
@group(0) @binding(${at + 3}) var<storage, read> bias: array<f32>;
fn store(o: i32, col: i32, acc: i32) {
  let y = f32(acc) * (a_scale[p(12u)] * b_scale[p(13u) + col * p(14u)]);
  c[o] = select(y, y + bias[p(15u) + col * p(16u)], p(17u) != 0);
}`;
}
/**
 * Padding of the packed operands: K to 64, rows of A and B to 64 (the 64-tile kernel's tile; the 128-tile dot4
 * kernel loads zeros for a half last tile; subgroup-matrix products pad rows to their own tile).
 */
export const PACK_K = 64;
export const PACK_ROWS = 64;

/** Generic int32 GEMM (strided views, any values), a 64×64 tile per workgroup. */
export function intMatmulWgsl(): string {
  return `${paramsPrelude(INT_MATMUL_WORDS)}
@group(0) @binding(1) var<storage, read> a: array<i32>;
@group(0) @binding(2) var<storage, read> b: array<i32>;
@group(0) @binding(3) var<storage, read_write> c: array<i32>;
var<workgroup> sa: array<i32, 1024>;
var<workgroup> sb: array<i32, 1024>;
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) l: vec3u,
        @builtin(local_invocation_index) t: u32) {
  let M = p(0u); let N = p(1u); let K = p(2u);
  var acc: array<array<i32, 4>, 4>;
  for (var k0 = 0; k0 < K; k0 += 16) {
    for (var e = 0u; e < 4u; e++) {
      let w = e * 256u + t;
      let r = i32(wg.y * 64u + w / 16u); let ka = k0 + i32(w % 16u);
      sa[w] = select(0, a[p(3u) + r * p(6u) + ka * p(7u)], r < M && ka < K);
      let col = i32(wg.x * 64u + w % 64u); let kb = k0 + i32(w / 64u);
      sb[w] = select(0, b[p(4u) + kb * p(8u) + col * p(9u)], col < N && kb < K);
    }
    workgroupBarrier();
    for (var q = 0u; q < 16u; q++) {
      for (var i = 0u; i < 4u; i++) {
        let x = sa[(l.y + i * 16u) * 16u + q];
        for (var j = 0u; j < 4u; j++) { acc[i][j] += x * sb[q * 64u + l.x + j * 16u]; }
      }
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < 4u; i++) {
    for (var j = 0u; j < 4u; j++) {
      let r = i32(wg.y * 64u + l.y + i * 16u); let col = i32(wg.x * 64u + l.x + j * 16u);
      if (r < M && col < N) { c[p(5u) + r * N + col] = acc[i][j]; }
    }
  }
}`;
}

/**
 * Where a pack reads its int8 operand: 'int32' storage (one element a word, its low byte the value's) or 1-byte
 * 'bytes' storage (dispatch-int8.ts: four to a u32 word, little-endian).
 */
export type PackSource = 'int32' | 'bytes';

/** WGSL: the source binding x, and `elem_byte(e)`: element e's low 8 bits (the sign does not matter to packing). */
function packSourceWgsl(source: PackSource): string {
  return source === 'int32'
    ? `@group(0) @binding(1) var<storage, read> x: array<i32>;
fn elem_byte(e: i32) -> u32 { return u32(x[e]) & 0xffu; }`
    : `@group(0) @binding(1) var<storage, read> x: array<u32>;
fn elem_byte(e: i32) -> u32 { let u = u32(e); return (x[u >> 2u] >> (8u * (u & 3u))) & 0xffu; }`;
}

/**
 * Packs an int8 operand from `source` storage: `transpose` false packs A [M, K] as rows of K; true packs B [K, N]
 * as rows of N (Bᵀ). Output: padded rows (param 11) × Kp/4 words (param 10), zero outside the operand.
 * A: one invocation per output word (offset 3, strides 6 and 7). Bᵀ: `packTransposedInt8Wgsl`.
 */
export function packInt8Wgsl(transpose: boolean, source: PackSource = 'int32'): string {
  if (transpose) return packTransposedInt8Wgsl(source);
  const [rows, off, sr, sk] = ['p(0u)', 'p(3u)', 'p(6u)', 'p(7u)'];
  return `${paramsPrelude(INT_MATMUL_WORDS)}
${packSourceWgsl(source)}
@group(0) @binding(2) var<storage, read_write> packed: array<u32>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_id) lid: vec3u) {
  let w = (wid.y * nwg.x + wid.x) * 256u + lid.x;
  let kw = u32(p(10u));
  let rows = u32(p(11u));
  if (w >= kw * rows) { return; }
  let r = i32(w / kw); let k0 = i32(w % kw) * 4; let dst = w;
  var word = 0u;
  for (var j = 0; j < 4; j++) {
    let k = k0 + j;
    if (r < ${rows} && k < p(2u)) { word |= elem_byte(${off} + r * ${sr} + k * ${sk}) << (8u * u32(j)); }
  }
  packed[dst] = word;
}`;
}

/**
 * Packs B [K, N] (offset 4, strides 8 and 9) as Bᵀ: padded rows of N (param 11) × Kp/4 words (param 10),
 * zero outside B. A workgroup transposes a 64 (n) × 64 (k) block through workgroup memory: each invocation
 * packs 4 words from reads along B's rows (neighbouring invocations, neighbouring columns), then writes
 * 4 words along Bᵀ's rows (neighbouring invocations, neighbouring words), both coalesced. The block's rows
 * are 65 words apart, so the column reads of the write phase fall in distinct banks. One workgroup per block,
 * over a 2-D grid of (Np/64)·(Kp/64) workgroups (`flat` of that many times 256 invocations).
 */
function packTransposedInt8Wgsl(source: PackSource): string {
  return `${paramsPrelude(INT_MATMUL_WORDS)}
${packSourceWgsl(source)}
@group(0) @binding(2) var<storage, read_write> packed: array<u32>;
var<workgroup> tile: array<u32, ${16 * 65}>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) t: u32) {
  let N = p(1u); let K = p(2u);
  let kw = u32(p(10u));
  let blocks = u32(p(11u)) / 64u;
  let id = wg.y * nwg.x + wg.x;
  if (id >= blocks * (kw / 16u)) { return; }
  let n0 = id % blocks * 64u; let w0 = id / blocks * 16u;
  let n = i32(n0 + t % 64u);
  for (var e = 0u; e < 4u; e++) {
    let w = t / 64u + 4u * e;
    var word = 0u;
    for (var j = 0u; j < 4u; j++) {
      let k = i32((w0 + w) * 4u + j);
      if (n < N && k < K) { word |= elem_byte(p(4u) + k * p(8u) + n * p(9u)) << (8u * j); }
    }
    tile[w * 65u + t % 64u] = word;
  }
  workgroupBarrier();
  for (var e = 0u; e < 4u; e++) {
    let r = t / 16u + 16u * e;
    packed[(n0 + r) * kw + w0 + t % 16u] = tile[(t % 16u) * 65u + r];
  }
}`;
}

/**
 * dot4I8Packed GEMM: a 64×64 tile, 4×4 outputs per invocation. On packed A [Mp, Kp] and Bᵀ [Np, Kp], or
 * (`direct`) on the strided int8 operands as they are, each workgroup-memory word packed while loading
 * (pack4xI8 of four K, zero past M, N or K): no packing passes, 4 loads a word.
 */
export function dot4MatmulWgsl(rescale = false, direct = false): string {
  const load = direct
    ? `let ra = i32(wg.y * 64u + w / 16u); let ka = i32(kb + w % 16u) * 4;
      sa[w] = pack4xI8(vec4i(at(ra, ka), at(ra, ka + 1), at(ra, ka + 2), at(ra, ka + 3)));
      let cb = i32(wg.x * 64u + w / 16u);
      sb[w] = pack4xI8(vec4i(bt(cb, ka), bt(cb, ka + 1), bt(cb, ka + 2), bt(cb, ka + 3)));`
    : `sa[w] = a[(wg.y * 64u + w / 16u) * kw + kb + w % 16u];
      sb[w] = b[(wg.x * 64u + w / 16u) * kw + kb + w % 16u];`;
  const operands = direct
    ? `@group(0) @binding(1) var<storage, read> a: array<i32>;
@group(0) @binding(2) var<storage, read> b: array<i32>;
fn at(r: i32, k: i32) -> i32 { return select(0, a[p(3u) + r * p(6u) + k * p(7u)], r < p(0u) && k < p(2u)); }
fn bt(c: i32, k: i32) -> i32 { return select(0, b[p(4u) + k * p(8u) + c * p(9u)], c < p(1u) && k < p(2u)); }`
    : `@group(0) @binding(1) var<storage, read> a: array<u32>;
@group(0) @binding(2) var<storage, read> b: array<u32>;`;
  return `${paramsPrelude(rescale ? RESCALE_WORDS : INT_MATMUL_WORDS)}
${operands}
${storeWgsl(rescale)}
var<workgroup> sa: array<u32, 1024>;
var<workgroup> sb: array<u32, 1024>;
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) l: vec3u,
        @builtin(local_invocation_index) t: u32) {
  let kw = u32(p(10u));
  var acc: array<array<i32, 4>, 4>;
  for (var kb = 0u; kb < kw; kb += 16u) {
    for (var e = 0u; e < 4u; e++) {
      let w = e * 256u + t;
      ${load}
    }
    workgroupBarrier();
    for (var q = 0u; q < 16u; q++) {
      var av: array<u32, 4>;
      var bv: array<u32, 4>;
      for (var i = 0u; i < 4u; i++) {
        av[i] = sa[(l.y + i * 16u) * 16u + q];
        bv[i] = sb[(l.x + i * 16u) * 16u + q];
      }
      for (var i = 0u; i < 4u; i++) {
        for (var j = 0u; j < 4u; j++) { acc[i][j] += dot4I8Packed(av[i], bv[j]); }
      }
    }
    workgroupBarrier();
  }
  let M = p(0u); let N = p(1u);
  for (var i = 0u; i < 4u; i++) {
    for (var j = 0u; j < 4u; j++) {
      let r = i32(wg.y * 64u + l.y + i * 16u); let col = i32(wg.x * 64u + l.x + j * 16u);
      if (r < M && col < N) { store(p(5u) + r * N + col, col, acc[i][j]); }
    }
  }
}`;
}

/** Copies C [M, N] out of the padded C [Mp, Np] (param 11 = Np) to `out` at offset param 5. */
export function cropWgsl(rescale = false): string {
  return `${paramsPrelude(rescale ? RESCALE_WORDS : INT_MATMUL_WORDS)}
@group(0) @binding(1) var<storage, read> padded: array<i32>;
${storeWgsl(rescale, 2)}
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_id) lid: vec3u) {
  let i = i32((wid.y * nwg.x + wid.x) * 256u + lid.x);
  let N = p(1u);
  if (i >= p(0u) * N) { return; }
  store(p(5u) + i, i % N, padded[(i / N) * p(11u) + i % N]);
}`;
}

/**
 * Few rows (batch-1 inference): out [M, N], one invocation per output, reading A and B as they are
 * (strided int8 values in i32 storage, no packing pass) four K at a time through an i32 vec4 dot.
 */
export function int8GemvWgsl(rescale = false): string {
  return `${paramsPrelude(rescale ? RESCALE_WORDS : INT_MATMUL_WORDS)}
@group(0) @binding(1) var<storage, read> a: array<i32>;
@group(0) @binding(2) var<storage, read> b: array<i32>;
${storeWgsl(rescale)}
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  let M = u32(p(0u)); let N = u32(p(1u)); let K = p(2u);
  if (idx >= M * N) { return; }
  let col = i32(idx % N);
  let ra = p(3u) + i32(idx / N) * p(6u); let rb = p(4u) + col * p(9u);
  let sa = p(7u); let sb = p(8u);
  var acc = 0;
  var k = 0;
  for (; k + 4 <= K; k += 4) {
    let av = vec4i(a[ra + k * sa], a[ra + (k + 1) * sa], a[ra + (k + 2) * sa], a[ra + (k + 3) * sa]);
    let bv = vec4i(b[rb + k * sb], b[rb + (k + 1) * sb], b[rb + (k + 2) * sb], b[rb + (k + 3) * sb]);
    acc += dot(av, bv);
  }
  for (; k < K; k++) { acc += a[ra + k * sa] * b[rb + k * sb]; }
  store(p(5u) + i32(idx), col, acc);
}`;
}
