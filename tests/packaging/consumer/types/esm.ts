// Type-checked against the published declarations (strict, no skipLibCheck), with and without the DOM
// lib, by TypeScript 5.9 and 6, under moduleResolution nodenext (this file as ESM) and bundler.
import { BackendUnavailableError, createBackend, transposeView, type ComputeBackend, type NDArray } from '@polyhal/hal';
import { CpuBackend } from '@polyhal/backend-cpu';
import { createWasmBackend, type WasmBackend, type WasmBackendOptions } from '@polyhal/backend-wasm';
import { createWebGpuBackend, type WebGpuBackend, type WebGpuOptions } from '@polyhal/backend-webgpu';
import { runConformance, type ConformanceResult } from '@polyhal/conformance';
import * as ag from '@polyhal/autograd';
import { BaseBackend, FAMILIES, type BackendHooks } from '@polyhal/hal/internal';

export async function main(): Promise<number[]> {
  const cpu: ComputeBackend = new CpuBackend();
  const a: NDArray = cpu.fromArray([1, 2, 3, 4, 5, 6], [2, 3]);
  const c = cpu.matmul(a, transposeView(a));
  const wasmOptions: WasmBackendOptions = { threads: 1, relaxedSimd: 'auto' };
  const wasm: WasmBackend = await createWasmBackend(wasmOptions);
  const gpuOptions: WebGpuOptions = { powerPreference: 'high-performance', batchSize: 64, errorScopes: 'op' };
  let gpu: WebGpuBackend | undefined;
  try {
    gpu = await createWebGpuBackend(gpuOptions);
  } catch (e) {
    if (!(e instanceof BackendUnavailableError)) throw e;
  }
  const device: object | undefined = gpu?.device; // GPUDevice where the program has WebGPU types
  const { backend, report } = await createBackend({ backend: 'cpu' });
  const r: ConformanceResult = await runConformance(() => new CpuBackend(), { filter: 'add' });
  const x = ag.Tensor.fromArray(backend, [1, 2, 3], [3], { requiresGrad: true });
  ag.sum(ag.mul(x, x)).backward();
  const grad = x.grad ? Array.from(await x.grad.data()) : [];
  const hook: keyof BackendHooks = 'matmulKernel'; // the backend-author API: @polyhal/hal/internal
  const author = cpu instanceof BaseBackend ? Object.keys(FAMILIES).length + hook.length : 0;
  const values = [...Array.from(await cpu.read(c)), ...grad, r.passed, report.chosen.length, device ? 1 : 0];
  return [author, ...values, wasm.threads];
}
