/**
 * Capture and replay (hal/src/capture.ts; backends/webgpu/src/capture.ts; packages/onnx/src/replay.ts).
 * An InferenceSession on webgpu captures the second run of a feed signature and replays later ones: the
 * outputs must be the same bits as an eager session's on the same feeds (and agree with a float64 oracle
 * written here), each replay one submission with the captured run's kernels, a device read-back refuses the
 * capture, and release gives every buffer back. At the HAL level: replays with new inputs against eager ops,
 * buffers created after a capture never aliased by its replays, and typed errors for misuse.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  type CapturedWork,
  type ComputeBackend,
  InvalidArgumentError,
  ShapeMismatchError,
  UseAfterFreeError,
} from '@polyhal/hal';
import { InferenceSession, type OutputTensor } from '@polyhal/onnx';
import { REPO_BACKENDS } from '../support/backends.js';
import { attr, encodeModel } from '../support/onnx-builder.js';

type Kernels = { kernelStats(): { dispatches: number; submissions: number } };

const W = Array.from({ length: 8 * 5 }, (_, i) => Math.fround(Math.sin(i * 1.7) * 0.5));
const B = [0.1, -0.2, 0.3, 0, -0.05].map(Math.fround);
// x [n, 8] → relu(x·W + b) = y [n, 5]; yt = yᵀ (a transposed view); shape = Shape(x) (host); r = Reshape(y, s)
// with s an int64 feed (on the host: part of the feed signature)
const MODEL = encodeModel({
  name: 'capture',
  nodes: [
    { op: 'MatMul', inputs: ['x', 'w'], outputs: ['xw'] },
    { op: 'Add', inputs: ['xw', 'b'], outputs: ['z'] },
    { op: 'Relu', inputs: ['z'], outputs: ['y'] },
    { op: 'Transpose', inputs: ['y'], outputs: ['yt'], attrs: { perm: attr.ints([1, 0]) } },
    { op: 'Shape', inputs: ['x'], outputs: ['shape'] },
    { op: 'Reshape', inputs: ['y', 's'], outputs: ['r'] },
  ],
  inputs: [
    { name: 'x', dtype: 'float32', shape: ['n', 8] },
    { name: 's', dtype: 'int64', shape: [2] },
  ],
  outputs: [
    { name: 'y', dtype: 'float32' },
    { name: 'yt', dtype: 'float32' },
    { name: 'shape', dtype: 'int64' },
    { name: 'r', dtype: 'float32' },
  ],
  initializers: [
    { name: 'w', dtype: 'float32', dims: [8, 5], data: W },
    { name: 'b', dtype: 'float32', dims: [5], data: B },
  ],
});

// y = If(ReduceSum(x) > 0) then x·2 else −x: the condition is computed on the device and read back
const IF_MODEL = encodeModel({
  name: 'device-condition',
  nodes: [
    { op: 'ReduceSum', inputs: ['x'], outputs: ['sum'], attrs: { keepdims: attr.int(0) } },
    { op: 'Greater', inputs: ['sum', 'zero'], outputs: ['cond'] },
    {
      op: 'If',
      inputs: ['cond'],
      outputs: ['y'],
      attrs: {
        then_branch: attr.graph({
          nodes: [{ op: 'Add', inputs: ['x', 'x'], outputs: ['t'] }],
          inputs: [],
          outputs: [{ name: 't', dtype: 'float32' }],
        }),
        else_branch: attr.graph({
          nodes: [{ op: 'Neg', inputs: ['x'], outputs: ['e'] }],
          inputs: [],
          outputs: [{ name: 'e', dtype: 'float32' }],
        }),
      },
    },
  ],
  inputs: [{ name: 'x', dtype: 'float32', shape: [4] }],
  outputs: [{ name: 'y', dtype: 'float32', shape: [4] }],
  initializers: [{ name: 'zero', dtype: 'float32', dims: [], data: [0] }],
});

/** Deterministic inputs in [−1, 1), different per `seed`. */
const data = (n: number, seed: number): Float32Array =>
  Float32Array.from({ length: n }, (_, i) => Math.fround(Math.sin(seed * 97.1 + i * 12.9898) % 1));

const feeds = (n: number, seed: number) => ({
  x: { dtype: 'float32', dims: [n, 8], data: data(n * 8, seed) },
  s: { dtype: 'int64', dims: [2], data: BigInt64Array.from([5n, BigInt(n)]) },
});

/** relu(x·W + b) in float64. */
function oracle(x: Float32Array, n: number): number[] {
  const y: number[] = [];
  for (let i = 0; i < n; i++)
    for (let j = 0; j < 5; j++) {
      let acc = B[j]!;
      for (let k = 0; k < 8; k++) acc += x[i * 8 + k]! * W[k * 5 + j]!;
      y.push(Math.max(0, acc));
    }
  return y;
}

const bits = (t: OutputTensor): number[] => Array.prototype.map.call(t.data, Number) as number[];
const sameBits = (a: OutputTensor, b: OutputTensor): boolean =>
  a.dims.join() === b.dims.join() && bits(a).every((v, i) => Object.is(v, bits(b)[i]));

describe('InferenceSession graph capture on webgpu', () => {
  let be: ComputeBackend;
  beforeAll(async () => {
    be = await REPO_BACKENDS['webgpu']!();
  });
  afterAll(() => be?.dispose());

  test('runs 2+ of a signature are captured, then replayed: the eager bits, one submission each', async () => {
    const live = be.liveBufferCount();
    const eager = await InferenceSession.create(MODEL, { backend: be, enableGraphCapture: false });
    const s = await InferenceSession.create(MODEL, { backend: be });
    expect(s.graphCapture.enabled).toBe(true);
    expect(eager.graphCapture.enabled).toBe(false);
    const k = be as unknown as Kernels;
    const modes: string[] = [];
    const kernels: number[] = [];
    // signature A (n = 3) four times, then B (n = 6) three times, then A again; seeds 1..8
    const sizes = [3, 3, 3, 3, 6, 6, 6, 3];
    for (const [k0, n] of sizes.entries()) {
      const seed = k0 + 1;
      const f = feeds(n, seed);
      const before = k.kernelStats();
      const got = await s.run(f);
      const after = k.kernelStats();
      const run = s.lastRun!;
      modes.push(run.replayed ? 'replay' : run.captured ? 'capture' : 'eager');
      kernels.push(after.dispatches - before.dispatches);
      if (run.replayed) {
        expect(run.plans).toBe(0);
        // one submission for the work (under 48 steps: one part), one per output read back (y, yt, r)
        expect(after.submissions - before.submissions).toBeLessThanOrEqual(1 + 3);
      }
      const want = await eager.run(f);
      for (const name of ['y', 'yt', 'shape', 'r']) expect(sameBits(got[name]!, want[name]!)).toBe(true);
      const ref = oracle(f.x.data, n);
      bits(got['y']!).forEach((v, i) => expect(Math.abs(v - ref[i]!)).toBeLessThanOrEqual(1e-5));
      expect(got['yt']!.dims).toEqual([5, n]);
      expect(bits(got['shape']!)).toEqual([n, 8]);
      expect(got['r']!.dims).toEqual([5, n]);
    }
    expect(modes).toEqual(['eager', 'capture', 'replay', 'replay', 'eager', 'capture', 'replay', 'replay']);
    // a replay dispatches what the captured run did (the contiguous copy of yt was recorded with it)
    expect(kernels[2]).toBe(kernels[3]);
    expect(kernels[2]).toBeGreaterThanOrEqual(3);
    expect(s.graphCapture.runs).toBe(2);
    expect(s.graphCapture.bytes).toBeGreaterThan(0);
    await s.release();
    await eager.release();
    expect(be.liveBufferCount()).toBe(live);
  });

  test('a condition read back from the device refuses the capture; runs stay eager and right', async () => {
    const s = await InferenceSession.create(IF_MODEL, { backend: be });
    for (const seed of [1, 2, 3, 4]) {
      const x = data(4, seed);
      const { y } = await s.run({ x: { dtype: 'float32', dims: [4], data: x } });
      const sum = x.reduce((a, v) => a + v, 0);
      expect(bits(y!)).toEqual(Array.from(x, (v) => (sum > 0 ? v + v : -v)));
      expect(s.lastRun!.replayed).toBe(false);
      expect(s.lastRun!.deviceReads).toBe(1);
    }
    expect(s.graphCapture.runs).toBe(0);
    expect(s.graphCapture.refused).toHaveLength(1);
    expect(s.graphCapture.refused[0]).toMatch(/read of buffer/);
    await s.release();
  });

  test('onNode runs eagerly and is never captured', async () => {
    // 'basic': the model's own six nodes (the default level fuses its elementwise chain into one node)
    const s = await InferenceSession.create(MODEL, { backend: be, graphOptimizationLevel: 'basic' });
    for (const seed of [1, 2, 3]) {
      let nodes = 0;
      await s.run(feeds(2, seed), { onNode: () => void nodes++ });
      expect(nodes).toBe(6);
      expect(s.lastRun!.captured || s.lastRun!.replayed).toBe(false);
    }
    await s.release();
  });
});

describe('capture at the HAL level (webgpu)', () => {
  let be: ComputeBackend;
  beforeAll(async () => {
    be = await REPO_BACKENDS['webgpu']!();
  });
  afterAll(() => be?.dispose());

  /** Records y = exp(x) · x + 1 on a 64-element input; its temporaries are freed inside the capture. */
  function capture(): { work: CapturedWork; x: ReturnType<ComputeBackend['fromArray']> } {
    const x = be.fromArray(data(64, 0), [64]);
    be.beginCapture!([x.buffer]);
    const e = be.exp(x);
    const p = be.mul(e, x);
    be.free(e);
    const y = be.add(p, 1);
    be.free(p);
    const r = be.endCapture!([y.buffer]);
    be.free(y);
    if (!('work' in r)) throw new Error(r.broken);
    return { work: r.work, x };
  }

  test('replays with new inputs equal the eager ops, bit for bit; later arrays are never touched', async () => {
    const { work, x } = capture();
    be.free(x);
    expect(work.kernels).toBe(1); // exp, mul and add fused into one kernel while captured (fuseInCapture)
    // arrays created after the capture: the pool must not hand out the recording's buffers
    const others = Array.from({ length: 8 }, (_, i) => be.fromArray(data(64, 100 + i), [64]));
    for (const seed of [1, 2, 3]) {
      const input = data(64, seed);
      work.replay([input]);
      const got = await work.read(0);
      const xe = be.fromArray(input, [64]);
      const e = be.exp(xe);
      const p = be.mul(e, xe);
      const want = await be.read(be.add(p, 1));
      expect(Array.from(got).every((v, i) => Object.is(v, want[i]))).toBe(true);
    }
    for (const [i, o] of others.entries()) expect(Array.from(await be.read(o))).toEqual(Array.from(data(64, 100 + i)));
    work.release();
    expect(() => work.replay([data(64, 1)])).toThrow(UseAfterFreeError);
    await expect(work.read(0)).rejects.toThrow(UseAfterFreeError);
  });

  test('device arrays as inputs, copies of the outputs, and a freed weight named at the next replay', async () => {
    const w = be.fromArray(data(64, 9), [64]); // a weight: read by the work, never written
    const x = be.fromArray(data(64, 0), [64]);
    be.beginCapture!([x.buffer]);
    const p = be.mul(x, w);
    const y = be.add(p, 0.5);
    be.free(p);
    const r = be.endCapture!([y.buffer]);
    be.free(y);
    be.free(x);
    if (!('work' in r)) throw new Error(r.broken);
    const outs = [];
    for (const seed of [1, 2]) {
      const input = be.fromArray(data(64, seed), [64]);
      r.work.replay([input]);
      be.free(input); // the copy into the recording's input was encoded already
      outs.push(r.work.copyOutput(0, [8, 8]));
    }
    for (const [k, seed] of [1, 2].entries()) {
      expect(outs[k]!.shape).toEqual([8, 8]);
      const want = Array.from(data(64, seed), (v, i) => Math.fround(Math.fround(v * data(64, 9)[i]!) + 0.5));
      expect(Array.from(await be.read(outs[k]!))).toEqual(want); // each copy kept its replay's values
      be.free(outs[k]!);
    }
    const short = be.fromArray(data(32, 1), [32]);
    expect(() => r.work.replay([short])).toThrow(ShapeMismatchError);
    be.free(short);
    be.free(w);
    expect(() => r.work.replay([data(64, 3)])).toThrow(/a weight\?\), was freed/);
    r.work.release();
  });

  test('misuse gets typed errors: nested capture, no capture, inputs that do not fit', async () => {
    expect(() => be.endCapture!([])).toThrow(InvalidArgumentError);
    const x = be.fromArray([1, 2], [2]);
    be.beginCapture!([x.buffer]);
    expect(() => be.beginCapture!([x.buffer])).toThrow(InvalidArgumentError);
    be.abortCapture!();
    be.abortCapture!(); // nothing running: nothing happens
    const { work } = capture();
    expect(() => work.replay([])).toThrow(ShapeMismatchError);
    expect(() => work.replay([new Float32Array(3)])).toThrow(ShapeMismatchError);
    expect(() => work.replay([new Int32Array(64)])).toThrow(/Float32Array|float32/);
    work.release();
    // a read inside a capture makes it unreplayable
    be.beginCapture!([x.buffer]);
    const y = be.exp(x);
    await be.read(y);
    const r = be.endCapture!([y.buffer]);
    expect('broken' in r && r.broken).toMatch(/read of buffer/);
  });

  test('cpu and wasm have no capture; a session there reports it off and runs eagerly', async () => {
    for (const name of ['cpu', 'wasm']) {
      const b = await REPO_BACKENDS[name]!();
      expect(b.beginCapture).toBeUndefined();
      const s = await InferenceSession.create(MODEL, { backend: b });
      expect(s.graphCapture.enabled).toBe(false);
      for (const seed of [1, 2, 3]) await s.run(feeds(2, seed));
      expect(s.lastRun!.replayed).toBe(false);
      await s.release();
      b.dispose();
    }
  });
});
