/**
 * Subgroup-matrix float16 GEMM (tensor cores on NVIDIA): C [Mp, Np] (f32) = A [Mp, Kp] · B [Kp, Np], row-major
 * float16 (binary16, two to a word; padded copies where M, N or K are not multiples of the tile and of 32), through
 * `chromium_experimental_subgroup_matrix` at f16×f16→f32 16×16×16 with `enable f16`. Each product is rounded to
 * nothing (the tensor cores multiply binary16 exactly) and accumulated in float32. The structure is the int8
 * kernel's (matmul-subgroup-matrix.ts): four subgroups of 32 invocations in a 2×2 grid, each computing
 * (16·fm)×(16·fn) as fm×fn result matrices; 32-deep slabs of A and B staged in workgroup memory with rows padded
 * by 16 bytes (bank conflicts), the next slab loaded into registers while the current one is multiplied,
 * workgroups walking groups of 8 tile rows column by column (L2 reuse). Unlike the int8 kernel, B is read as it
 * is laid out (row-major [K, N]: right fragments loaded row-major), so an aligned B needs no transposed copy.
 *
 * Measured on an H200 (benches/probes/webgpu-f16-sgm.ts, benches/results/h200/webgpu-f16-sgm.json): exact on
 * integer-valued operands and complete at every size up to 8192³; `large` (fm 4, fn 4) 186 / 196 TFLOP/s at
 * 4096 / 8192 with Dawn's robustness off, 160 / 160 with it on. A plain kernel loading fragments straight from
 * global memory hung at 2048³ on the same GPU and driver. With the builtins' vector form (vec4 slabs,
 * subgroup-matrix-gemm.ts) the HAL's product ran at 203 / 222–227 TFLOP/s against the legacy form's 193 / 209–213
 * in the same process (benches/probes/webgpu-sgm-builtins.ts). Slower in the probe (webgpu-f16-sgm.ts, vector form,
 * 4096 / 8192, against 198–202 / 200–210): slabs 128 bytes deep 180 / 180, two slab buffers with one barrier per
 * slab 139 / 145, eight subgroups in a 2×4 grid (a 128×256 tile) 166 / 166, or with 64×32 each (128×128) 115 / 111.
 *
 * Params of the product and the crop (i32 words, F16_MATMUL_WORDS): 0 M, 1 N, 2 K, 3 A's offset, 4 B's offset (halves,
 * multiples of 8), 5 C's offset (elements), 6–8 the inner item strides of A and B and C's item stride over the
 * grid's z (elements), 9 Mp, 10 Kp / 2 (words of a row of A), 11 Np, 12 items per outer batch index, 13–14 the
 * outer item strides of A and B (a batch of two levels: [B, H] of attention).
 */
import { paramsPrelude } from '../layout.js';
import {
  type SubgroupMatrixBuiltins,
  type SubgroupMatrixTile,
  type SubgroupMatrixType,
  slabDepth,
  subgroupMatrixGemmWgsl,
  subgroupMatrixTile,
} from './subgroup-matrix-gemm.js';

/** The float16 kernels' tile (the family's). */
export type HalfSubgroupMatrixTile = SubgroupMatrixTile;

export const F16_MATMUL_WORDS = 15;

/**
 * float16 in the tensor-core family (subgroup-matrix-gemm.ts): f16×f16→f32 16×16×16 with `enable f16`, two to a
 * word, B read as rows (right fragments row-major), A and B read from their offsets (unpacked where aligned).
 */
export const FLOAT16_SUBGROUP_MATRIX: SubgroupMatrixType = {
  name: 'float16',
  perWord: 2,
  mmaK: 16,
  enables: 'enable f16;\n',
  word: 'u32',
  shared: 'f16',
  c: 'f32',
  left: 'subgroup_matrix_left<f16, 16, 16>',
  right: 'subgroup_matrix_right<f16, 16, 16>',
  result: 'subgroup_matrix_result<f32, 16, 16>',
  bRows: true,
  offsets: true,
  words: F16_MATMUL_WORDS,
};

/** Slab depth along K (halves), and the padding of K. */
export const HALF_KT = slabDepth(FLOAT16_SUBGROUP_MATRIX);

export const HALF_SGM_LARGE = subgroupMatrixTile(FLOAT16_SUBGROUP_MATRIX, 'large', 4, 4);
export const HALF_SGM_MEDIUM = subgroupMatrixTile(FLOAT16_SUBGROUP_MATRIX, 'medium', 2, 4);
/** 64×64: four times the workgroups of the large tile, for products of few output tiles (a short K). */
export const HALF_SGM_SMALL = subgroupMatrixTile(FLOAT16_SUBGROUP_MATRIX, 'small', 2, 2);

/**
 * The WGSL of one tile's kernel: A [Mp, Kp] row-major at element offset param 3, B [Kp, Np] row-major at param 4
 * (packed copies, or the operands themselves where they are laid out so), Kp / 2 in param 10. `direct`: C is the
 * product's own output at element offset param 5 (M and N multiples of the tile: no crop pass); else the padded C.
 * `split`: split-K, the split depth in param 15 (F16_MATMUL_WORDS + 1 words; subgroup-matrix-gemm.ts).
 */
export function halfSubgroupMatrixWgsl(
  t: SubgroupMatrixTile,
  direct = false,
  builtins: SubgroupMatrixBuiltins = 'legacy',
  split = false,
): string {
  return subgroupMatrixGemmWgsl(FLOAT16_SUBGROUP_MATRIX, t, direct, builtins, split);
}

/**
 * Words of the pack kernel: R, C (the operand), offset, strides (rows, columns), Cp, Rp (the padded copy), the
 * operand's inner item stride, the items per outer index and the outer item stride (elements) for a batch over the
 * grid's z (item z writes its copy Rp·Cp halves further).
 */
export const PACK_HALF_WORDS = 10;

/**
 * Packs a float16 operand [R, C] (element (r, c) at offset + r·s0 + c·s1, binary16 in 2-byte storage) into a
 * row-major [Rp, Cp] copy, zero outside the operand, two halves to a word: one invocation per word (coalesced
 * reads along a contiguous row); batch item z of the grid from offset + (z / p8)·p9 + (z % p8)·p7.
 */
export function packHalfWgsl(): string {
  return `${paramsPrelude(PACK_HALF_WORDS)}
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read_write> packed: array<u32>;
fn half_at(e: i32) -> u32 { return (x[u32(e) >> 1u] >> ((u32(e) & 1u) * 16u)) & 0xffffu; }
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_id) lid: vec3u) {
  let w = (wid.y * nwg.x + wid.x) * 256u + lid.x;
  let cw = u32(p(5u)) / 2u;
  let words = cw * u32(p(6u));
  if (w >= words) { return; }
  let r = i32(w / cw); let c0 = i32(w % cw) * 2;
  let R = p(0u); let C = p(1u); let s0 = p(3u); let s1 = p(4u);
  let z = i32(wid.z);
  let off = p(2u) + z / p(8u) * p(9u) + z % p(8u) * p(7u);
  var word = 0u;
  if (r < R) {
    if (c0 < C) { word = half_at(off + r * s0 + c0 * s1); }
    if (c0 + 1 < C) { word = word | (half_at(off + r * s0 + (c0 + 1) * s1) << 16u); }
  }
  packed[wid.z * words + w] = word;
}`;
}

/**
 * Crops the padded C [Mp, Np] (f32) into the product's output at offset param 5: one invocation per element; batch
 * item z of the grid from z·Mp·Np in C and z·M·N in the output.
 */
export function cropHalfProductWgsl(): string {
  return `${paramsPrelude(F16_MATMUL_WORDS)}
@group(0) @binding(1) var<storage, read> c: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_id) lid: vec3u) {
  let i = (wid.y * nwg.x + wid.x) * 256u + lid.x;
  let N = u32(p(1u));
  let MN = u32(p(0u)) * N;
  if (i >= MN) { return; }
  let np = u32(p(11u));
  let mp = u32(p(9u));
  out[u32(p(5u)) + wid.z * MN + i] = c[wid.z * mp * np + (i / N) * np + i % N];
}`;
}
