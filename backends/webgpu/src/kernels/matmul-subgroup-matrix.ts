/**
 * Subgroup-matrix int8 GEMM (tensor cores on NVIDIA): C [Mp, Np] (i32) = A [Mp, Kp] · Bᵀ [Np, Kp]ᵀ on packed
 * operands (four int8 to a word along K, rows zero-padded to the tile, K to 64), through
 * `chromium_experimental_subgroup_matrix` at i8×i8→i32 16×16×32. Writes the padded C: subgroup-matrix stores
 * cannot be masked, so the caller crops (or, where M and N are multiples of the tile, C is the output itself).
 *
 * Four subgroups of 32 invocations in a 2×2 grid; each computes (16·fm)×(16·fn) as fm×fn result matrices, fully
 * unrolled (WGSL has no unroll hint). 64-deep slabs of A and Bᵀ go through workgroup memory with rows padded
 * from 64 to 80 bytes: at a 64-byte stride the 8 rows a tensor-core fragment reads share 4 banks (4-way
 * conflicts), at 80 they fall in 8 distinct ones. The next slab is loaded into registers while the current one
 * is multiplied, and workgroups walk groups of 8 tile rows column by column, for L2 reuse.
 *
 * Measured on an H100 (`benches/probes/webgpu-int8-sgm-tune.ts`, `benches/results/h100/webgpu-int8-sgm-tune.json`),
 * TOPS at 4096 / 8192: `large` (fm 4, fn 4: 128×128 tiles, 20 KiB of workgroup memory) 363–375 / 395–432 with Dawn's
 * robustness off, 137–162 / 172–173 with it on; `medium` (fm 2, fn 4: 64×128, 15 KiB) 303–305 / 337–346 off,
 * 147–221 / 224–236 on. The large tile without the row padding ran at 251 / 279 (off); the one-subgroup 32×64
 * kernel before them at 118–144.
 *
 * Params (i32 words, kernels/matmul-int.ts): 10 = Kp / 4 (words of a packed row), 11 = Np.
 */
import { paramsPrelude } from '../layout.js';
import { INT_MATMUL_WORDS } from './matmul-int.js';

/** A workgroup tile: fm×fn result matrices of 16×16 per subgroup, four subgroups in a 2×2 grid. */
export interface SubgroupMatrixTile {
  readonly name: 'large' | 'medium';
  readonly fm: number;
  readonly fn: number;
  /** Rows and columns of C per workgroup: the padding of A's and Bᵀ's rows. */
  readonly rows: number;
  readonly cols: number;
  /** Bytes of workgroup memory (the slabs of A and Bᵀ). */
  readonly storage: number;
}

const KT = 64; // slab depth along K (int8 values)
const ROW = KT + 16; // slab row stride in bytes: 16 bytes of padding against bank conflicts

function tile(name: 'large' | 'medium', fm: number, fn: number): SubgroupMatrixTile {
  const [rows, cols] = [32 * fm, 32 * fn];
  return { name, fm, fn, rows, cols, storage: (rows + cols) * ROW };
}

export const SGM_LARGE = tile('large', 4, 4);
export const SGM_MEDIUM = tile('medium', 2, 4);

/**
 * The WGSL of one tile's kernel. `direct`: C is the product's own output, at element offset param 5 (M and N
 * multiples of the tile, no rescale: no crop pass); else the padded C at offset 0.
 */
export function subgroupMatrixMatmulWgsl(t: SubgroupMatrixTile, direct = false): string {
  const { fm, fn, rows, cols } = t;
  const VR = KT / 16; // vec4 per slab row
  const [va, vb] = [(rows * VR) / 128, (cols * VR) / 128]; // vec4 of A and Bᵀ per invocation per slab
  const L: string[] = [];
  const acc = (i: number, j: number): string => `acc${i}_${j}`;
  for (let i = 0; i < fm; i++) for (let j = 0; j < fn; j++) L.push(`  var ${acc(i, j)} = C();`);
  const operands = [
    ['a', 'sa', rows, va, 'tm'],
    ['b', 'sb', cols, vb, 'tn'],
  ] as const;
  for (const [src, , , v] of operands) for (let e = 0; e < v; e++) L.push(`  var ${src}${e}: vec4<i32>;`);
  // Loads slab `k` of both operands into registers (the prefetch).
  const load = (k: string): void => {
    for (const [src, , T, v, g] of operands)
      for (let e = 0; e < v; e++) {
        const i = `(t + ${e * 128}u)`;
        L.push(`    ${src}${e} = ${src}[(${g} * ${T}u + ${i} / ${VR}u) * kv + ${k} / 16u + ${i} % ${VR}u];`);
      }
  };
  load('0u');
  L.push(`  for (var k = 0u; k < kp; k += ${KT}u) {`);
  for (const [src, dst, , v] of operands)
    for (let e = 0; e < v; e++) {
      const i = `(t + ${e * 128}u)`;
      L.push(
        `    { let q = ${src}${e}; let o = (${i} / ${VR}u) * ${ROW / 4}u + (${i} % ${VR}u) * 4u; ` +
          `${dst}[o] = q.x; ${dst}[o + 1u] = q.y; ${dst}[o + 2u] = q.z; ${dst}[o + 3u] = q.w; }`,
      );
    }
  L.push('    workgroupBarrier();', `    let kn = min(k + ${KT}u, kp - ${KT}u);`);
  load('kn');
  for (let kk = 0; kk < KT; kk += 32) {
    L.push('    {');
    for (let i = 0; i < fm; i++)
      L.push(`      let l${i} = subgroupMatrixLoad<LM>(&sa, ar + ${16 * i * ROW + kk}u, false, ${ROW}u);`);
    for (let j = 0; j < fn; j++)
      L.push(`      let r${j} = subgroupMatrixLoad<RM>(&sb, br + ${16 * j * ROW + kk}u, true, ${ROW}u);`);
    for (let i = 0; i < fm; i++)
      for (let j = 0; j < fn; j++)
        L.push(`      ${acc(i, j)} = subgroupMatrixMultiplyAccumulate(l${i}, r${j}, ${acc(i, j)});`);
    L.push('    }');
  }
  L.push('    workgroupBarrier();', '  }');
  for (let i = 0; i < fm; i++)
    for (let j = 0; j < fn; j++)
      L.push(
        `  subgroupMatrixStore(&c, base + (tm * ${rows}u + sr + ${16 * i}u) * np + tn * ${cols}u + sc + ${16 * j}u, ` +
          `${acc(i, j)}, false, np);`,
      );
  return `enable chromium_experimental_subgroup_matrix;
${paramsPrelude(INT_MATMUL_WORDS)}
@group(0) @binding(1) var<storage, read> a: array<vec4<i32>>;
@group(0) @binding(2) var<storage, read> b: array<vec4<i32>>;
@group(0) @binding(3) var<storage, read_write> c: array<i32>;
alias LM = subgroup_matrix_left<i8, 32, 16>;
alias RM = subgroup_matrix_right<i8, 16, 32>;
alias C = subgroup_matrix_result<i32, 16, 16>;
var<workgroup> sa: array<i32, ${(rows * ROW) / 4}>;
var<workgroup> sb: array<i32, ${(cols * ROW) / 4}>;
@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) t: u32, @builtin(subgroup_id) sg: u32) {
  let kp = u32(p(10u)) * 4u;
  let kv = kp / 16u;
  let np = u32(p(11u));
  let base = ${direct ? 'u32(p(5u))' : '0u'};
  // Groups of 8 tile rows, walked column by column.
  let pid = wg.y * nwg.x + wg.x;
  let first = pid / (8u * nwg.x) * 8u;
  let gm = min(nwg.y - first, 8u);
  let tm = first + pid % (8u * nwg.x) % gm;
  let tn = pid % (8u * nwg.x) / gm;
  let sr = sg / 2u * ${16 * fm}u;
  let sc = sg % 2u * ${16 * fn}u;
  let ar = sr * ${ROW}u;
  let br = sc * ${ROW}u;
${L.join('\n')}
}`;
}
