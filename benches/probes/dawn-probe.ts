/**
 * What the raw-Dawn probes (webgpu-int8-probe.ts, webgpu-int8-sgm-tune.ts) share: a device created with Dawn
 * toggles, subgroups and subgroup matrices where the adapter offers them, the adapter's large-buffer and
 * workgroup-memory limits; and a read-back of an int32 buffer.
 */
import { create, globals } from 'webgpu';

export const SUBGROUP_MATRIX = 'chromium-experimental-subgroup-matrix' as GPUFeatureName;

export interface ProbeDevice {
  adapter: GPUAdapter;
  device: GPUDevice;
  /** The adapter offers subgroup matrices (and subgroups), enabled on `device`. */
  hasSgm: boolean;
}

/** A device on the high-performance adapter of a Dawn instance with `enable-dawn-features=<toggles>`. */
export async function openProbeDevice(toggles: string): Promise<ProbeDevice> {
  Object.assign(globalThis, globals);
  const gpu = create([`enable-dawn-features=${toggles}`]);
  // Dawn's GPU object must stay reachable while its devices work (collected, the process crashes).
  (globalThis as { polyhalGpu?: unknown }).polyhalGpu = gpu;
  const adapter = (await gpu.requestAdapter({ powerPreference: 'high-performance' }))!;
  const hasSgm = adapter.features.has(SUBGROUP_MATRIX) && adapter.features.has('subgroups' as GPUFeatureName);
  const limits = [
    'maxStorageBufferBindingSize',
    'maxBufferSize',
    'maxComputeWorkgroupStorageSize',
    'maxComputeInvocationsPerWorkgroup',
  ] as const;
  const device = await adapter.requestDevice({
    requiredFeatures: hasSgm ? ['subgroups' as GPUFeatureName, SUBGROUP_MATRIX] : [],
    requiredLimits: Object.fromEntries(limits.map((k) => [k, adapter.limits[k]])),
  });
  device.onuncapturederror = (e) =>
    console.error(`uncaptured: ${(e as GPUUncapturedErrorEvent).error.message.split('\n')[0]}`);
  return { adapter, device, hasSgm };
}

/** The first `count` int32 values of `buf` (a STORAGE | COPY_SRC buffer). */
export async function readInt32(device: GPUDevice, buf: GPUBuffer, count: number): Promise<Int32Array> {
  const staging = device.createBuffer({ size: count * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(buf, 0, staging, 0, count * 4);
  device.queue.submit([enc.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const out = new Int32Array(staging.getMappedRange().slice(0));
  staging.destroy();
  return out;
}

/**
 * WGSL header of the one-workgroup-tile subgroup-matrix probes: A and Bᵀ packed four int8 to a word (vec4
 * loads), C int32, the sizes in `dims`, and the i8×i8→i32 16×16×32 matrix types LM, RM and C.
 */
export const SGM_PROBE_HEADER = `enable chromium_experimental_subgroup_matrix;
struct Dims { m: u32, n: u32, k: u32, pad: u32 }
@group(0) @binding(0) var<storage, read> a: array<vec4<i32>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<i32>>;
@group(0) @binding(2) var<storage, read_write> c: array<i32>;
@group(0) @binding(3) var<uniform> dims: Dims;
alias LM = subgroup_matrix_left<i8, 32, 16>;
alias RM = subgroup_matrix_right<i8, 16, 32>;
alias C = subgroup_matrix_result<i32, 16, 16>;
`;
