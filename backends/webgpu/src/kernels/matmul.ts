/**
 * WGSL batched GEMM, tiled in workgroup memory with register blocking (Volkov & Demmel): a workgroup
 * computes a BM×BN tile of C, each invocation TM×TN outputs held in registers; K advances in BK-deep
 * slabs of A and B staged in workgroup memory. Operands are strided (transposes are strides) and the
 * batch dims broadcast. The tile shape is chosen per problem size (`chooseTile`).
 *
 * Params: 0 M · 1 N · 2 K · 3 batch · 4 offset A · 5 offset B · 6 sam · 7 sak · 8 sbk · 9 sbn ·
 * 10.. batch shape, batch strides of A, batch strides of B · last: split-K count S.
 *
 * Split-K: with S > 1, workgroup z = batch item · S + split, and split s sums the
 * K range [s·kc, (s+1)·kc) (kc a multiple of BK) into its own [M, N] slice of a partial buffer;
 * `splitKSumWgsl` then adds the S slices. This gives a problem with few output tiles (1024² on a GPU
 * with 132 SMs) several workgroups per SM to hide memory latency.
 */
import { type ElementwiseStep, InvalidArgumentError } from '@polyhal/hal';
import { paramsPrelude } from '../layout.js';
import { type EpilogueWgsl, epilogued, epilogueWgsl } from './matmul-epilogue.js';
import { scalarLoads } from './matmul-scalar-loads.js';

/** Param words for R batch dimension slots; the split-K count is the last. */
export const matmulWords = (R: number): number => 11 + 3 * R;

/**
 * A GEMM's bias (matmul with a bias, hal/src/families/matmul/matmul-bias.ts) for the store: binding 4 and, after the
 * matmulWords(R) params, the bias view's offset and its strides along M and N (batch strides are 0).
 */
export function biasDecl(R: number): string {
  const w = matmulWords(R);
  return `@group(0) @binding(4) var<storage, read> bias: array<f32>;
fn biasAt(m: u32, n: u32) -> f32 { return bias[u32(p(${w}u) + i32(m) * p(${w + 1}u) + i32(n) * p(${w + 2}u))]; }`;
}

/** Params of a GEMM with (`bias`) or without a bias. */
export const gemmWords = (R: number, bias: boolean): number => matmulWords(R) + (bias ? 3 : 0);

/**
 * A GEMM's epilogue (matmul-epilogue.ts) after its params and bindings, or null for none: the register-block and
 * gemv kernels take one (not the tiled kernels: dispatch-matmul.ts); `keep`: its second output (matmul-epilogue.ts).
 */
export const gemmEpilogue = (
  R: number,
  bias: boolean,
  steps: readonly ElementwiseStep[] | null,
  keep: number | null = null,
): EpilogueWgsl | null => (steps?.length ? epilogueWgsl(steps, gemmWords(R, bias), bias ? 5 : 4, keep) : null);

/** The params prelude of a GEMM with its bias and epilogue. */
export const gemmPrelude = (R: number, bias: boolean, e: EpilogueWgsl | null): string =>
  `${paramsPrelude(gemmWords(R, bias) + (e?.words ?? 0))}${e ? e.decl : ''}\n`;
/** The params word of the split count S (after the shape, offsets, strides and the batch dims' words). */
export const splitWord = (R: number): number => 10 + 3 * R;

/** A GEMM tiling: each workgroup computes a bm×bn block of C over k-slices of bk; each thread a tm×tn sub-block. */
export interface Tile {
  /** Rows of C per workgroup. */
  bm: number;
  /** Columns of C per workgroup. */
  bn: number;
  /** Depth of each k-slice staged in workgroup memory. */
  bk: number;
  /** Rows of C per thread (the workgroup has (bm/tm)·(bn/tn) threads). */
  tm: number;
  /** Columns of C per thread. */
  tn: number;
}

/** The name of a tiling of TILES (the `matmulTile` option forces one). */
export type TileName =
  | 'small'
  | 'medium'
  | 'large'
  | 'large16'
  | 'wide'
  | 'wide8'
  | 'tall'
  | 'tall8'
  | 'medium8'
  | 'cols4'
  | 'cols16'
  | 'rows4'
  | 'rows16';
/** The tilings the GEMM kernel is compiled with, by name; chooseTile picks one per shape. */
export const TILES: Record<TileName, Tile> = {
  small: { bm: 32, bn: 32, bk: 16, tm: 2, tn: 2 },
  medium: { bm: 64, bn: 64, bk: 16, tm: 4, tn: 4 },
  large: { bm: 128, bn: 128, bk: 8, tm: 8, tn: 8 },
  large16: { bm: 128, bn: 128, bk: 16, tm: 8, tn: 8 },
  wide: { bm: 64, bn: 128, bk: 16, tm: 4, tn: 8 },
  wide8: { bm: 64, bn: 128, bk: 8, tm: 4, tn: 8 },
  tall: { bm: 128, bn: 64, bk: 16, tm: 8, tn: 4 },
  tall8: { bm: 128, bn: 64, bk: 8, tm: 8, tn: 4 },
  medium8: { bm: 64, bn: 64, bk: 8, tm: 4, tn: 4 },
  // Skinny outputs (conv backward, matrix-vector): tiles as narrow as the output, so that no
  // invocation computes columns (rows) that do not exist.
  cols4: { bm: 256, bn: 4, bk: 8, tm: 4, tn: 1 },
  cols16: { bm: 128, bn: 16, bk: 16, tm: 4, tn: 2 },
  rows4: { bm: 4, bn: 256, bk: 8, tm: 1, tn: 4 },
  rows16: { bm: 16, bn: 128, bk: 16, tm: 2, tn: 4 },
};

/**
 * True when both operands can be read as vec4 from global memory: row-major A (sak = 1) and B
 * (sbn = 1), with K, N, the row strides and the offsets multiples of 4.
 */
export function canLoadVec4(
  K: number,
  N: number,
  offA: number,
  offB: number,
  sam: number,
  sak: number,
  sbk: number,
  sbn: number,
): boolean {
  return (
    sak === 1 &&
    sbn === 1 &&
    K % 4 === 0 &&
    N % 4 === 0 &&
    offA % 4 === 0 &&
    offB % 4 === 0 &&
    sam % 4 === 0 &&
    sbk % 4 === 0
  );
}

/** A K from which chooseTile keeps 64×64 tiles on small outputs, for split-K to fill the GPU. */
export const LONG_K = 2048;

/**
 * Skinny outputs (N ≤ 16 or M ≤ 16 against ≥ 64 on the other side) get a tile of their width (the
 * backend runs N ≤ 4 and M ≤ 4 on the matrix-vector kernel instead, kernels/gemv.ts, unless a tile is forced).
 * An output with one side within 64 gets a tile 64 along that side. Otherwise the largest tile that still gives the
 * GPU enough workgroups to fill its cores. Measured on an H200
 * (benches/results/h200/webgpu-matmul.json): 128×128 wins from 2048 on (≥ 256 workgroups); at 1024, 128×64 (tall) beat
 * 64×128 in two sweeps out of two (18.7/17.7 vs 18.2/14.0 TFLOP/s); 64×64 below.
 */
export function chooseTile(m: number, n: number, batch: number, k = 0, minGroups = 256): Tile {
  const groups = (t: Tile): number => Math.ceil(m / t.bm) * Math.ceil(n / t.bn) * batch;
  if (n <= 16 && m >= 64) return n <= 4 ? TILES.cols4 : TILES.cols16;
  if (m <= 16 && n >= 64) return m <= 4 ? TILES.rows4 : TILES.rows16;
  // An output that one small (medium) tile covers gets that tile whatever the batch: a larger one would
  // compute rows and columns that do not exist (a batch of 17×17 attention scores on 128×128 tiles: 98%).
  if (m <= 32 && n <= 32) return TILES.small;
  if (m <= 64 && n <= 64) return TILES.medium;
  // A long K over an output of at least 128×128 with few tiles (a ViT-S weight gradient, [384 … 1536, 12608] ·
  // [12608, 384 … 1536]): 128×128 tiles split over K up to 32 ways (chooseSplitK). On an H100 a block's four took
  // 1.35 ms against 2.04 ms on 64×64 tiles with 2 to 8 splits (benches/results/h100/webgpu-matmul-long-k.json).
  if (k >= LONG_K && m >= 128 && n >= 128) return TILES.large;
  // One side within 64 (an attention head's width: P·V of [197, 197]·[197, 64]) gets a tile 64 along it: 128 would
  // compute columns (rows) that do not exist, half of them
  if (n <= 64 && groups(TILES.tall) >= minGroups / 2) return TILES.tall;
  if (m <= 64 && groups(TILES.wide) >= minGroups / 2) return TILES.wide;
  if (groups(TILES.large) >= minGroups) return TILES.large;
  if (groups(TILES.tall) >= minGroups / 2) return TILES.tall;
  // Fewer than minGroups / 4 workgroups of 64×64 leave a large GPU idle: the main job's ViT ([1088, 64]·[64, 192]:
  // 51 of them) on an H100 spent 413 µs of GPU time a step in its 18 unmerged products on 64×64 tiles, 311 on 32×32.
  // Not over a long K, where split-K fills the GPU (chooseSplitK) and a 32×32 tile's low reuse bounds each
  // workgroup: a ViT-S weight gradient [384, 12608]·[12608, 384] on 32×32 tiles with 2 splits took ~1.2 ms on an H100.
  if (groups(TILES.medium) >= minGroups / 4 || k >= LONG_K) return TILES.medium;
  return TILES.small;
}

/**
 * WGSL shared by both GEMM kernels: sizes and strides from the params, the batch item and split of
 * workgroup z (item · S + split), the split's K range [kBegin, kEnd) (a multiple of BK wide), and
 * the tile's first row and column.
 */
const prologue = (R: number): string => `let M = u32(p(0u)); let N = u32(p(1u)); let K = u32(p(2u));
  let sam = p(6u); let sak = p(7u); let sbk = p(8u); let sbn = p(9u);
  let S = u32(p(${splitWord(R)}u));
  ${batchOffsets(R, 'wid.z / S')}
  let kc = ((K + S - 1u) / S + BK - 1u) / BK * BK;
  let kBegin = min(K, (wid.z % S) * kc);
  let kEnd = min(K, kBegin + kc);
  let row0 = wid.y * BM;
  let col0 = wid.x * BN;`;

/**
 * Split-K count: 1 unless the output has fewer than `minGroups` workgroups of tile t; then the
 * smallest power of two (≤ 8) that reaches minGroups, keeping each split at least 256 deep in K. An output of
 * fewer than 16 workgroups (a weight gradient of a small layer: [64, 1088]·[1088, 64], one 64×64 tile) is bound
 * by each workgroup's walk along K, not by throughput: there up to 32 splits, each at least 64 deep (the main
 * job's ViT on an H100: those products took ~25–60 µs each with 4 splits of 272).
 * Measured on an H200 (benches/results/h200/webgpu-matmul.json): neutral at 1024² (tall 128×64: 24.5
 * TFLOP/s split 2 or not; large 128×128: 17.0 unsplit, 25.5 split 2); it matters most for small
 * outputs with a long K (e.g. 64×64·8192: 1 workgroup unsplit, 8 split).
 */
export function chooseSplitK(m: number, n: number, k: number, batch: number, t: Tile, minGroups = 256): number {
  const groups = Math.ceil(m / t.bm) * Math.ceil(n / t.bn) * batch;
  // 128×128 tiles over a long K (chooseTile): up to 32 splits toward twice minGroups (on an H100, fc1's weight
  // gradient [1536, 12608]·[12608, 384], 36 tiles: 0.42 ms split 16, 0.48 split 8)
  const long = k >= LONG_K && t.bm === 128 && t.bn === 128 && groups < minGroups;
  const [most, depth, target] = long
    ? [32, 256, 2 * minGroups]
    : groups < 16
      ? [32, 64, minGroups]
      : [8, 256, minGroups];
  let s = 1;
  while (s < most && groups * s < target && k / (s * 2) >= depth) s *= 2;
  return s;
}

/** WGSL that sets offA/offB for batch item `item` (broadcast batch dims through strides). */
export function batchOffsets(R: number, item = 'wid.z'): string {
  return `var offA = p(4u); var offB = p(5u);
  {
    var rem = i32(${item});
    for (var d = ${R - 1}u; ; d--) {
      let dim = p(10u + d);
      if (dim > 1) { let q = rem % dim; rem = rem / dim; offA += q * p(${10 + R}u + d);
        offB += q * p(${10 + 2 * R}u + d); }
      if (d == 0u) { break; }
    }
  }`;
}

/**
 * Tiles of 64×64 and 128×128 with 16×16 invocations: slabs live in workgroup memory as vec4 (4 rows
 * of A or 4 columns of B), each invocation owns 4-row × 4-column blocks spaced 64 apart, so the
 * invocations of a row read consecutive vec4s (no bank conflicts) and write C coalesced; the
 * accumulators are vec4 along columns. Without vec4 loads (`vecLoads` false), scalar loads walking the operands
 * along their stride-1 dims, prefetched a slab ahead as the vec4 loads are (kernels/matmul-scalar-loads.ts).
 *
 * Measured on an H200 and not kept (benches/results/h200/webgpu-matmul.json): double-buffered slabs (one barrier per
 * slab; slower twice), grouped workgroup order for L2 (42.3 vs 45.4 TFLOP/s at 4096), the BK loop
 * written out (equal: the driver unrolls it), vec4 C stores (slower), 128×256 and 256×128 tiles, and
 * 128-invocation tiles with 8×8 outputs each (64×128: 41.7, 128×64: 34.6 TFLOP/s at 4096), and
 * register prefetch of 0 or 2 slabs instead of 1 (36.1 and 37.1 vs 45.3 TFLOP/s at 4096).
 */
export function matmulVec4Wgsl(t: Tile, vecLoads: boolean, R: number, bias = false): string {
  const gm = t.bm / 64;
  const gn = t.bn / 64;
  const am = t.bm / 4;
  const bn4 = t.bn / 4;
  const fma: string[] = [];
  for (let g = 0; g < gm; g++) {
    for (let r = 0; r < 4; r++) {
      for (let h = 0; h < gn; h++) fma.push(`acc[${(g * 4 + r) * gn + h}] += av${g}[${r}] * bv${h};`);
    }
  }
  const sl = vecLoads ? null : scalarLoads(t);
  const ap = sl?.aPitch ?? am;
  const bp = sl?.bPitch ?? bn4;
  // vec4 global loads, prefetched into registers one slab ahead (the next slab's loads are in flight
  // while the current slab is multiplied): A rows give 4 consecutive k (scattered into the k-major
  // slab), B rows give 4 consecutive n (stored as is).
  const la = Math.ceil((t.bm * t.bk) / 4 / 256);
  const lb = Math.ceil((t.bk * t.bn) / 4 / 256);
  const LOAD_GLOBAL = (k0: string): string => `for (var q = 0u; q < ${la}u; q++) {
      let e = li + q * 256u;
      let m = e / (BK / 4u); let kq = (e % (BK / 4u)) * 4u;
      let gm = row0 + m; let gk = ${k0} + kq;
      ra[q] = vec4<f32>();
      if (e < BM * BK / 4u && gm < M && gk < kEnd) { ra[q] = a[u32(offA + i32(gm) * sam + i32(gk)) / 4u]; }
    }
    for (var q = 0u; q < ${lb}u; q++) {
      let e = li + q * 256u;
      let k = e / (BN / 4u); let nq = e % (BN / 4u);
      let gk = ${k0} + k; let gn = col0 + nq * 4u;
      rb[q] = vec4<f32>();
      if (e < BK * BN / 4u && gk < kEnd && gn < N) { rb[q] = b[u32(offB + i32(gk) * sbk + i32(gn)) / 4u]; }
    }`;
  const STORE_SHARED = `for (var q = 0u; q < ${la}u; q++) {
      let e = li + q * 256u;
      if (e < BM * BK / 4u) {
        let m = e / (BK / 4u); let kq = (e % (BK / 4u)) * 4u;
        let slot = m / 4u; let lane = m % 4u; let v = ra[q];
        As[kq * ${am}u + slot][lane] = v.x;
        As[(kq + 1u) * ${am}u + slot][lane] = v.y;
        As[(kq + 2u) * ${am}u + slot][lane] = v.z;
        As[(kq + 3u) * ${am}u + slot][lane] = v.w;
      }
    }
    for (var q = 0u; q < ${lb}u; q++) {
      let e = li + q * 256u;
      if (e < BK * BN / 4u) { Bs[(e / (BN / 4u)) * ${bn4}u + e % (BN / 4u)] = rb[q]; }
    }`;
  const COMPUTE = `for (var k = 0u; k < BK; k++) {
      ${Array.from({ length: gm }, (_, g) => `let av${g} = As[k * ${ap}u + ${g * 16}u + lid.y];`).join(' ')}
      ${Array.from({ length: gn }, (_, h) => `let bv${h} = Bs[k * ${bp}u + ${h * 16}u + lid.x];`).join(' ')}
      ${fma.join('\n      ')}
    }`;
  const elem = vecLoads ? 'vec4<f32>' : 'f32';
  return `${paramsPrelude(gemmWords(R, bias))}
@group(0) @binding(1) var<storage, read> a: array<${elem}>;
@group(0) @binding(2) var<storage, read> b: array<${elem}>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;
${bias ? biasDecl(R) : ''}
const BM = ${t.bm}u; const BN = ${t.bn}u; const BK = ${t.bk}u;${sl ? `\n${sl.fns}` : ''}
var<workgroup> As: array<vec4<f32>, ${t.bk * ap}>;
var<workgroup> Bs: array<vec4<f32>, ${t.bk * bp}>;
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u,
    @builtin(local_invocation_index) li: u32) {
  ${prologue(R)}
  var acc: array<vec4<f32>, ${gm * 4 * gn}>;
  ${sl ? sl.decl : `var ra: array<vec4<f32>, ${la}>; var rb: array<vec4<f32>, ${lb}>;`}
  ${sl ? sl.load('kBegin') : LOAD_GLOBAL('kBegin')}
  for (var k0 = kBegin; k0 < kEnd; k0 += BK) {
    ${sl ? sl.store : STORE_SHARED}
    workgroupBarrier();
    if (k0 + BK < kEnd) { ${sl ? sl.load('(k0 + BK)') : LOAD_GLOBAL('(k0 + BK)')} }
    ${COMPUTE}
    workgroupBarrier();
  }
  let cb = wid.z * M * N;
  for (var g = 0u; g < ${gm}u; g++) {
    for (var r = 0u; r < 4u; r++) {
      let gm = row0 + g * 64u + lid.y * 4u + r;
      if (gm >= M) { continue; }
      for (var h = 0u; h < ${gn}u; h++) {
        let v = acc[(g * 4u + r) * ${gn}u + h];
        let gn0 = col0 + h * 64u + lid.x * 4u;
        for (var q = 0u; q < 4u; q++) {
          if (gn0 + q < N) { c[cb + gm * N + gn0 + q] = v[q]${bias ? ' + biasAt(gm, gn0 + q)' : ''}; }
        }
      }
    }
  }
}`;
}

/**
 * R: batch dimension slots (rankSlots of the coalesced batch shape). `epi` (and `keep`): an elementwise epilogue in
 * the store (kernels/matmul-epilogue.ts), on the tiles that are not multiples of 64 only (the scalar kernel below:
 * the small products of the main job's ViT on a large GPU); the vec4 kernels take none (dispatch-matmul.ts).
 */
export function matmulWgsl(
  t: Tile,
  vecLoads: boolean,
  R: number,
  bias = false,
  epi: readonly ElementwiseStep[] | null = null,
  keep: number | null = null,
): string {
  if (t.bm % 64 === 0 && t.bn % 64 === 0) {
    if (epi?.length) throw new InvalidArgumentError(`matmul: the ${t.bm}×${t.bn} tile takes no epilogue`);
    return matmulVec4Wgsl(t, vecLoads, R, bias);
  }
  const wx = t.bn / t.tn;
  const wy = t.bm / t.tm;
  const threads = wx * wy;
  const e = gemmEpilogue(R, bias, epi, keep);
  return `${gemmPrelude(R, bias, e)}
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;
${bias ? biasDecl(R) : ''}
const BM = ${t.bm}u; const BN = ${t.bn}u; const BK = ${t.bk}u; const TM = ${t.tm}u; const TN = ${t.tn}u;
var<workgroup> As: array<f32, ${t.bk * t.bm}>;
var<workgroup> Bs: array<f32, ${t.bk * t.bn}>;
@compute @workgroup_size(${wx}, ${wy})
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u,
    @builtin(local_invocation_index) li: u32) {
  ${prologue(R)}
  var acc: array<f32, ${t.tm * t.tn}>;
  for (var k0 = kBegin; k0 < kEnd; k0 += BK) {
    for (var e = li; e < BM * BK; e += ${threads}u) {
      let m = e / BK; let k = e % BK;
      let gm = row0 + m; let gk = k0 + k;
      var v = 0.0;
      if (gm < M && gk < kEnd) { v = a[offA + i32(gm) * sam + i32(gk) * sak]; }
      As[k * BM + m] = v;
    }
    for (var e = li; e < BK * BN; e += ${threads}u) {
      let k = e / BN; let n = e % BN;
      let gk = k0 + k; let gn = col0 + n;
      var v = 0.0;
      if (gk < kEnd && gn < N) { v = b[offB + i32(gk) * sbk + i32(gn) * sbn]; }
      Bs[k * BN + n] = v;
    }
    workgroupBarrier();
    for (var k = 0u; k < BK; k++) {
      var af: array<f32, ${t.tm}>;
      var bf: array<f32, ${t.tn}>;
      for (var i = 0u; i < TM; i++) { af[i] = As[k * BM + lid.y * TM + i]; }
      for (var j = 0u; j < TN; j++) { bf[j] = Bs[k * BN + lid.x * TN + j]; }
      for (var i = 0u; i < TM; i++) {
        for (var j = 0u; j < TN; j++) { acc[i * TN + j] += af[i] * bf[j]; }
      }
    }
    workgroupBarrier();
  }
  let cb = wid.z * M * N;
  for (var i = 0u; i < TM; i++) {
    let gm = row0 + lid.y * TM + i;
    if (gm >= M) { break; }
    for (var j = 0u; j < TN; j++) {
      let gn = col0 + lid.x * TN + j;
      if (gn < N) {
        c[cb + gm * N + gn] = ${epilogued(`acc[i * TN + j]${bias ? ' + biasAt(gm, gn)' : ''}`, 'cb + gm * N + gn', e)};
      }
    }
  }
}`;
}
