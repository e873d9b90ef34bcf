import { PolyHalError } from '@polyhal/hal';

/** A failure the GPU reported asynchronously, surfaced as a typed HAL error naming the op. */
export class GpuError extends PolyHalError {
  constructor(
    /** The HAL op whose GPU work failed. */
    readonly op: string,
    /** WebGPU's error filter that caught it (GPUValidationError, GPUOutOfMemoryError, GPUInternalError). */
    readonly kind: 'validation' | 'out-of-memory' | 'internal',
    message: string,
  ) {
    super(`webgpu: ${kind} error in ${op}: ${message}`);
  }
}
