/**
 * The WebGPU types of the public API, taken from the consumer's own globals: the real `GPUDevice` and
 * `GPU` where the program has WebGPU types (TypeScript 6's DOM lib, or `@webgpu/types` in `types`),
 * else `object`. So the published declarations compile without the DOM lib, and this package never
 * pulls @webgpu/types into a program (it needs the DOM lib, and clashes with a DOM lib that has WebGPU).
 */
export type GpuDeviceLike = typeof globalThis extends { GPUDevice: { prototype: infer T } } ? T : object;
/** The program's `GPU` type (navigator.gpu, or Dawn's `create([])` in Node) where it has WebGPU types, else object. */
export type GpuLike = typeof globalThis extends { GPU: { prototype: infer T } } ? T : object;
/** WebGPU's adapter power preference (GPURequestAdapterOptions.powerPreference). */
export type GpuPowerPreference = 'low-power' | 'high-performance';
