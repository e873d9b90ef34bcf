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
 * global memory hung at 2048³ on the same GPU and driver.
 *
 * Params of the product and the crop (i32 words, F16_MATMUL_WORDS): 0 M, 1 N, 2 K, 3 A's offset, 4 B's offset (halves,
 * multiples of 8), 5 C's offset (elements), 6–9 unused, 10 Kp, 11 Np.
 */
import { paramsPrelude } from '../layout.js';

export const F16_MATMUL_WORDS = 12;

/** A workgroup tile: fm×fn result matrices of 16×16 per subgroup, four subgroups in a 2×2 grid. */
export interface HalfSubgroupMatrixTile {
  readonly name: 'large' | 'medium';
  readonly fm: number;
  readonly fn: number;
  /** Rows and columns of C per workgroup: the padding of A's rows and B's columns. */
  readonly rows: number;
  readonly cols: number;
  /** Bytes of workgroup memory (the slabs of A and B). */
  readonly storage: number;
}

/** Slab depth along K (halves), and the padding of K. */
export const HALF_KT = 32;
const ROWH = HALF_KT + 8; // slab row stride in halves: 80 bytes
const VR = HALF_KT / 8; // vec4<u32> (8 halves) per slab row

function tile(name: 'large' | 'medium', fm: number, fn: number): HalfSubgroupMatrixTile {
  const [rows, cols] = [32 * fm, 32 * fn];
  return { name, fm, fn, rows, cols, storage: (rows * ROWH + HALF_KT * (cols + 8)) * 2 };
}

export const HALF_SGM_LARGE = tile('large', 4, 4);
export const HALF_SGM_MEDIUM = tile('medium', 2, 4);

/**
 * The WGSL of one tile's kernel: A [Mp, Kp] row-major at vec4 offset param 3 / 8, B [Kp, Np] row-major at param
 * 4 / 8 (packed copies, or the operands themselves where they are laid out so). `direct`: C is the product's own
 * output at element offset param 5 (M and N multiples of the tile: no crop pass); else the padded C at offset 0.
 */
export function halfSubgroupMatrixWgsl(t: HalfSubgroupMatrixTile, direct = false): string {
  const { fm, fn, rows, cols } = t;
  const CV = cols / 8; // vec4 per slab row of B
  const RSB = cols + 8; // B's slab row stride in halves (16 bytes of padding)
  const [va, vb] = [(rows * VR) / 128, (HALF_KT * CV) / 128]; // vec4 of A and B per invocation per slab
  const L: string[] = [];
  const acc = (i: number, j: number): string => `acc${i}_${j}`;
  for (let i = 0; i < fm; i++) for (let j = 0; j < fn; j++) L.push(`  var ${acc(i, j)}: CM;`);
  for (let e = 0; e < va; e++) L.push(`  var a${e}: vec4<u32>;`);
  for (let e = 0; e < vb; e++) L.push(`  var b${e}: vec4<u32>;`);
  const at = (e: number): string => `(t + ${e * 128}u)`;
  // Loads slab `k` of both operands into registers (the prefetch).
  const load = (k: string): void => {
    for (let e = 0; e < va; e++)
      L.push(`    a${e} = a[oa + (tm * ${rows}u + ${at(e)} / ${VR}u) * kv + ${k} / 8u + ${at(e)} % ${VR}u];`);
    for (let e = 0; e < vb; e++)
      L.push(`    b${e} = b[ob + (${k} + ${at(e)} / ${CV}u) * nv + tn * ${CV}u + ${at(e)} % ${CV}u];`);
  };
  // Stores a register's eight halves into workgroup memory from half `o`.
  const store = (dst: string, q: string, o: string): string => {
    const halves = ['x', 'y', 'z', 'w'].map((c, w) => {
      const [lo, hi] = [`${dst}[o + ${2 * w}u]`, `${dst}[o + ${2 * w + 1}u]`];
      return `let h${c} = bitcast<vec2<f16>>(q.${c}); ${lo} = h${c}.x; ${hi} = h${c}.y;`;
    });
    return `    { let q = ${q}; let o = ${o};\n      ${halves.join('\n      ')} }`;
  };
  load('0u');
  L.push(`  for (var k = 0u; k < kp; k += ${HALF_KT}u) {`);
  for (let e = 0; e < va; e++)
    L.push(store('sa', `a${e}`, `(${at(e)} / ${VR}u) * ${ROWH}u + (${at(e)} % ${VR}u) * 8u`));
  for (let e = 0; e < vb; e++) L.push(store('sb', `b${e}`, `(${at(e)} / ${CV}u) * ${RSB}u + (${at(e)} % ${CV}u) * 8u`));
  L.push('    workgroupBarrier();', `    let kn = min(k + ${HALF_KT}u, kp - ${HALF_KT}u);`);
  load('kn');
  for (let kk = 0; kk < HALF_KT; kk += 16) {
    L.push('    {');
    for (let i = 0; i < fm; i++)
      L.push(`      let l${i} = subgroupMatrixLoad<LM>(&sa, ar + ${16 * i * ROWH + kk}u, false, ${ROWH}u);`);
    for (let j = 0; j < fn; j++)
      L.push(`      let r${j} = subgroupMatrixLoad<RM>(&sb, ${kk * RSB}u + sc + ${16 * j}u, false, ${RSB}u);`);
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
  return `enable f16;
enable chromium_experimental_subgroup_matrix;
${paramsPrelude(F16_MATMUL_WORDS)}
@group(0) @binding(1) var<storage, read> a: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> b: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;
alias LM = subgroup_matrix_left<f16, 16, 16>;
alias RM = subgroup_matrix_right<f16, 16, 16>;
alias CM = subgroup_matrix_result<f32, 16, 16>;
var<workgroup> sa: array<f16, ${rows * ROWH}>;
var<workgroup> sb: array<f16, ${HALF_KT * RSB}>;
@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) t: u32, @builtin(subgroup_id) sg: u32) {
  let kp = u32(p(10u));
  let kv = kp / 8u;
  let np = u32(p(11u));
  let nv = np / 8u;
  let oa = u32(p(3u)) / 8u;
  let ob = u32(p(4u)) / 8u;
  let base = ${direct ? 'u32(p(5u))' : '0u'};
  // Groups of 8 tile rows, walked column by column.
  let pid = wg.y * nwg.x + wg.x;
  let first = pid / (8u * nwg.x) * 8u;
  let gm = min(nwg.y - first, 8u);
  let tm = first + pid % (8u * nwg.x) % gm;
  let tn = pid % (8u * nwg.x) / gm;
  let sr = sg / 2u * ${16 * fm}u;
  let sc = sg % 2u * ${16 * fn}u;
  let ar = sr * ${ROWH}u;
${L.join('\n')}
}`;
}

/** Words of the pack kernel: R, C (the operand), offset, strides (rows, columns), Cp, Rp (the padded copy). */
export const PACK_HALF_WORDS = 7;

/**
 * Packs a float16 operand [R, C] (element (r, c) at offset + r·s0 + c·s1, binary16 in 2-byte storage) into a
 * row-major [Rp, Cp] copy, zero outside the operand, two halves to a word: one invocation per word (coalesced
 * reads along a contiguous row).
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
  if (w >= cw * u32(p(6u))) { return; }
  let r = i32(w / cw); let c0 = i32(w % cw) * 2;
  let R = p(0u); let C = p(1u); let off = p(2u); let s0 = p(3u); let s1 = p(4u);
  var word = 0u;
  if (r < R) {
    if (c0 < C) { word = half_at(off + r * s0 + c0 * s1); }
    if (c0 + 1 < C) { word = word | (half_at(off + r * s0 + (c0 + 1) * s1) << 16u); }
  }
  packed[w] = word;
}`;
}

/** Crops the padded C [Mp, Np] (f32) into the product's output at offset param 5: one invocation per element. */
export function cropHalfProductWgsl(): string {
  return `${paramsPrelude(F16_MATMUL_WORDS)}
@group(0) @binding(1) var<storage, read> c: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_id) lid: vec3u) {
  let i = (wid.y * nwg.x + wid.x) * 256u + lid.x;
  let N = u32(p(1u));
  if (i >= u32(p(0u)) * N) { return; }
  out[u32(p(5u)) + i] = c[(i / N) * u32(p(11u)) + i % N];
}`;
}
