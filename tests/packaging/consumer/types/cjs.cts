// The same declarations as a CommonJS consumer sees them (require conditions: the .d.cts files).
import hal = require('@polyhal/hal');
import internal = require('@polyhal/hal/internal');
import cpuPkg = require('@polyhal/backend-cpu');
import wasmPkg = require('@polyhal/backend-wasm');
import webgpuPkg = require('@polyhal/backend-webgpu');
import conformance = require('@polyhal/conformance');
import ag = require('@polyhal/autograd');

async function main(): Promise<number[]> {
  const cpu: hal.ComputeBackend = new cpuPkg.CpuBackend();
  const c = cpu.matmul(cpu.fromArray([1, 2, 3, 4], [2, 2]), cpu.fromArray([5, 6, 7, 8], [2, 2]));
  const wasm: wasmPkg.WasmBackend = await wasmPkg.createWasmBackend({ threads: 1 });
  const options: webgpuPkg.WebGpuOptions = { powerPreference: 'low-power' };
  const gpu = await webgpuPkg.createWebGpuBackend(options).catch(() => undefined);
  const r: conformance.ConformanceResult = await conformance.runConformance(() => new cpuPkg.CpuBackend(), { filter: 'add' });
  const x = ag.Tensor.fromArray(cpu, [1, 2], [2], { requiresGrad: true });
  const author = cpu instanceof internal.BaseBackend ? Object.keys(internal.FAMILIES.layout).length : 0;
  return [author, ...Array.from(await cpu.read(c)), r.failed, wasm.threads, gpu ? 1 : 0, x.shape.length];
}
export = main;
