/**
 * Which form of the subgroup-matrix builtins the device's WGSL compiler takes (kernels/subgroup-matrix-gemm.ts
 * SubgroupMatrixBuiltins): the tensor-core kernels are written in the 'vector' form (majorness a template
 * parameter, slabs of vec4 words: gpuweb #6275, #6345) where this compiler accepts it, and in the 'legacy' form
 * (deprecated in Dawn) where it does not. Decided once per backend at creation, for devices with subgroup matrices
 * only, by compiling the int8 kernel (and the float16 one with `shader-f16`) of the medium tile in the vector form:
 * any error message or validation error means 'legacy'.
 *
 * On an H200 (driver 580.159.04, Dawn of the `webgpu` package) both forms gave the same bits, and the vector form
 * ran float16 products 3–9% faster (203 against 193 TFLOP/s at 4096³, 222 against 209 at 8192³; ViT-S shapes
 * 1.03–1.09×) and int8 ones as fast (303 against 302 TOPS at 4096³): benches/probes/webgpu-sgm-builtins.ts.
 */
import type { GpuDeviceLike } from './gpu-types.js';
import { halfSubgroupMatrixWgsl, HALF_SGM_MEDIUM } from './kernels/matmul-subgroup-matrix-f16.js';
import { SGM_MEDIUM, subgroupMatrixMatmulWgsl } from './kernels/matmul-subgroup-matrix.js';
import type { SubgroupMatrixBuiltins } from './kernels/subgroup-matrix-gemm.js';
import type { WebGpuOptions } from './options.js';
import { SUBGROUP_MATRIX } from './device.js';

/** Whether `device` compiles `code` without an error message or a validation error. */
async function compiles(device: GPUDevice, code: string): Promise<boolean> {
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ code });
  const info = await module.getCompilationInfo();
  const error = await device.popErrorScope();
  return !error && !info.messages.some((m) => m.type === 'error');
}

/**
 * The form of the tensor-core kernels' builtins on `device` under `options.subgroupMatrixBuiltins` ('auto', the
 * default: 'vector' where it compiles; 'legacy' on a device without subgroup matrices, where it is never used).
 */
export async function subgroupMatrixBuiltins(
  device: GpuDeviceLike,
  options: WebGpuOptions,
): Promise<SubgroupMatrixBuiltins> {
  const wanted = options.subgroupMatrixBuiltins ?? 'auto';
  if (wanted !== 'auto') return wanted;
  const d = device as GPUDevice;
  if (!d.features.has(SUBGROUP_MATRIX)) return 'legacy';
  try {
    if (!(await compiles(d, subgroupMatrixMatmulWgsl(SGM_MEDIUM, false, 'vector')))) return 'legacy';
    if (d.features.has('shader-f16') && !(await compiles(d, halfSubgroupMatrixWgsl(HALF_SGM_MEDIUM, false, 'vector'))))
      return 'legacy';
    return 'vector';
  } catch {
    return 'legacy';
  }
}
