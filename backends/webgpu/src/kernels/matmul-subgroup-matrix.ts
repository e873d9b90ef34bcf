/**
 * Subgroup-matrix int8 GEMM (tensor cores on NVIDIA): C [Mp, Np] (i32) = A [Mp, Kp] · Bᵀ [Np, Kp]ᵀ on packed
 * operands (four int8 to a word along K, rows zero-padded to the tile, K to 64), through
 * `chromium_experimental_subgroup_matrix` at i8×i8→i32 16×16×32. Writes the padded C: subgroup-matrix stores
 * cannot be masked, so the caller crops (or, where M and N are multiples of the tile, C is the output itself).
 *
 * The kernel is the int8 member of the tensor-core family (subgroup-matrix-gemm.ts, shared with float16): four
 * subgroups of 32 invocations in a 2×2 grid; 64-deep slabs of A and Bᵀ through workgroup memory with rows padded
 * from 64 to 80 bytes; the next slab prefetched into registers; workgroups in groups of 8 tile rows.
 *
 * Measured on an H100 (`benches/probes/webgpu-int8-sgm-tune.ts`, `benches/results/h100/webgpu-int8-sgm-tune.json`),
 * TOPS at 4096 / 8192: `large` (fm 4, fn 4: 128×128 tiles, 20 KiB of workgroup memory) 363–375 / 395–432 with Dawn's
 * robustness off, 137–162 / 172–173 with it on; `medium` (fm 2, fn 4: 64×128, 15 KiB) 303–305 / 337–346 off,
 * 147–221 / 224–236 on. The large tile without the row padding ran at 251 / 279 (off); the one-subgroup 32×64
 * kernel before them at 118–144.
 *
 * Params (i32 words, kernels/matmul-int.ts): 10 = Kp / 4 (words of a packed row), 11 = Np.
 */
import { INT_MATMUL_WORDS } from './matmul-int.js';
import {
  type SubgroupMatrixBuiltins,
  type SubgroupMatrixTile,
  type SubgroupMatrixType,
  subgroupMatrixGemmWgsl,
  subgroupMatrixTile,
} from './subgroup-matrix-gemm.js';

export type { SubgroupMatrixTile } from './subgroup-matrix-gemm.js';

/** int8 in the tensor-core family: i8×i8→i32 16×16×32, four to a word, B packed transposed (Bᵀ, K contiguous). */
export const INT8_SUBGROUP_MATRIX: SubgroupMatrixType = {
  name: 'int8',
  perWord: 4,
  mmaK: 32,
  enables: '',
  word: 'i32',
  shared: 'i32',
  c: 'i32',
  left: 'subgroup_matrix_left<i8, 32, 16>',
  right: 'subgroup_matrix_right<i8, 16, 32>',
  result: 'subgroup_matrix_result<i32, 16, 16>',
  bRows: false,
  offsets: false,
  words: INT_MATMUL_WORDS,
};

export const SGM_LARGE = subgroupMatrixTile(INT8_SUBGROUP_MATRIX, 'large', 4, 4);
export const SGM_MEDIUM = subgroupMatrixTile(INT8_SUBGROUP_MATRIX, 'medium', 2, 4);

/**
 * The WGSL of one tile's kernel, its builtins in form `builtins`. `direct`: C is the product's own output, at
 * element offset param 5 (M and N multiples of the tile, no rescale: no crop pass); else the padded C at offset 0.
 */
export function subgroupMatrixMatmulWgsl(
  t: SubgroupMatrixTile,
  direct = false,
  builtins: SubgroupMatrixBuiltins = 'legacy',
): string {
  return subgroupMatrixGemmWgsl(INT8_SUBGROUP_MATRIX, t, direct, builtins);
}
