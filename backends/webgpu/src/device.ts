/**
 * Finding a WebGPU device: an injected GPUDevice or GPU object, else `navigator.gpu` (browsers, Deno),
 * else the `webgpu` npm package (Dawn) in Node. No adapter → BackendUnavailableError with the reason.
 */
import { BackendUnavailableError } from '@polyhal/hal';
import { isNodeLike, nodeBuiltin } from '@polyhal/hal/internal';
import type { GpuDeviceLike, GpuLike } from './gpu-types.js';
import type { SubgroupMatrixBuiltins } from './kernels/subgroup-matrix-gemm.js';
import type { WebGpuOptions } from './options.js';

/** The options (declared once, as specs, in options.ts). */
export type { WebGpuOptions } from './options.js';

export interface AcquiredDevice {
  device: GpuDeviceLike;
  info: { vendor: string; architecture: string; device: string; description: string; isFallbackAdapter: boolean };
  /** Whether the backend requested the device itself (and so destroys it on dispose), not given it in the options. */
  owned: boolean;
  /**
   * Whether the adapter offers f16 subgroup-matrix configurations (halfSubgroupMatrix); absent for an injected
   * device (then `shader-f16` with subgroup matrices stands for them).
   */
  halfMatrices?: boolean;
  /**
   * The form of the tensor-core kernels' subgroup-matrix builtins (subgroup-matrix-check.ts, decided by
   * createWebGpuBackend); absent: 'legacy'.
   */
  builtins?: SubgroupMatrixBuiltins;
}

/** Dawn's GPU object per set of Dawn flags (one each: kept reachable while devices work, and reused). */
const nodeGpus = new Map<string, Promise<GPU | string>>();

interface NodeFs {
  existsSync(p: string): boolean;
  readFileSync(p: string, enc: 'latin1'): string;
}

/** Directories where a Linux dynamic loader finds libraries, besides its cache. */
const LIB_DIRS = [
  '/lib',
  '/lib64',
  '/usr/lib',
  '/usr/lib64',
  '/usr/local/lib',
  '/lib/x86_64-linux-gnu',
  '/usr/lib/x86_64-linux-gnu',
  '/lib/aarch64-linux-gnu',
  '/usr/lib/aarch64-linux-gnu',
];

/**
 * Whether the Vulkan loader (libvulkan.so.1) can be found on Linux: in LD_LIBRARY_PATH, the dynamic
 * loader's cache or the standard directories. Dawn runs on Vulkan there; without the loader it prints
 * a warning and finds no adapter, so the backend reports the reason instead of loading Dawn.
 * Other platforms (and runtimes without a file system) answer true.
 */
export async function hasVulkanLoader(): Promise<boolean> {
  const p = (globalThis as { process?: { platform?: string; env?: Record<string, string | undefined> } }).process;
  if (p?.platform !== 'linux') return true;
  const fs = await nodeBuiltin<NodeFs>('fs');
  if (!fs) return true;
  const dirs = [...(p.env?.['LD_LIBRARY_PATH'] ?? '').split(':').filter(Boolean), ...LIB_DIRS];
  if (dirs.some((d) => fs.existsSync(`${d}/libvulkan.so.1`))) return true;
  try {
    return fs.readFileSync('/etc/ld.so.cache', 'latin1').includes('libvulkan.so.1');
  } catch {
    return false;
  }
}

/**
 * Dawn from the `webgpu` npm package created with `flags`, or the reason it cannot be used (not installed,
 * failed to load, no Vulkan). One GPU object per distinct set of flags, so flags given later are not lost.
 */
async function gpuFromNode(flags: string[]): Promise<GPU | string | undefined> {
  if (!isNodeLike()) return undefined;
  const key = [...flags].sort().join('\n');
  let nodeGpu = nodeGpus.get(key);
  nodeGpu ??= (async () => {
    if (!(await hasVulkanLoader())) {
      return (
        'no Vulkan loader (libvulkan.so.1) on this machine, which Dawn needs; for a software ' +
        'GPU install Mesa lavapipe (Debian: apt-get install mesa-vulkan-drivers libvulkan1, on ' +
        'bookworm from bookworm-backports)'
      );
    }
    const spec = 'webgpu';
    let mod: { create: (flags: string[]) => GPU; globals: Record<string, unknown> };
    try {
      mod = (await import(/* webpackIgnore: true */ /* @vite-ignore */ spec)) as typeof mod;
    } catch (e) {
      const err = e as { code?: string; message?: string };
      const missing =
        (err.code === 'ERR_MODULE_NOT_FOUND' || err.code === 'MODULE_NOT_FOUND') &&
        /['"]webgpu['"]/.test(err.message ?? '');
      return missing
        ? 'the `webgpu` package (Dawn for Node) is not installed: npm install webgpu'
        : `the \`webgpu\` package failed to load: ${err.message ?? String(e)}`;
    }
    try {
      for (const [k, v] of Object.entries(mod.globals))
        if (!(k in globalThis)) (globalThis as Record<string, unknown>)[k] = v;
      return mod.create(flags);
    } catch (e) {
      return `the \`webgpu\` package failed to start Dawn: ${(e as Error).message}`;
    }
  })();
  nodeGpus.set(key, nodeGpu);
  return nodeGpu;
}

/** The GPU entry point of this runtime, or undefined. */
export async function findGpu(options: WebGpuOptions = {}): Promise<GpuLike | undefined> {
  const found = await locateGpu(options);
  return typeof found === 'string' ? undefined : found;
}

async function locateGpu(options: WebGpuOptions): Promise<GPU | string | undefined> {
  if (options.gpu) return options.gpu;
  const nav = (globalThis as { navigator?: { gpu?: GPU } }).navigator;
  if (nav?.gpu) return nav.gpu;
  return gpuFromNode(options.dawnFlags ?? []);
}

export async function requestAdapter(options: WebGpuOptions = {}): Promise<GPUAdapter> {
  const gpu = await locateGpu(options);
  if (typeof gpu === 'string') throw new BackendUnavailableError('webgpu', gpu);
  if (!gpu)
    throw new BackendUnavailableError(
      'webgpu',
      'no WebGPU in this runtime (no navigator.gpu; in Node the `webgpu` package provides it)',
    );
  const adapter = await gpu.requestAdapter({ powerPreference: options.powerPreference ?? 'high-performance' });
  if (!adapter)
    throw new BackendUnavailableError(
      'webgpu',
      'requestAdapter() returned no adapter (no GPU driver; in CI install Mesa lavapipe: mesa-vulkan-drivers)',
    );
  return adapter;
}

export function adapterInfo(adapter: GPUAdapter): AcquiredDevice['info'] {
  const i = (adapter as { info?: Partial<GPUAdapterInfo> & { isFallbackAdapter?: boolean } }).info ?? {};
  const fallback = Boolean(i.isFallbackAdapter ?? (adapter as { isFallbackAdapter?: boolean }).isFallbackAdapter);
  const software =
    fallback || /llvmpipe|lavapipe|swiftshader|software/i.test(`${i.architecture} ${i.device} ${i.description}`);
  return {
    vendor: i.vendor ?? '',
    architecture: i.architecture ?? '',
    device: i.device ?? '',
    description: i.description ?? '',
    isFallbackAdapter: software,
  };
}

/** The WebGPU feature of subgroup matrices (Dawn's experimental name). */
export const SUBGROUP_MATRIX = 'chromium-experimental-subgroup-matrix';

/**
 * Whether `adapter` offers subgroup matrices (with subgroups of 32: the kernels place four subgroups of 32
 * invocations in a workgroup of 128) in the configuration component → result at M16×N16×K`k`.
 */
function offersSubgroupMatrix(
  adapter: Pick<GPUAdapter, 'features' | 'info'>,
  component: string,
  result: string,
  k: number,
): boolean {
  if (!adapter.features.has(SUBGROUP_MATRIX) || !adapter.features.has('subgroups')) return false;
  const info = adapter.info as
    | { subgroupMinSize?: number; subgroupMaxSize?: number; subgroupMatrixConfigs?: readonly Record<string, unknown>[] }
    | undefined;
  if (info?.subgroupMinSize !== 32 || info.subgroupMaxSize !== 32) return false;
  return (info.subgroupMatrixConfigs ?? []).some(
    (c) =>
      c['componentType'] === component &&
      c['resultComponentType'] === result &&
      c['M'] === 16 &&
      c['N'] === 16 &&
      c['K'] === k,
  );
}

/** Whether `adapter` offers subgroup matrices with an i8×i8→i32 configuration at M16×N16×K32, subgroups of 32. */
const int8SubgroupMatrix = (adapter: GPUAdapter): boolean => offersSubgroupMatrix(adapter, 'i8', 'i32', 32);

/**
 * Whether `adapter` offers `shader-f16` and subgroup matrices with an f16×f16→f32 configuration at M16×N16×K16,
 * subgroups of 32 (the float16 tensor-core kernels: kernels/matmul-subgroup-matrix-f16.ts).
 */
export function halfSubgroupMatrix(adapter: Pick<GPUAdapter, 'features' | 'info'>): boolean {
  return adapter.features.has('shader-f16') && offersSubgroupMatrix(adapter, 'f16', 'f32', 16);
}

export async function acquireDevice(options: WebGpuOptions = {}): Promise<AcquiredDevice> {
  if (options.device) {
    return {
      device: options.device,
      info: { vendor: '', architecture: '', device: '', description: 'injected GPUDevice', isFallbackAdapter: false },
      owned: false,
    };
  }
  const adapter = await requestAdapter(options);
  const want = [
    'maxStorageBufferBindingSize',
    'maxBufferSize',
    'maxComputeWorkgroupStorageSize',
    'maxComputeInvocationsPerWorkgroup',
    'maxStorageBuffersPerShaderStage',
  ] as const;
  const requiredLimits: Record<string, number> = {};
  for (const k of want) requiredLimits[k] = adapter.limits[k];
  // Tensor cores for int8 matmul (kernels/matmul-int.ts): where the adapter offers subgroup matrices
  // with an i8×i8→i32 16×16×32 configuration (Dawn: with `allow_unsafe_apis`, e.g. NVIDIA's Vulkan driver).
  const features = new Set<string>();
  if (int8SubgroupMatrix(adapter)) features.add('subgroups').add(SUBGROUP_MATRIX);
  // and for float16 matmul, where it also offers f16 configurations and `shader-f16` (dispatch-matmul-f16.ts)
  if (halfSubgroupMatrix(adapter)) features.add('subgroups').add(SUBGROUP_MATRIX).add('shader-f16');
  // and for float16 arithmetic on f16 arrays wherever offered (dispatch-half-native.ts; float16Arithmetic)
  if (adapter.features.has('shader-f16')) features.add('shader-f16');
  // subgroup operations wherever offered: the row sums of the norm kernels (kernels/workgroup-sum.ts)
  if (adapter.features.has('subgroups')) features.add('subgroups');
  // GPU timestamps of replayed kernels, where asked for (replay-timing.ts)
  if (options.kernelTimestamps && adapter.features.has('timestamp-query')) features.add('timestamp-query');
  const requiredFeatures = [...features];
  let device: GPUDevice;
  try {
    device = await adapter.requestDevice({ requiredLimits, requiredFeatures: requiredFeatures as GPUFeatureName[] });
  } catch {
    // Some implementations report limits they then refuse (bun-webgpu): fall back to the defaults.
    device = await adapter.requestDevice();
  }
  return { device, info: adapterInfo(adapter), owned: true, halfMatrices: halfSubgroupMatrix(adapter) };
}
