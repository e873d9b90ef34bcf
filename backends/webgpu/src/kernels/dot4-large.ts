/**
 * dot4I8Packed GEMM for large int8 products on packed A [Mp, Kp] and Bᵀ [Np, Kp] (kernels/matmul-int.ts
 * packs them; Mp, Np multiples of 64, Kp of 64): a 128×128 tile per workgroup of 16×16 invocations, 8×8
 * outputs each held in registers (Volkov & Demmel's register blocking, as the float32 GEMM's `large` tile).
 * Each 64-deep slab (16 words of four int8) of A and B is staged in workgroup memory as vec4<u32> (16 KiB
 * in all, WebGPU's default limit), swizzled so that the rows a subgroup reads in one step fall in distinct
 * banks, and the next slab is prefetched into registers while this one is multiplied; one step reads
 * 8 + 8 vec4 and issues 256 dot4I8Packed (1,024 multiply-adds), against 8 reads per 64 for the 4×4
 * kernel. Rows past Mp or Np (half of a last tile of a 64-padded operand) load zeros and store nothing.
 * The code is generated unrolled: every accumulator is a named register, chained through its four dot
 * products (acc = dot4I8Packed(x, y) + acc, measured faster than one sum of four), every index a
 * compile-time offset from the invocation's base. Params and the `rescale` store as kernels/matmul-int.ts.
 * Measured on an NVIDIA H100 (benches/results/h100/webgpu-int8-matmul.json): 69–74 TOPS at 4096 and 8192, 1.54–1.67×
 * the float32 GEMM; the 64-tile kernel 48–53.
 */
import { paramsPrelude } from '../layout.js';
import { INT_MATMUL_WORDS, PACK_ROWS, RESCALE_WORDS, storeWgsl } from './matmul-int.js';

/** The tile side: a workgroup computes TILE×TILE outputs. */
export const DOT4_LARGE_TILE = 128;
const T = 8; // outputs per invocation along each side

export function dot4LargeWgsl(rescale = false): string {
  const acc = (i: number, j: number): string => `c${i}_${j}`;
  const lines: string[] = [];
  for (let i = 0; i < T; i++)
    lines.push(`  ${Array.from({ length: T }, (_, j) => `var ${acc(i, j)} = 0i;`).join(' ')}`);
  const step: string[] = [];
  for (let i = 0; i < T; i++) step.push(`      let a${i} = sa[ra + ${64 * i}u + qa];`);
  for (let j = 0; j < T; j++) step.push(`      let b${j} = sb[rb + ${64 * j}u + qb];`);
  for (let i = 0; i < T; i++)
    for (let j = 0; j < T; j++)
      for (const c of 'xyzw') step.push(`      ${acc(i, j)} = dot4I8Packed(a${i}.${c}, b${j}.${c}) + ${acc(i, j)};`);
  const stores: string[] = [];
  for (let i = 0; i < T; i++)
    for (let j = 0; j < T; j++)
      stores.push(
        `  if (r0 + ${16 * i} < M && c0 + ${16 * j} < N) ` +
          `{ store(p(5u) + (r0 + ${16 * i}) * N + c0 + ${16 * j}, c0 + ${16 * j}, ${acc(i, j)}); }`,
      );
  return `${paramsPrelude(rescale ? RESCALE_WORDS : INT_MATMUL_WORDS)}
@group(0) @binding(1) var<storage, read> a: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> b: array<vec4<u32>>;
${storeWgsl(rescale)}
var<workgroup> sa: array<vec4<u32>, 512>;
var<workgroup> sb: array<vec4<u32>, 512>;
var<private> pa: array<vec4<u32>, 2>;
var<private> pb: array<vec4<u32>, 2>;
// The next slab's words, into registers: 2 vec4 of A and of B per invocation (zeros past the padded rows).
fn prefetch(t: u32, wg: vec3u, k: u32, kv: u32, mp: u32, np: u32) {
  for (var e = 0u; e < 2u; e++) {
    let w = e * 256u + t;
    let ga = wg.y * 128u + w / 4u;
    let gb = wg.x * 128u + w / 4u;
    pa[e] = vec4<u32>();
    pb[e] = vec4<u32>();
    if (ga < mp) { pa[e] = a[ga * kv + k + w % 4u]; }
    if (gb < np) { pb[e] = b[gb * kv + k + w % 4u]; }
  }
}
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) l: vec3u,
        @builtin(local_invocation_index) t: u32) {
  let kv = u32(p(10u)) / 4u; // vec4 per packed row
  let mp = (u32(p(0u)) + ${PACK_ROWS - 1}u) & ~${PACK_ROWS - 1}u;
  let np = (u32(p(1u)) + ${PACK_ROWS - 1}u) & ~${PACK_ROWS - 1}u;
  // Row r keeps its vec4 v at r·4 + (v ^ ((r >> 1) & 3)): the 8 rows a quarter-subgroup reads in one
  // 16-byte step then cover all 32 banks. Rows 16 apart share the swizzle.
  let ra = l.y * 4u;
  let rb = l.x * 4u;
  let fa = (l.y >> 1u) & 3u;
  let fb = (l.x >> 1u) & 3u;
${lines.join('\n')}
  prefetch(t, wg, 0u, kv, mp, np);
  for (var k = 0u; k < kv; k += 4u) {
    for (var e = 0u; e < 2u; e++) {
      let w = e * 256u + t;
      let row = w / 4u;
      let at = row * 4u + ((w % 4u) ^ ((row >> 1u) & 3u));
      sa[at] = pa[e];
      sb[at] = pb[e];
    }
    workgroupBarrier();
    if (k + 4u < kv) { prefetch(t, wg, k + 4u, kv, mp, np); }
    for (var q = 0u; q < 4u; q++) {
      let qa = q ^ fa;
      let qb = q ^ fb;
${step.join('\n')}
    }
    workgroupBarrier();
  }
  let M = p(0u); let N = p(1u);
  let r0 = i32(wg.y * 128u + l.y); let c0 = i32(wg.x * 128u + l.x);
${stores.join('\n')}
}`;
}
