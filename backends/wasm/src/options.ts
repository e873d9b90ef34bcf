/**
 * The options of the WASM backend, declared once: WASM_OPTION_SPECS, which createWasmBackend and the
 * registry check them against (and docs/reference/OPTIONS.md renders), and WasmBackendOptions, the
 * options' TypeScript type derived from it (what createWasmBackend and WasmBackend take).
 */
import type { OptionsOf } from '@polyhal/hal';
import { BASE_OPTION_SPECS, defineOptions } from '@polyhal/hal/internal';

/** The options createWasmBackend takes (checked: InvalidArgumentError names a bad key). */
export const WASM_OPTION_SPECS = defineOptions({
  ...BASE_OPTION_SPECS,
  /** Worker threads for matmul (the calling thread counts): a number, or 'auto' (cores, at most 8). Default 'auto'. */
  threads: { type: 'integer', min: 1, max: 256, values: ['auto'], doc: 'threads, the calling one included' },
  /** Multiply-adds (M·N·K) from which a matmul is split across threads (default 2^21). */
  threadThreshold: { type: 'number', min: 0, doc: 'multiply-adds from which a matmul is split over threads' },
  /**
   * Output elements from which an elementwise op (unary or binary, any strides or broadcast) is split
   * across threads by rows or element ranges (default 2^16: with the workers polling between ops, halves of
   * 2^17 elements ran 1.9× faster than one thread).
   */
  elementwiseThreadThreshold: { type: 'number', min: 0, doc: 'output elements from which an elementwise op is split' },
  /**
   * Relaxed SIMD (fused multiply-add in matmul): 'auto' (default) uses it where the runtime has it;
   * false keeps plain SIMD (bit-identical matmul results on every CPU); true requires it.
   */
  relaxedSimd: {
    type: 'boolean',
    values: ['auto'],
    doc: 'relaxed SIMD (fused multiply-add in matmul): "auto" where the runtime has it, false never, true required',
  },
});

/** What createWasmBackend and WasmBackend take: `memoryLimit` and the options above (OptionsOf WASM_OPTION_SPECS). */
export type WasmBackendOptions = OptionsOf<typeof WASM_OPTION_SPECS>;
