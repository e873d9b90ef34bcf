// Batched GEMM: the items [itemStart, itemEnd) of a batched product C[t] = A[t]·B[t], in ONE call, where the
// dispatch would otherwise call gemm once per item (attention's [batch·heads] products of 17×16·16×17 made
// thousands of calls per training step, each paying the JavaScript around a WebAssembly call). Every item runs
// gemmRows over all its rows, exactly as gemm(…, 0, M) would: same blocking, same summation order, same bits.
import { gemmRows } from './matmul';

// The parameter block, in i32 words (src/dispatch-matmul.ts writes it).
const P_M = 0; // rows of each item's A and C
const P_N = 1; // columns of each item's B and C
const P_K = 2; // inner dimension
const P_A = 3; // A's base address (bytes)
const P_SAM = 4; // A's row stride (elements)
const P_SAK = 5; // A's column stride (elements)
const P_B = 6; // B's base address (bytes)
const P_SBK = 7; // B's row stride (elements)
const P_SBN = 8; // B's column stride (elements)
const P_C = 9; // C's address (bytes): item t's [M, N] block starts M·N·t elements in
const P_ITEMS_PER_ROW = 10; // items per row of the batch plan (planMatmulBatch's n)
const P_A_STARTS = 11; // address of A's row starts (i32 element offsets from A's base, one per plan row)
const P_B_STARTS = 12; // address of B's row starts
const P_A_STEP = 13; // A's item step within a plan row (elements; 0 for a broadcast operand)
const P_B_STEP = 14; // B's item step within a plan row

@inline function word(params: usize, i: i32): i32 {
  return load<i32>(params + (<usize>i << 2));
}

/**
 * Items [itemStart, itemEnd) of C[t] = A[t]·B[t] (row-major, contiguous C): item t, counted row-major over the
 * batch, reads A at element offset aStarts[t / n] + (t % n)·aStep from A's base, B likewise; `params` is the
 * block above. `scratch` holds gemm's scratch for N columns (packBytesA() + packBytesB(N) + 256 bytes).
 */
export function gemmBatched(params: usize, scratch: usize, itemStart: i32, itemEnd: i32): void {
  const M = word(params, P_M), N = word(params, P_N), K = word(params, P_K);
  const a = <usize>word(params, P_A), sam = word(params, P_SAM), sak = word(params, P_SAK);
  const b = <usize>word(params, P_B), sbk = word(params, P_SBK), sbn = word(params, P_SBN);
  const c = <usize>word(params, P_C), n = word(params, P_ITEMS_PER_ROW);
  const aStarts = <usize>word(params, P_A_STARTS), bStarts = <usize>word(params, P_B_STARTS);
  const aStep = word(params, P_A_STEP), bStep = word(params, P_B_STEP);
  const ldc = <usize>N << 2;
  const itemBytes = <usize>M * ldc;
  for (let t = itemStart; t < itemEnd; t++) {
    const row = t / n, i = t - row * n;
    const ao = load<i32>(aStarts + (<usize>row << 2)) + i * aStep;
    const bo = load<i32>(bStarts + (<usize>row << 2)) + i * bStep;
    gemmRows(M, N, K, a + (<usize>ao << 2), sam, sak, b + (<usize>bo << 2), sbk, sbn, c + <usize>t * itemBytes, ldc,
        scratch, 0, M);
  }
}
