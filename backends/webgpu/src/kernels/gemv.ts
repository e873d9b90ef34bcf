/**
 * WGSL matrix-vector products for skinny matmuls, batched like the GEMM (same params, split count
 * ignored). 'rows' (N ≤ 4): each invocation computes one row of C, all N columns, over the whole K;
 * 'cols' (M ≤ 4): each invocation computes one column, all M rows (the invocations of a workgroup
 * read consecutive columns of B, and the same elements of A). No workgroup memory and no barriers:
 * a tiled GEMM on such shapes computes mostly padding and synchronizes for little work.
 * a: [M, K], b: [K, N] (strided) → c: [M, N] per batch item, float32; `width` is N ('rows') or M ('cols');
 * with `bias`, c = a·b + bias (the GEMM's bias, kernels/matmul.ts biasDecl).
 * `split` (no bias nor epilogue): split-K as the GEMM's — workgroup z is item · S + split, each split sums its own
 * K range into partials [batch, S, M, N] (kernels/splitk.ts adds them): a long K over few rows or columns (a patch
 * embedding's weight gradient [384, 12544]·[12544, 4]) walked by one invocation each took 4.4 ms on an H100.
 */
import type { ElementwiseStep } from '@polyhal/hal';
import { FLAT_ARGS, FLAT_INDEX } from '../layout.js';
import { batchOffsets, biasDecl, gemmEpilogue, gemmPrelude, splitWord } from './matmul.js';
import { epilogued } from './matmul-epilogue.js';

export function gemvWgsl(
  mode: 'rows' | 'cols',
  width: number,
  R: number,
  bias = false,
  epi: readonly ElementwiseStep[] | null = null,
  keep: number | null = null,
  split = false,
): string {
  const e = gemmEpilogue(R, bias, epi, keep);
  const w = Array.from({ length: width }, (_, j) => j);
  const rows = mode === 'rows';
  const plus = (m: string, n: string): string => (bias ? ` + biasAt(${m}, ${n})` : '');
  const store = (i: number): string => epilogued(`acc[${i}]${plus(`${i}u`, 'idx')}`, `cb + ${i}u * N`, e);
  return `${gemmPrelude(R, bias, e)}
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;
${bias ? biasDecl(R) : ''}
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  let M = u32(p(0u)); let N = u32(p(1u)); let K = u32(p(2u));
  let sam = p(6u); let sak = p(7u); let sbk = p(8u); let sbn = p(9u);
  if (idx >= ${rows ? 'M' : 'N'}) { return; }
  ${
    split
      ? `let S = u32(p(${splitWord(R)}u));
  ${batchOffsets(R, 'wid.z / S')}
  let kc = (K + S - 1u) / S;
  let kBegin = min(K, (wid.z % S) * kc);
  let kEnd = min(K, kBegin + kc);`
      : `${batchOffsets(R)}
  let kBegin = 0u; let kEnd = K;`
  }
  var acc: array<f32, ${width}>;
  ${
    rows
      ? `let ra = offA + i32(idx) * sam;
  for (var k = kBegin; k < kEnd; k++) {
    let av = a[ra + i32(k) * sak];
    let rb = offB + i32(k) * sbk;
    ${w.map((j) => `acc[${j}] += av * b[rb + ${j} * sbn];`).join(' ')}
  }
  let cb = wid.z * M * N + idx * N;
  ${w.map((j) => `c[cb + ${j}u] = ${epilogued(`acc[${j}]${plus('idx', `${j}u`)}`, `cb + ${j}u`, e)};`).join(' ')}`
      : `let cbn = offB + i32(idx) * sbn;
  for (var k = kBegin; k < kEnd; k++) {
    let bv = b[cbn + i32(k) * sbk];
    let ak = offA + i32(k) * sak;
    ${w.map((i) => `acc[${i}] += a[ak + ${i} * sam] * bv;`).join(' ')}
  }
  let cb = wid.z * M * N + idx;
  ${w.map((i) => `c[cb + ${i}u * N] = ${store(i)};`).join(' ')}`
  }
}`;
}
