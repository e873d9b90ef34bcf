import { describe, expect, test } from '@jest/globals';
import { PipelineCache } from '../../backends/webgpu/src/pipelines.js';

// The pipeline/bind-group cache alone, on a stand-in device that records what it is asked for.
const fakeDevice = () => {
  const calls = { bindGroups: 0, layouts: [] as GPUBindGroupLayoutEntry[][] };
  const device = {
    createBindGroupLayout: (d: GPUBindGroupLayoutDescriptor) => {
      calls.layouts.push([...d.entries] as GPUBindGroupLayoutEntry[]);
      return {};
    },
    createShaderModule: () => ({}),
    createPipelineLayout: () => ({}),
    createComputePipeline: () => ({}),
    createBindGroup: () => {
      calls.bindGroups++;
      return { n: calls.bindGroups };
    },
  } as unknown as GPUDevice;
  return { device, calls };
};
const buf = (): GPUBuffer => ({}) as GPUBuffer;
const WGSL = `@group(0) @binding(0) var<uniform> params: P;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;`;

describe('webgpu pipeline cache', () => {
  test('layouts follow the WGSL declarations: dynamic-offset uniform, read-only and read-write storage', () => {
    const { device, calls } = fakeDevice();
    const cache = new PipelineCache(device, buf());
    const p = cache.pipeline('k', () => WGSL);
    expect(
      cache.pipeline('k', () => {
        throw new Error('compiled twice');
      }),
    ).toBe(p);
    expect(calls.layouts[0]!.map((e) => [e.binding, e.buffer])).toEqual([
      [0, { type: 'uniform', hasDynamicOffset: true }],
      [1, { type: 'read-only-storage' }],
      [2, { type: 'storage' }],
    ]);
  });

  test('a bind group is reused for the same kernel and buffers, and dropped with a destroyed buffer', () => {
    const { device, calls } = fakeDevice();
    const cache = new PipelineCache(device, buf(), 4);
    const { layout } = cache.pipeline('k', () => WGSL);
    const [x, y, z] = [buf(), buf(), buf()];
    const group = (buffers: GPUBuffer[]) => cache.bindGroup(cache.bindGroupId('k', 64, buffers), layout, 64, buffers);
    const first = group([x, y]);
    expect(group([x, y])).toBe(first);
    expect(group([x, z])).not.toBe(first);
    expect(group([y, x])).not.toBe(first); // order matters: bindings differ
    expect(calls.bindGroups).toBe(3);
    // `cached` (no error scope needed) holds for a cached pipeline with a cached bind group only.
    expect(cache.cached('k', cache.bindGroupId('k', 64, [x, z]))).toBe(true);
    expect(cache.cached('k', cache.bindGroupId('k', 32, [x, z]))).toBe(false);
    expect(cache.cached('other', cache.bindGroupId('other', 64, [x, z]))).toBe(false);
    cache.forget(y);
    expect(cache.size).toBe(1); // only [x, z] is left
    expect(cache.cached('k', cache.bindGroupId('k', 64, [x, y]))).toBe(false);
    expect(group([x, y])).not.toBe(first);
    for (let i = 0; i < 5; i++) group([buf()]);
    expect(cache.size).toBeLessThanOrEqual(4);
  });
});
