/**
 * The options of the WASM backend: WasmBackendOptions (what createWasmBackend and WasmBackend take)
 * and WASM_OPTION_SPECS, the specs createWasmBackend and the registry check them against.
 */
import { BASE_OPTION_SPECS, type BaseBackendOptions, type OptionSpecs } from '@polyhal/hal';

export interface WasmBackendOptions extends BaseBackendOptions {
  /** Worker threads for matmul (the calling thread counts): a number, or 'auto' (cores, at most 8). Default 'auto'. */
  threads?: number | 'auto';
  /** Multiply-adds (M·N·K) from which a matmul is split across threads (default 2^21). */
  threadThreshold?: number;
  /**
   * Output elements from which an elementwise op (unary or binary, any strides or broadcast) is split
   * across threads by rows or element ranges (default 2^18).
   */
  elementwiseThreadThreshold?: number;
  /**
   * Relaxed SIMD (fused multiply-add in matmul): 'auto' (default) uses it where the runtime has it;
   * false keeps plain SIMD (bit-identical matmul results on every CPU); true requires it.
   */
  relaxedSimd?: boolean | 'auto';
}

/** The options createWasmBackend takes (checked: InvalidArgumentError names a bad key). */
export const WASM_OPTION_SPECS: OptionSpecs = {
  ...BASE_OPTION_SPECS,
  threads: { type: 'integer', min: 1, max: 256, values: ['auto'], doc: 'threads, the calling one included' },
  threadThreshold: { type: 'number', min: 0, doc: 'multiply-adds from which a matmul is split over threads' },
  elementwiseThreadThreshold: { type: 'number', min: 0, doc: 'output elements from which an elementwise op is split' },
  relaxedSimd: {
    type: 'boolean',
    values: ['auto'],
    doc: 'relaxed SIMD (fused multiply-add in matmul): "auto" where the runtime has it, false never, true required',
  },
};
