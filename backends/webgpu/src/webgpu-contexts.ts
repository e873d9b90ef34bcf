/**
 * The kernel contexts of the WebGPU backend: what each dispatch-*.ts file needs of the backend (its command batch,
 * buffer pool, GPU buffers, allocation, fill kernel, float16 settings and running capture), built once at
 * construction (webgpu-backend-base.ts) from the backend's callbacks (ContextHost); and the adapter's kernel paths
 * (int8 and float16 matmul) that deviceName names.
 */
import { type DeviceBuffer, type DType, expandView, type NDArray, shrinkView } from '@polyhal/hal';
import type { LiveContext } from './capture.js';
import { type AcquiredDevice, SUBGROUP_MATRIX, type WebGpuOptions } from './device.js';
import { AdamGroups, MAX_ADAM_SLOTS } from './dispatch-adam.js';
import type { ElementwiseContext } from './dispatch-elementwise.js';
import type { HalfArithmetic, HalfContext } from './dispatch-half.js';
import type { ByteDType, Int8Context } from './dispatch-int8.js';
import type { MatmulContext } from './dispatch-matmul.js';
import { type HalfMatmulContext, halfMatmulSetup } from './dispatch-matmul-f16.js';
import { type Int8Setup, type IntMatmulContext, int8Setup } from './dispatch-matmul-int.js';
import type { AttentionContext } from './dispatch-attention.js';
import type { NormContext } from './dispatch-norm.js';
import type { RandomContext } from './dispatch-random.js';
import type { SelectContext } from './dispatch-select.js';
import type { SgdContext } from './dispatch-sgd.js';
import type { CommandBatch } from './encoder.js';
import type { GpuDeviceLike } from './gpu-types.js';
import type { HalfConversions } from './kernels/half.js';
import { TILES } from './kernels/matmul.js';
import type { BufferPool } from './pool.js';

/** The adapter's kernel paths, from its features and the options (int8Setup, halfMatmulSetup), and its name. */
export interface AdapterSetup {
  readonly int8: Int8Setup;
  readonly half: ReturnType<typeof halfMatmulSetup>;
  /** The adapter and the kernels of its int8 and float16 matmul paths (WebGpuBackend.deviceName). */
  readonly deviceName: string;
}

/** The int8 and float16 matmul paths of `acquired`'s device under `options`, and the name that says them. */
export function adapterSetup(acquired: AcquiredDevice, options: WebGpuOptions): AdapterSetup {
  const limits = acquired.device.limits;
  const i = acquired.info;
  const adapterName =
    [i.description || i.device, i.vendor && `vendor ${i.vendor}`, i.architecture && `arch ${i.architecture}`]
      .filter(Boolean)
      .join(', ') || 'WebGPU device';
  const int8 = int8Setup(
    options,
    acquired.device.features.has(SUBGROUP_MATRIX),
    limits.maxComputeWorkgroupStorageSize,
    acquired.builtins,
  );
  // f16 subgroup-matrix configurations (device.ts halfSubgroupMatrix); shader-f16 is requested wherever offered
  const features = acquired.device.features;
  const halfMatrices = (acquired.halfMatrices ?? true) && features.has(SUBGROUP_MATRIX);
  const half = halfMatmulSetup(options, halfMatrices && features.has('shader-f16'));
  const deviceName =
    `${adapterName}; int8 matmul: ${int8.description}` +
    (half.mode === 'off' ? '' : `; float16 matmul: ${half.description}`) +
    (options.int8Storage === 'int32' ? '; int8 storage: int32' : '');
  return { int8, half, deviceName };
}

/** What the kernel contexts call of the backend. */
export interface ContextHost {
  readonly name: string;
  readonly device: GpuDeviceLike;
  readonly batch: CommandBatch;
  readonly pool: BufferPool;
  /** A placeholder storage buffer bound where a kernel's optional operand is absent. */
  readonly dummy: GPUBuffer;
  /** A software adapter (lavapipe, SwiftShader). */
  readonly software: boolean;
  /** Ids of the float16 buffers: 2 bytes per element (dispatch-half.ts). */
  readonly half: Set<number>;
  /** Ids of the int8 and uint8 buffers in 1 byte per element, with their dtype (dispatch-int8.ts). */
  readonly bytes: Map<number, ByteDType>;
  /** The GPU buffer of a HAL buffer; float16 storage only with `half`, byte storage only with `bytes`. */
  gpu(buffer: DeviceBuffer, half?: boolean, bytes?: boolean): GPUBuffer;
  fill(out: DeviceBuffer, value: number): void;
  contiguous(x: NDArray): NDArray;
  free(x: NDArray): void;
  allocate(size: number, dtype: DType): DeviceBuffer;
  deallocate(buffer: DeviceBuffer): void;
  /** The backend's float16Conversions and float16Arithmetic of the moment. */
  conversions(): HalfConversions;
  arithmetic(): HalfArithmetic;
  /** The running capture's live section and patch registration (capture.ts), null without a capture. */
  live(): LiveContext | null;
}

/** The contexts of the dispatch-*.ts files (and the multi-tensor Adam groups), one of each per backend. */
export interface KernelContexts {
  readonly matmul: MatmulContext;
  /** float16 products on tensor cores (dispatch-matmul-f16.ts). */
  readonly halfMatmul: HalfMatmulContext;
  readonly intMatmul: IntMatmulContext;
  readonly norm: NormContext;
  readonly attention: AttentionContext;
  readonly adam: AdamGroups;
  /** The kernels whose params a capture's live sections recompute (dispatch-sgd, dispatch-random). */
  readonly live: SgdContext & RandomContext;
  readonly select: SelectContext;
  readonly half: HalfContext;
  /** int8 and uint8 in byte storage (dispatch-int8.ts). */
  readonly int8: Int8Context;
  readonly elementwise: ElementwiseContext;
}

/** The kernel contexts over `host`'s batch, pool and buffers, with the paths of `setup` and the matmul options. */
export function kernelContexts(host: ContextHost, options: WebGpuOptions, setup: AdapterSetup): KernelContexts {
  const { batch, pool, dummy } = host;
  const limits = host.device.limits;
  const gpu = (buffer: DeviceBuffer): GPUBuffer => host.gpu(buffer);
  const gpuOrHalf = (buffer: DeviceBuffer): GPUBuffer => host.gpu(buffer, true);
  const fill = (out: DeviceBuffer, value: number): void => host.fill(out, value);
  const allocate = (size: number, dtype: DType): DeviceBuffer => host.allocate(size, dtype);
  const deallocate = (buffer: DeviceBuffer): void => host.deallocate(buffer);
  const live = (): LiveContext | null => host.live();
  const matmul: MatmulContext = {
    device: host.device,
    batch,
    pool,
    forcedTile: options.matmulTile && options.matmulTile !== 'auto' ? TILES[options.matmulTile] : null,
    forcedSplitK: typeof options.matmulSplitK === 'number' ? Math.max(1, Math.floor(options.matmulSplitK)) : null,
    software: host.software,
    gpu,
    fill,
    // a copy of the distinct elements (a broadcast dim's one), viewed with x's shape: dispatch-matmul.ts
    packed: (x) => {
      const base = shrinkView(
        x,
        x.shape.map((d, i) => [0, x.strides[i] === 0 ? Math.min(d, 1) : d] as const),
      );
      return expandView(host.contiguous(base), x.shape);
    },
    release: (x) => host.free(x),
  };
  const halfMatmul: HalfMatmulContext = {
    batch,
    pool,
    mode: setup.half.mode,
    workgroupStorage: limits.maxComputeWorkgroupStorageSize,
    forcedTile: setup.half.tile,
    builtins: setup.int8.builtins,
    forcedSplitK: matmul.forcedSplitK,
    gpu: gpuOrHalf,
  };
  const intMatmul: IntMatmulContext = {
    batch,
    pool,
    ...setup.int8,
    gpu,
    fill,
    isBytes: (b) => host.bytes.has(b.id),
    gpuBytes: (b) => host.gpu(b, false, true),
  };
  const rowPerWorkgroup =
    options.layerNormKernel === 'workgroup' ||
    options.layerNormKernel === 'subgroup' ||
    (options.layerNormKernel !== 'invocation' && !host.software);
  // the row sums through subgroup operations where the device has them ('workgroup': the tree, for comparison)
  const subgroups = rowPerWorkgroup && options.layerNormKernel !== 'workgroup' && host.device.features.has('subgroups');
  const norm: NormContext = { batch, gpu, dummy, pool, rowPerWorkgroup, subgroups };
  const attention: AttentionContext = { batch, gpu, pool, tiledAttention: options.tiledAttention ?? false };
  const adam = new AdamGroups({
    batch,
    gpu,
    free: (x) => host.free(x),
    slots: Math.max(1, Math.min(MAX_ADAM_SLOTS, Math.floor(limits.maxStorageBuffersPerShaderStage / 4))),
    live,
  });
  const select: SelectContext = { batch, gpu, allocate, deallocate };
  const half: HalfContext = {
    batch,
    half: host.half,
    gpu: gpuOrHalf,
    allocate,
    deallocate,
    conversions: () => host.conversions(),
    arithmetic: () => host.arithmetic(),
  };
  const int8: Int8Context = { batch, bytes: host.bytes, gpu: (b) => host.gpu(b, false, true), allocate, deallocate };
  const elementwise: ElementwiseContext = { batch, half, software: host.software, name: host.name, gpu };
  return {
    matmul,
    halfMatmul,
    intMatmul,
    norm,
    attention,
    adam,
    live: { batch, gpu, dummy, live },
    select,
    half,
    int8,
    elementwise,
  };
}
