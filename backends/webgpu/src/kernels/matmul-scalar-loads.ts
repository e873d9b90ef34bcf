/**
 * Scalar global loads of the 64-multiple GEMM tiles (kernels/matmul.ts matmulVec4Wgsl without vec4 loads: a
 * transposed view, K or N not a multiple of 4, an offset or row stride that is not a whole vec4), prefetched into
 * registers one slab ahead as the vec4 loads are (BM·BK/256 and BK·BN/256 floats per invocation).
 *
 * Coalescing: which way the invocations walk a slab follows which stride is 1, a uniform condition on the params.
 * A read along M (sam = 1: a transposed A, Aᵀ·g) or B along N (sbn = 1) puts 32 consecutive invocations on 32
 * consecutive elements of one k; A along K (sak = 1, the default) or B along K (sbk = 1: a transposed B, q·kᵀ)
 * puts them on runs of RK = 8 consecutive k (one 32-byte sector) of 4 consecutive rows (columns).
 *
 * Workgroup memory: As k-major, vec4 of 4 rows, Bs k-major, vec4 of 4 columns, as the vec4 loads store them, each
 * k's row padded by one vec4 (a pitch of BM/4 + 1 and BN/4 + 1 vec4): the float (m, k) is at word k·(BM + 4) + m,
 * in bank (4k + m) mod 32, so a warp's stores hit 32 banks in both walks (32 consecutive m of one k, or 8
 * consecutive k of 4 rows m0..m0 + 3, m0 a multiple of 4); unpadded, a run along K would hit one bank 8 times.
 * The reads of the product loop (consecutive vec4 of one k) are unchanged by the padding.
 */
import { InvalidArgumentError } from '@polyhal/hal';
import type { Tile } from './matmul.js';

/** Consecutive k per row (column) of a run along K: one 32-byte sector. */
const RK = 8;

/** The WGSL pieces of the scalar loads of tile t, spliced into matmulVec4Wgsl. */
export interface ScalarLoads {
  /** Module-scope helpers (after the BM, BN, BK constants). */
  readonly fns: string;
  /** Row pitch of As and Bs in vec4 (one k's BM/4 or BN/4 vec4, plus the padding). */
  readonly aPitch: number;
  readonly bPitch: number;
  /** Declarations in main after the prologue: the walk's conditions and the prefetch registers. */
  readonly decl: string;
  /** Loads the slab at k0 (a WGSL u32 expression) into the registers, zeros outside [0, M)×[kBegin, kEnd)×[0, N). */
  load(k0: string): string;
  /** Stores the registers into As and Bs. */
  readonly store: string;
}

/** The scalar loads of a tile of 256 invocations whose BM and BN are multiples of 64 and BK of RK. */
export function scalarLoads(t: Tile): ScalarLoads {
  if (t.bm % 64 !== 0 || t.bn % 64 !== 0 || t.bk % RK !== 0)
    throw new InvalidArgumentError(`matmul: scalar loads need a tile of 64-multiples and BK a multiple of ${RK}`);
  // whole rounds of 256 invocations (BM·BK and BK·BN are multiples of 512): no element past the slab
  const la = (t.bm * t.bk) / 256;
  const lb = (t.bk * t.bn) / 256;
  const aPitch = t.bm / 4 + 1;
  const bPitch = t.bn / 4 + 1;
  const fns = `const RK = ${RK}u;
// The (m, k) of element e of the A slab: along M (32 consecutive m of one k) or along K (runs of RK k of a row).
fn slotA(e: u32, alongM: bool) -> vec2u {
  if (alongM) { return vec2u(e % BM, e / BM); }
  let c = e / RK;
  return vec2u(c % BM, c / BM * RK + e % RK);
}
// The (k, n) of element e of the B slab: along N (32 consecutive n of one k) or along K (runs of RK k of a column).
fn slotB(e: u32, alongK: bool) -> vec2u {
  if (alongK) { let c = e / RK; return vec2u(c / BN * RK + e % RK, c % BN); }
  return vec2u(e / BN, e % BN);
}`;
  const decl = `let aAlongM = sam == 1 && sak != 1; let bAlongK = sbk == 1 && sbn != 1;
  var ra: array<f32, ${la}>; var rb: array<f32, ${lb}>;`;
  const load = (k0: string): string => `for (var q = 0u; q < ${la}u; q++) {
      let e = li + q * 256u; let s = slotA(e, aAlongM);
      let gm = row0 + s.x; let gk = ${k0} + s.y;
      ra[q] = 0.0;
      if (gm < M && gk < kEnd) { ra[q] = a[offA + i32(gm) * sam + i32(gk) * sak]; }
    }
    for (var q = 0u; q < ${lb}u; q++) {
      let e = li + q * 256u; let s = slotB(e, bAlongK);
      let gk = ${k0} + s.x; let gn = col0 + s.y;
      rb[q] = 0.0;
      if (gk < kEnd && gn < N) { rb[q] = b[offB + i32(gk) * sbk + i32(gn) * sbn]; }
    }`;
  const store = `for (var q = 0u; q < ${la}u; q++) {
      let s = slotA(li + q * 256u, aAlongM); As[s.y * ${aPitch}u + s.x / 4u][s.x % 4u] = ra[q];
    }
    for (var q = 0u; q < ${lb}u; q++) {
      let s = slotB(li + q * 256u, bAlongK); Bs[s.x * ${bPitch}u + s.y / 4u][s.y % 4u] = rb[q];
    }`;
  return { fns, aPitch, bPitch, decl, load, store };
}
