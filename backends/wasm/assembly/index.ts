// PolyHAL WASM-SIMD kernels. Memory is managed from JavaScript (src/memory.ts); every pointer here is
// a byte offset into linear memory, every stride and offset an element count.
export { binaryF32, binaryI32, unaryF32, unaryI32 } from './elementwise';
export { compareF32, where32 } from './logic';
export { copyRows, copyNd, fillF32, fillI32 } from './copy';
export { reduceF32, reduceI32 } from './reduce';
export { gemm, gemmCols, gemmRowBlock, packBytesA, packBytesB } from './matmul';
export { gemmBatched } from './matmul-batched';
export { convGemm, convPackA, convPackBytesA, convScratchBytes, depthwiseConv, depthwiseScratchBytes } from './conv';
export { convDirect, convDirectScratchBytes } from './conv-direct';
export { convTranspose, convTransposePackW } from './conv-transpose';
export { resizeNearest } from './resize';
export { gemmI16, gemmI32, packI16 } from './matmul-int';
export { adamF32, sgdF32, softmaxCrossEntropyF32 } from './fused';
export { unscaleF32 } from './unscale';
export { fusedF32 } from './fused-elementwise';
export { softmaxF32 } from './softmax';
export { philoxF32 } from './random';
export { gather32, positions32, scatter32 } from './gather';
export { argReduce32 } from './argreduce';
export { cumsum32, topk32 } from './scan';

/** First byte that JavaScript may allocate (after static data). */
export function heapBase(): usize {
  return (__heap_base + 15) & ~15;
}
