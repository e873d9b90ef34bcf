import { PolyHalError } from '@polyhal/hal';

/** A failure the GPU reported asynchronously, surfaced as a typed HAL error naming the op. */
export class GpuError extends PolyHalError {
  constructor(
    readonly op: string,
    readonly kind: 'validation' | 'out-of-memory' | 'internal',
    message: string,
  ) {
    super(`webgpu: ${kind} error in ${op}: ${message}`);
  }
}
