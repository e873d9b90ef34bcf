/**
 * GPU time of the webgpu backend's float32 softmax over the last axis (dispatch-softmax.ts) on a ViT-S's attention
 * scores [64, 6, 197, 197] (short rows: kernels/softmax-short.ts) and on [4096, 1024] (the short kernel's longest
 * rows) and [1024, 4096] (the workgroup-per-row kernel, kernels/softmax.ts). Each softmax is captured once
 * (beginCapture/endCapture) and replayed: with the backend's kernelTimestamps (a device with `timestamp-query`) the
 * GPU time of its kernel in each of `--reps` replays (replayKernelTimes); always the wall time of `--reps` replays
 * and a final one-element read, per replay. A second row per shape (`raw`) runs each kernel of the dispatch on the
 * same device outside the backend (its own pipelines and buffers, a compute pass per call with timestamp writes):
 * both kernels on every shape, so the short kernel is compared with the workgroup-per-row one it replaces on the
 * same rows. GB/s: 8 bytes per element (one read, one write) over the median GPU time. Prints JSON rows.
 *   node webgpu-softmax.mjs [--dawn-flags F] [--shapes 64x6x197x197,4096x1024,1024x4096] [--reps 50] [--json FILE]
 */
import { writeFileSync } from 'node:fs';
import { create, globals } from 'webgpu';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';
import { softmaxWgsl } from '../../backends/webgpu/src/kernels/softmax.js';
import {
  SOFTMAX_SHORT_MAX,
  SOFTMAX_SHORT_THREADS,
  softmaxShortShape,
  softmaxShortWgsl,
} from '../../backends/webgpu/src/kernels/softmax-short.js';
import { grid } from '../../backends/webgpu/src/layout.js';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const shapes = arg('shapes', '64x6x197x197,4096x1024,1024x4096')
  .split(',')
  .map((s) => s.split('x').map(Number));
const reps = Number(arg('reps', '50'));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const us = (x: number): number => +x.toFixed(1);

Object.assign(globalThis, globals);
const gpu = create(arg('dawn-flags', '').split(' ').filter(Boolean));
const be = await createWebGpuBackend({ gpu, kernelTimestamps: true, memoryLimit: 2 ** 33 });
console.log(`device: ${be.deviceName}`);
const rows: Record<string, unknown>[] = [];
const emit = (row: Record<string, unknown>): void => {
  console.log(JSON.stringify(row));
  rows.push(row);
};
const random = (size: number): Float32Array => {
  const a = new Float32Array(size);
  for (let i = 0; i < size; i++) a[i] = Math.sin(i * 12.9898) * 6;
  return a;
};

// through the backend: its dispatch, captured and replayed
for (const shape of shapes) {
  const size = shape.reduce((p, d) => p * d, 1);
  const x = be.fromArray(random(size), shape);
  be.beginCapture([]);
  const y = be.softmax(x, -1);
  const r = be.endCapture([y.buffer]);
  if (!('work' in r)) throw new Error(`the softmax's capture broke: ${r.broken}`);
  const gpuNs: number[] = [];
  let kernel = '';
  for (let i = 0; i < reps; i++) {
    r.work.replay([]);
    const times = (await be.replayKernelTimes()) ?? [];
    for (const t of times) [kernel, gpuNs[i]] = [t.kernel, t.ns];
  }
  const t0 = performance.now();
  for (let i = 0; i < reps; i++) r.work.replay([]);
  await be.read(be.shrink(be.reshape(y, [size]), [[0, 1]]));
  const wallUs = ((performance.now() - t0) * 1e3) / reps;
  const gpuUs = gpuNs.length ? median(gpuNs) / 1e3 : null;
  emit({
    device: be.deviceName,
    path: 'backend',
    shape,
    kernel,
    gpuUs: gpuUs === null ? null : us(gpuUs),
    gpuUsMin: gpuNs.length ? us(Math.min(...gpuNs) / 1e3) : null,
    wallUsPerReplay: us(wallUs),
    gbps: gpuUs === null ? null : us((8 * size) / gpuUs / 1e3),
  });
  r.work.release();
  be.free(y);
  be.free(x);
}
be.dispose();

// outside the backend: both kernels on every shape, same device and inputs
const adapter = (await gpu.requestAdapter())!;
if (adapter.features.has('timestamp-query')) {
  const device = await adapter.requestDevice({
    requiredFeatures: ['timestamp-query'],
    requiredLimits: {
      maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
      maxBufferSize: adapter.limits.maxBufferSize,
    },
  });
  const query = device.createQuerySet({ type: 'timestamp', count: 2 * reps });
  const resolved = device.createBuffer({
    size: 16 * reps,
    usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
  });
  const readback = device.createBuffer({ size: 16 * reps, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  for (const shape of shapes) {
    const size = shape.reduce((p, d) => p * d, 1);
    const n = shape.at(-1)!;
    const count = size / n;
    const x = device.createBuffer({ size: 4 * size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    device.queue.writeBuffer(x, 0, random(size));
    const y = device.createBuffer({ size: 4 * size, usage: GPUBufferUsage.STORAGE });
    const params = device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    device.queue.writeBuffer(params, 0, new Int32Array([count, n, 0, 0]));
    const { group, per } = softmaxShortShape(n);
    const kernels: [string, string, [number, number]][] = [
      ['softmax/rows', softmaxWgsl, grid(count)],
      ...(n <= SOFTMAX_SHORT_MAX
        ? [
            [
              `softmax/short/${group}x${per}`,
              softmaxShortWgsl(group, per),
              grid(Math.ceil(count / (SOFTMAX_SHORT_THREADS / group))),
            ] as [string, string, [number, number]],
          ]
        : []),
    ];
    const row: Record<string, unknown> = { device: be.deviceName, path: 'raw', shape };
    for (const [key, code, groups] of kernels) {
      const pipe = device.createComputePipeline({
        layout: 'auto',
        compute: { module: device.createShaderModule({ code }), entryPoint: 'main' },
      });
      const bind = device.createBindGroup({
        layout: pipe.getBindGroupLayout(0),
        entries: [params, x, y].map((buffer, binding) => ({ binding, resource: { buffer } })),
      });
      const enc = device.createCommandEncoder();
      for (let i = -3; i < reps; i++) {
        const pass = enc.beginComputePass(
          i < 0
            ? {}
            : {
                timestampWrites: { querySet: query, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 },
              },
        );
        pass.setPipeline(pipe);
        pass.setBindGroup(0, bind);
        pass.dispatchWorkgroups(groups[0], groups[1]);
        pass.end();
      }
      enc.resolveQuerySet(query, 0, 2 * reps, resolved, 0);
      enc.copyBufferToBuffer(resolved, 0, readback, 0, 16 * reps);
      device.queue.submit([enc.finish()]);
      await readback.mapAsync(GPUMapMode.READ);
      const t = new BigInt64Array(readback.getMappedRange().slice(0));
      readback.unmap();
      const ns = Array.from({ length: reps }, (_, i) => Number(t[2 * i + 1]! - t[2 * i]!));
      row[key] = { gpuUs: us(median(ns) / 1e3), gbps: us((8 * size) / median(ns)) };
    }
    emit(row);
    for (const b of [x, y, params]) b.destroy();
  }
  device.destroy();
} else emit({ device: be.deviceName, path: 'raw', skipped: 'the adapter has no timestamp-query' });

const json = arg('json', process.env['BENCH_JSON'] ?? '');
if (json) writeFileSync(json, `${JSON.stringify({ rows }, null, 2)}\n`);
process.exit(0);
