/**
 * Typed errors of `exportOnnx`. Both are PolyHalError subclasses (catch them with the HAL's own errors) and
 * are thrown before any byte of a model is produced.
 */
import { PolyHalError } from '@polyhal/hal';

/**
 * The traced function called backend methods that have no ONNX mapping (e.g. an in-place `assign`, a
 * `scatter`, a pad in `wrap` mode): `ops` lists every one, each with its reason, in the order first met.
 */
export class OnnxExportUnmappedError extends PolyHalError {
  constructor(
    /** Each unmapped call, once: the backend method (with its op, e.g. `unary:silu`) and why. */
    readonly ops: readonly string[],
  ) {
    super(`exportOnnx: ${ops.length} op(s) without an ONNX mapping: ${ops.join('; ')}`);
  }
}

/**
 * The traced function drew random numbers (dropout in training mode, `rand`, a `bernoulli` call): a graph
 * of inference cannot hold them. Call `model.eval()` (or `train(false)`) before exporting.
 */
export class OnnxExportRandomError extends PolyHalError {
  constructor(
    /** The random backend methods called (`bernoulli`, ...), or the generator's name. */
    readonly calls: readonly string[],
  ) {
    super(
      `exportOnnx: the traced function draws random numbers (${calls.join(', ')}); export is for inference: ` +
        'call model.eval() (or train(false)) so that Dropout passes inputs through',
    );
  }
}
