/**
 * WGSL softmax over the last axis of a row-major float32 array for short rows (n ≤ SOFTMAX_SHORT_MAX: attention
 * scores, e.g. a ViT-S's [64, 6, 197, 197]); the same op as kernels/softmax.ts (hal/src/ops/array-ops.ts: exp(x −
 * max) / Σ exp(x − max), a NaN in a row makes the row NaN), which longer rows keep.
 *
 * Layout: a workgroup of SOFTMAX_SHORT_THREADS (128) invocations holds 128 / G rows; a group of G invocations (4, 8,
 * 16 or 32: softmaxShortShape) takes one row, and invocation `lane` holds the row's elements lane, lane + G, …,
 * lane + (E − 1)·G in registers (E = ⌈n / G⌉ unrolled loads, a constant of the pipeline), so adjacent invocations
 * load adjacent elements (coalesced) and the row is read once from memory and written once. The kernel of long
 * rows reads it three times (maximum, Σ exp, write) and reduces it through two trees (sixteen barriers in all).
 * Timed by benches/probes/webgpu-softmax.ts (both kernels on the same rows): on lavapipe, [8, 6, 197, 197] took
 * 44 ms against the long-row kernel's 195 ms, [256, 1024] 8.0 against 12.0 ms (GPU timestamps, a loaded 2-core host).
 *
 * Reduction, without subgroup builtins (it runs alike on every adapter, lavapipe included) and with two barriers:
 * each invocation reduces its E values as an unrolled binary tree, stores that partial in workgroup memory (one
 * array for the maxima, one for the sums, so neither is overwritten while read), and after the barrier every
 * invocation of a group reads the G partials of its row (the same addresses: broadcasts) and reduces them as a
 * binary tree itself, so no invocation waits on another's second step. As each invocation reduces all G partials, a
 * row costs about n + G² operations: G is the smallest power of two from 4 with G² ≥ n, so E ≤ G and the partials
 * cost no more than the elements (a row of 197: G = 16, E = 13, eight rows per workgroup; 1024: G = 32, E = 32).
 * Slots past n load the row's last element (a maximum unchanged) and add 0 to the sum; rows past the last of the
 * grid load the last row and write nothing.
 *
 * Accuracy: the same expressions as the composite's kernels (WGSL exp and division), each Σ exp a tree of depth
 * log2(E) + log2(G) ≤ 10 over terms in [0, 1] (≤ 10·u of the sum, u = 2^-24, against the kernel of long rows'
 * pairwise sums): within the op's wgsl tolerance (abs 1e-6, rel 1e-5). NaN: the maximum keeps a NaN (max_nan), and
 * a row whose maximum is NaN or ±∞ is written NaN throughout, decided on the bits (as kernels/softmax.ts).
 *
 * Params: those of kernels/softmax.ts (0 rows · 1 n · 2 x offset · 3 zero, a NaN the compiler cannot fold).
 */
import { paramsPrelude } from '../layout.js';
import { SOFTMAX_WORDS } from './softmax.js';

/** Rows up to this length take this kernel. */
export const SOFTMAX_SHORT_MAX = 1024;
/** Invocations per workgroup (a power of two, a multiple of every group size). */
export const SOFTMAX_SHORT_THREADS = 128;

/** Invocations per row `group` (a power of two, 4 to 32) and elements per invocation `per` for rows of n. */
export function softmaxShortShape(n: number): { group: number; per: number } {
  let group = 4;
  while (group < 32 && group * group < n) group *= 2;
  return { group, per: Math.max(1, Math.ceil(n / group)) };
}

/** The binary tree of `f` over terms[lo, hi) (WGSL). */
function tree(terms: readonly string[], f: (a: string, b: string) => string, lo = 0, hi = terms.length): string {
  if (hi - lo === 1) return terms[lo]!;
  const mid = (lo + hi) >> 1;
  return f(tree(terms, f, lo, mid), tree(terms, f, mid, hi));
}

/** The kernel for groups of `group` invocations per row, `per` elements each (softmaxShortShape). */
export function softmaxShortWgsl(group: number, per: number): string {
  const G = group;
  const T = SOFTMAX_SHORT_THREADS;
  const js = Array.from({ length: per }, (_, j) => j);
  const ks = Array.from({ length: G }, (_, k) => k);
  const maxOf = (a: string, b: string): string => `max_nan(${a}, ${b})`;
  const sumOf = (a: string, b: string): string => `(${a} + ${b})`;
  return `${paramsPrelude(SOFTMAX_WORDS)}
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
var<workgroup> maxes: array<f32, ${T}>;
var<workgroup> sums: array<f32, ${T}>;
/** max that keeps a NaN (WGSL's max may drop it). */
fn max_nan(a: f32, b: f32) -> f32 { return select(select(max(a, b), b, is_nan(b)), a, is_nan(a)); }
@compute @workgroup_size(${T}) fn main(@builtin(workgroup_id) wid: vec3u,
    @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let rows = u32(p(0u));
  let n = u32(p(1u));
  let lane = lid.x % ${G}u;
  let at = lid.x - lane; // the group's first slot in workgroup memory
  let r = (wid.y * nwg.x + wid.x) * ${T / G}u + lid.x / ${G}u;
  let row = min(r, rows - 1u);
  let base = u32(p(2u)) + row * n;
  let last = n - 1u;
  ${js.map((j) => `let v${j} = x[base + min(lane + ${j * G}u, last)];`).join('\n  ')}
  maxes[lid.x] = ${tree(
    js.map((j) => `v${j}`),
    maxOf,
  )};
  workgroupBarrier();
  let mx = ${tree(
    ks.map((k) => `maxes[at + ${k}u]`),
    maxOf,
  )};
  ${js.map((j) => `let e${j} = select(0.0, exp(v${j} - mx), lane + ${j * G}u < n);`).join('\n  ')}
  sums[lid.x] = ${tree(
    js.map((j) => `e${j}`),
    sumOf,
  )};
  workgroupBarrier();
  let total = ${tree(
    ks.map((k) => `sums[at + ${k}u]`),
    sumOf,
  )};
  if (r >= rows) { return; }
  let out = row * n;
  // a row holding NaN, or whose maximum is ±∞, is NaN throughout (x − max is NaN somewhere, as in the composite);
  // decided on the bits, as a compiler that assumes finite math may fold exp(NaN)
  if ((bitcast<u32>(mx) & 0x7fffffffu) >= 0x7f800000u) {
    let nan = bitcast<f32>(0x7fc00000u ^ u32(p(3u)));
    ${js.map((j) => `if (lane + ${j * G}u < n) { y[out + lane + ${j * G}u] = nan; }`).join('\n    ')}
    return;
  }
  ${js.map((j) => `if (lane + ${j * G}u < n) { y[out + lane + ${j * G}u] = e${j} / total; }`).join('\n  ')}
}`;
}
