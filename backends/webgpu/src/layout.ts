/**
 * Shapes and strides for the WGSL kernels: dimension coalescing (so most views reach the shader as
 * rank 1 or 2), and the packing of kernel parameters into a uniform block of i32 words (read in WGSL
 * with `p(i)`; float parameters are stored as their bit patterns).
 */
/**
 * Dimension slots in kernel params: views of up to MIN_RANK_SLOTS non-mergeable dimensions share one
 * pipeline per kernel; a view of higher rank gets a pipeline specialized for its rank (the params are
 * sized by it), so any rank runs.
 */
export const MIN_RANK_SLOTS = 6;
export function rankSlots(rank: number): number {
  return Math.max(MIN_RANK_SLOTS, rank);
}

export { coalesce } from '@polyhal/hal';

const f32 = new Float32Array(1);
const i32 = new Int32Array(f32.buffer);
/** The i32 word holding a float32's bits. */
export function floatBits(v: number): number {
  f32[0] = v;
  return i32[0]!;
}

/** WGSL prelude that reads parameter word i of the uniform block. */
export function paramsPrelude(words: number): string {
  const vecs = Math.max(1, Math.ceil(words / 4));
  return `struct Params { v: array<vec4<i32>, ${vecs}> }
@group(0) @binding(0) var<uniform> params: Params;
fn p(i: u32) -> i32 { return params.v[i / 4u][i % 4u]; }
fn pf(i: u32) -> f32 { return bitcast<f32>(p(i)); }
fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
`;
}

/** WGSL: the flat invocation index for 1-D work split over a 2-D grid of 256-wide workgroups. */
export const FLAT_INDEX = `let idx = (wid.y * nwg.x + wid.x) * 256u + lid.x;`;
export const FLAT_ARGS =
  `@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, ` +
  `@builtin(local_invocation_id) lid: vec3u`;

/** Workgroup grid for `count` workgroups (x ≤ 65535). */
export function grid(count: number): [number, number] {
  if (count <= 65535) return [Math.max(count, 1), 1];
  const y = Math.ceil(count / 65535);
  return [Math.ceil(count / y), y];
}

/**
 * WGSL that computes, for flat output index `i` over a coalesced shape (params from word `shapeAt`,
 * `R` dims), the element offset of operand k (strides at `stridesAt[k]`, offset word `offsetAt[k]`).
 */
export function stridedOffsets(
  names: string[],
  shapeAt: number,
  stridesAt: number[],
  offsetAt: number[],
  R: number,
): string {
  const decl = names.map((n, k) => `var ${n} = p(${offsetAt[k]}u);`).join(' ');
  const upd = names.map((n, k) => `${n} += c * p(${stridesAt[k]}u + d);`).join(' ');
  return `${decl}
  var rem = i32(i);
  for (var d = ${R - 1}u; ; d--) {
    let dim = p(${shapeAt}u + d);
    if (dim > 1) { let c = rem % dim; rem = rem / dim; ${upd} }
    if (d == 0u) { break; }
  }`;
}
