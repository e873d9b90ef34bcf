import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ComputeBackend, InvalidArgumentError, PolyHalError, UseAfterFreeError } from '@polyhal/hal';
import {
  InferenceSession,
  OnnxFeedError,
  OnnxGraphError,
  OnnxInt64RangeError,
  OnnxNodeError,
  OnnxUnsupportedError,
  type OutputTensor,
} from '@polyhal/onnx';
import { Tensor } from '@polyhal/autograd';
import * as ort from 'onnxruntime-web';
import { openBackend, REPO_BACKENDS } from '../support/backends.js';
import { attr, encodeModel, type GraphSpec, type NodeSpec } from '../support/onnx-builder.js';

// InferenceSession on straight-line graphs: results against a float64 oracle written here, buffers
// counted over 100 runs, bad feeds and unsupported models as typed errors, host shape arithmetic,
// memory freed after each value's last use.

/** A seeded list of n values in [-1, 1). */
function values(n: number, seed: number): number[] {
  let s = seed;
  return Array.from({ length: n }, () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return (s / 2 ** 31) * 2 - 1;
  });
}

// y = softmax(relu(x @ W + b)) over the last axis, x: [batch, 3], W: [3, 4], b: [4]
const W = values(12, 7);
const B = values(4, 11);
const MLP: GraphSpec = {
  name: 'mlp',
  nodes: [
    { op: 'MatMul', inputs: ['x', 'W'], outputs: ['xw'], name: 'matmul' },
    { op: 'Add', inputs: ['xw', 'b'], outputs: ['h'], name: 'add' },
    { op: 'Relu', inputs: ['h'], outputs: ['r'], name: 'relu' },
    { op: 'Softmax', inputs: ['r'], outputs: ['y'], name: 'softmax', attrs: { axis: attr.int(-1) } },
  ],
  inputs: [{ name: 'x', dtype: 'float32', shape: ['batch', 3] }],
  outputs: [{ name: 'y', dtype: 'float32', shape: ['batch', 4] }],
  initializers: [
    { name: 'W', dtype: 'float32', dims: [3, 4], data: W },
    { name: 'b', dtype: 'float32', dims: [4], data: B },
  ],
};

function mlpOracle(x: readonly number[], batch: number): number[] {
  const out: number[] = [];
  for (let r = 0; r < batch; r++) {
    const h = [0, 1, 2, 3].map((j) =>
      Math.max(0, B[j]! + [0, 1, 2].reduce((s, k) => s + x[r * 3 + k]! * W[k * 4 + j]!, 0)),
    );
    const m = Math.max(...h);
    const e = h.map((v) => Math.exp(v - m));
    const z = e.reduce((s, v) => s + v, 0);
    out.push(...e.map((v) => v / z));
  }
  return out;
}

/** An output's values as numbers. */
const nums = (t: OutputTensor): number[] => Array.prototype.map.call(t.data, Number) as number[];
const f32 = (dims: number[], data: ArrayLike<number>) => ({ dtype: 'float32', dims, data: Float32Array.from(data) });

function expectClose(got: OutputTensor, want: readonly number[], tol: number): void {
  expect(got.data.length).toBe(want.length);
  const err = Math.max(0, ...want.map((w, i) => Math.abs(Number(got.data[i]) - w)));
  expect(err).toBeLessThanOrEqual(tol);
}

/** The error `f` rejects with (it must reject). */
async function rejection(f: () => Promise<unknown>): Promise<Error> {
  try {
    await f();
  } catch (e) {
    return e as Error;
  }
  throw new Error('resolved without an error');
}

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`InferenceSession on ${name}`, () => {
    let be: ComputeBackend | undefined;
    openBackend(name, factory, (b) => (be = b));

    test('a straight-line graph agrees with a float64 oracle; symbolic batch dims; names and stats', async () => {
      if (!be) return;
      const s = await InferenceSession.create(encodeModel(MLP), { backend: be });
      expect(s.inputNames).toEqual(['x']);
      expect(s.outputNames).toEqual(['y']);
      expect(s.backend).toBe(be);
      for (const batch of [2, 5, 2]) {
        const x = values(batch * 3, batch);
        const { y } = await s.run({ x: f32([batch, 3], x) });
        expect(y!.dtype).toBe('float32');
        expect(y!.dims).toEqual([batch, 4]);
        expect(y!.data).toBeInstanceOf(Float32Array);
        expectClose(y!, mlpOracle(x, batch), 2e-6);
      }
      // the third run (batch 2 again) reuses the plans of the first; MatMul, then Add(bias) → Relu fused into one
      // FusedElementwise node (fuse-elementwise.ts), then Softmax
      expect(s.lastRun).toMatchObject({ plans: 0, deviceNodes: 3, deviceReads: 0 });
      await s.release();
    });

    test('100 runs leave the live buffers unchanged; release() frees the constants', async () => {
      if (!be) return;
      const before = be.liveBufferCount();
      const s = await InferenceSession.create(encodeModel(MLP), { backend: be });
      const withConstants = be.liveBufferCount();
      expect(withConstants - before).toBe(2); // W and b, uploaded once
      expect(s.constantBytes).toBe(16 * 4);
      const x = f32([4, 3], values(12, 3));
      for (let i = 0; i < 100; i++) {
        await s.run({ x });
        expect(be.liveBufferCount()).toBe(withConstants);
      }
      // intermediates of [4, 4] float32 are 64 bytes; a run holds at most a few of them at once
      const peak = s.lastRun!.peakBytes;
      expect(peak).toBeGreaterThanOrEqual(64);
      expect(peak).toBeLessThanOrEqual(4 * 64 + 48);
      await s.release();
      expect(be.liveBufferCount()).toBe(before);
      await expect(s.run({ x })).rejects.toBeInstanceOf(UseAfterFreeError);
      await s.release(); // twice: nothing
    });

    test('bad feeds: typed errors before anything is uploaded, nothing leaked', async () => {
      if (!be) return;
      const s = await InferenceSession.create(encodeModel(MLP), { backend: be });
      const live = be.liveBufferCount();
      const cases: [unknown, string, RegExp][] = [
        [{ x: f32([1, 3], [1, 2, 3]), z: f32([1], [1]) }, 'unknown', /no input 'z'/],
        [{}, 'missing', /'x' is missing/],
        [
          { x: { dtype: 'int32', dims: [1, 3], data: Int32Array.of(1, 2, 3) } },
          'dtype',
          /int32, the model expects float32/,
        ],
        [{ x: f32([1, 4], [1, 2, 3, 4]) }, 'shape', /dims \[1, 4\], the model expects \[batch, 3\]/],
        [{ x: f32([3], [1, 2, 3]) }, 'shape', /dims \[3\]/],
        [{ x: { dtype: 'float32', dims: [2, 3], data: new Float32Array(5) } }, 'data', /5 values for dims \[2, 3\]/],
        [{ x: { dims: [1, 3], data: new Float32Array(3) } }, 'data', /dtype \(or type\), dims, data/],
        [null, 'data', /must be an object/],
      ];
      for (const [feeds, problem, message] of cases) {
        const e = await rejection(() => s.run(feeds as never));
        expect(e).toBeInstanceOf(OnnxFeedError);
        expect(e).toBeInstanceOf(PolyHalError);
        expect((e as OnnxFeedError).problem).toBe(problem);
        expect(e.message).toMatch(message);
        expect(be.liveBufferCount()).toBe(live);
      }
      // onnxruntime-web's Tensor ({ type, dims, data, ... }) is a feed as it is
      const { y } = await s.run({ x: new ort.Tensor('float32', Float32Array.of(0.5, -1, 2), [1, 3]) });
      expectClose(y!, mlpOracle([0.5, -1, 2], 1), 2e-6);
      await s.release();
    });

    test('int64: exact on the host, beyond int32 a typed error on a device (never wrapped)', async () => {
      if (!be) return;
      // y = x + 1 on int64; shape of x as a second output
      const model = encodeModel({
        nodes: [
          { op: 'Add', inputs: ['x', 'one'], outputs: ['y'] },
          { op: 'Shape', inputs: ['x'], outputs: ['s'] },
        ],
        inputs: [{ name: 'x', dtype: 'int64', shape: ['n'] }],
        outputs: [
          { name: 'y', dtype: 'int64', shape: ['n'] },
          { name: 's', dtype: 'int64', shape: [1] },
        ],
        initializers: [{ name: 'one', dtype: 'int64', dims: [], data: [1n] }],
      });
      const s = await InferenceSession.create(model, { backend: be });
      const live = be.liveBufferCount();
      // a small int64 feed stays on the host, where int64 arithmetic is exact
      const big = 2n ** 31n;
      const small = await s.run({ x: { dtype: 'int64', dims: [2], data: BigInt64Array.of(1n, big) } });
      expect(small['y']!.data).toEqual(BigInt64Array.of(2n, big + 1n));
      expect(s.lastRun).toMatchObject({ hostNodes: 2, deviceNodes: 0 });
      // a large one goes to the device, as int32: a value beyond that is a typed error before any upload
      const long = BigInt64Array.from({ length: 2000 }, (_, i) => BigInt(i));
      long[1999] = -(2n ** 40n);
      const e = await rejection(() => s.run({ x: { dtype: 'int64', dims: [2000], data: long } }));
      expect(e).toBeInstanceOf(OnnxInt64RangeError);
      expect(e.message).toMatch(/'x': int64 value -1099511627776 is outside int32's range/);
      expect(be.liveBufferCount()).toBe(live);
      const out = await s.run({ x: { dtype: 'int64', dims: [3], data: [5, -7, 2 ** 31 - 2] } });
      expect(out['y']!.data).toEqual(BigInt64Array.of(6n, -6n, 2n ** 31n - 1n));
      expect(out['s']!.data).toEqual(BigInt64Array.of(3n));
      expect(out['y']!.dtype).toBe('int64');
      await s.release();
      // an int64 constant beyond int32 that a device op reads: a typed error at create
      const wide = encodeModel({
        nodes: [{ op: 'Add', inputs: ['x', 'c'], outputs: ['y'] }],
        inputs: [{ name: 'x', dtype: 'int64', shape: [2000] }],
        outputs: [{ name: 'y', dtype: 'int64', shape: [2000] }],
        initializers: [
          { name: 'c', dtype: 'int64', dims: [2000], data: Array.from({ length: 2000 }, () => 2n ** 33n) },
        ],
      });
      const before = be.liveBufferCount();
      await expect(InferenceSession.create(wide, { backend: be })).rejects.toBeInstanceOf(OnnxInt64RangeError);
      expect(be.liveBufferCount()).toBe(before);
      // a host value beyond int32 that a device op reads (a small feed added to a large one): named, at upload
      const mixed = encodeModel({
        nodes: [{ op: 'Add', inputs: ['x', 'big'], outputs: ['y'] }],
        inputs: [
          { name: 'x', dtype: 'int64', shape: [1] },
          { name: 'big', dtype: 'int64', shape: [2000] },
        ],
        outputs: [{ name: 'y', dtype: 'int64', shape: [2000] }],
      });
      const m = await InferenceSession.create(mixed, { backend: be });
      const live2 = be.liveBufferCount();
      const zeros = { dtype: 'int64', dims: [2000], data: new BigInt64Array(2000) };
      const e2 = await rejection(() => m.run({ x: { dtype: 'int64', dims: [1], data: [2 ** 32] }, big: zeros }));
      expect(e2).toBeInstanceOf(OnnxInt64RangeError);
      expect(e2.message).toMatch(/'x': int64 value 4294967296/);
      expect(be.liveBufferCount()).toBe(live2);
      const ok = await m.run({ x: { dtype: 'int64', dims: [1], data: [-3] }, big: zeros });
      expect(ok['y']!.data).toEqual(new BigInt64Array(2000).fill(-3n));
      await m.release();
    });

    test('shape arithmetic (Shape, Gather, Unsqueeze, Concat, Slice, Cast, Mul) runs on the host', async () => {
      if (!be) return;
      // y = reshape(x, [x.shape[0] * 2, -1]) with the shape computed from x's shape, and z = x sliced to its
      // first half along axis 1 with the end computed as shape[1] / 2
      const i64 = (name: string, data: bigint[]) => ({ name, dtype: 'int64' as const, dims: [data.length], data });
      const nodes: NodeSpec[] = [
        { op: 'Shape', inputs: ['x'], outputs: ['shape'] },
        { op: 'Gather', inputs: ['shape', 'zero'], outputs: ['rows'], attrs: { axis: attr.int(0) } },
        { op: 'Mul', inputs: ['rows', 'two'], outputs: ['rows2'] },
        { op: 'Unsqueeze', inputs: ['rows2', 'axes0'], outputs: ['rows2v'] },
        { op: 'Concat', inputs: ['rows2v', 'minus1'], outputs: ['target'], attrs: { axis: attr.int(0) } },
        { op: 'Reshape', inputs: ['x', 'target'], outputs: ['y'] },
        { op: 'Slice', inputs: ['shape', 'one', 'two1'], outputs: ['cols'] },
        { op: 'Cast', inputs: ['cols'], outputs: ['colsf'], attrs: { to: attr.int(1) } },
        { op: 'Div', inputs: ['colsf', 'twof'], outputs: ['halff'] },
        { op: 'Cast', inputs: ['halff'], outputs: ['half'], attrs: { to: attr.int(7) } },
        { op: 'Slice', inputs: ['x', 'zero1', 'half', 'one'], outputs: ['z'] },
      ];
      const model = encodeModel({
        nodes,
        inputs: [{ name: 'x', dtype: 'float32', shape: ['r', 'c'] }],
        outputs: [
          { name: 'y', dtype: 'float32', shape: [null, null] },
          { name: 'z', dtype: 'float32', shape: [null, null] },
        ],
        initializers: [
          { name: 'zero', dtype: 'int64', dims: [], data: [0n] },
          { name: 'two', dtype: 'int64', dims: [], data: [2n] },
          i64('axes0', [0n]),
          i64('minus1', [-1n]),
          i64('one', [1n]),
          i64('two1', [2n]),
          i64('zero1', [0n]),
          { name: 'twof', dtype: 'float32', dims: [], data: [2] },
        ],
      });
      const s = await InferenceSession.create(model, { backend: be });
      const x = values(4 * 6, 5);
      const out = await s.run({ x: f32([4, 6], x) });
      expect(out['y']!.dims).toEqual([8, 3]);
      expect(nums(out['y']!)).toEqual(Array.from(Float32Array.from(x)));
      expect(out['z']!.dims).toEqual([4, 3]);
      const want = [0, 1, 2, 3].flatMap((r) => x.slice(r * 6, r * 6 + 3));
      expect(nums(out['z']!)).toEqual(Array.from(Float32Array.from(want)));
      // every shape node on the host, no device round trip; only Reshape and the data Slice on the device
      expect(s.lastRun).toMatchObject({ deviceReads: 0, deviceNodes: 2, hostNodes: 9 });
      await s.release();
    });

    test('each intermediate is freed after its last use: peak memory of a chain stays flat', async () => {
      if (!be) return;
      // 12 elementwise ops in a chain on 64 KiB, plus one value (x) read by the first and the last
      const n = 16384;
      const chain: NodeSpec[] = Array.from({ length: 12 }, (_, i) => ({
        op: i % 2 ? 'Neg' : 'Abs',
        inputs: [i ? `t${i - 1}` : 'x'],
        outputs: [`t${i}`],
      }));
      chain.push({ op: 'Add', inputs: ['t11', 'x'], outputs: ['y'] });
      const model = encodeModel({
        nodes: chain,
        inputs: [{ name: 'x', dtype: 'float32', shape: [n] }],
        outputs: [{ name: 'y', dtype: 'float32', shape: [n] }],
      });
      const s = await InferenceSession.create(model, { backend: be });
      const x = values(n, 9);
      const { y } = await s.run({ x: f32([n], x) });
      expectClose(
        y!,
        x.map((v) => Math.fround(v) - Math.abs(Math.fround(v))),
        0,
      );
      // x, the value being read and the one being written: 3 × 64 KiB, not 13 ×
      expect(s.lastRun!.peakBytes).toBeLessThanOrEqual(3 * 4 * n);
      await s.release();
    });

    test('an autograd Tensor on the session backend feeds in place, not freed; another backend is copied', async () => {
      if (!be) return;
      const s = await InferenceSession.create(encodeModel(MLP), { backend: be });
      const live = be.liveBufferCount();
      const x = values(6, 4);
      const t = Tensor.fromArray(be, x, [2, 3]);
      const { y } = await s.run({ x: t });
      expectClose(y!, mlpOracle(x, 2), 2e-6);
      expect(Array.from(await t.data())).toEqual(Array.from(Float32Array.from(x))); // still the caller's
      t.dispose();
      expect(be.liveBufferCount()).toBe(live);
      await expect(s.run({ x: t })).rejects.toThrow(/'x' is a disposed tensor/);
      const cpu = await REPO_BACKENDS['cpu']!();
      const other = Tensor.fromArray(cpu, x, [2, 3]);
      const { y: y2 } = await s.run({ x: other });
      expectClose(y2!, mlpOracle(x, 2), 2e-6);
      cpu.dispose();
      // the tensor's dtype is checked against the input's (an int32 one would feed an int64 input)
      const ints = Tensor.fromArray(be, [1, 2, 3], [1, 3], { dtype: 'int32' });
      const e = await rejection(() => s.run({ x: ints }));
      ints.dispose();
      expect(e).toBeInstanceOf(OnnxFeedError);
      expect(e.message).toMatch(/is a tensor of int32, the model expects float32/);
      await s.release();
    });

    test('a failing node is an OnnxNodeError naming it, and the run frees what it made', async () => {
      if (!be) return;
      // MatMul of [2, 3] by [k, 4]: k ≠ 3 fails inside the HAL (ShapeMismatchError)
      const model = encodeModel({
        nodes: [
          { op: 'Relu', inputs: ['x'], outputs: ['r'], name: 'first' },
          { op: 'MatMul', inputs: ['r', 'w'], outputs: ['y'], name: 'the_matmul' },
        ],
        inputs: [
          { name: 'x', dtype: 'float32', shape: [2, 3] },
          { name: 'w', dtype: 'float32', shape: ['k', 4] },
        ],
        outputs: [{ name: 'y', dtype: 'float32', shape: [2, 4] }],
      });
      const s = await InferenceSession.create(model, { backend: be });
      const live = be.liveBufferCount();
      const e = await rejection(() => s.run({ x: f32([2, 3], values(6, 1)), w: f32([5, 4], values(20, 2)) }));
      expect(e).toBeInstanceOf(OnnxNodeError);
      expect(e.message).toMatch(/the_matmul \(MatMul\) failed: ShapeMismatchError/);
      expect((e as OnnxNodeError).cause).toBeInstanceOf(PolyHalError);
      expect(be.liveBufferCount()).toBe(live);
      await s.release();
    });
  });
}

describe('InferenceSession.create checks the whole graph first', () => {
  let be: ComputeBackend;
  beforeAll(async () => {
    be = await REPO_BACKENDS['cpu']!();
  });
  afterAll(() => be.dispose());

  test('every unsupported node in one typed error (op, node name, reason), nothing uploaded', async () => {
    const model = encodeModel({
      nodes: [
        { op: 'Relu', inputs: ['x'], outputs: ['a'], name: 'fine' },
        { op: 'FancyOp', inputs: ['a'], outputs: ['b'], name: 'no_such_op' },
        { op: 'Gelu', inputs: ['b'], outputs: ['c'], name: 'ms_gelu', domain: 'com.microsoft' },
        // a branch the dry pass plans (its input shapes are known): an attribute no mapping reads
        { op: 'Relu', inputs: ['x'], outputs: ['d'], name: 'odd_attribute', attrs: { slope: attr.float(2) } },
        { op: 'Add', inputs: ['c', 'd'], outputs: ['e'], name: 'join' },
        { op: 'Add', inputs: ['e', 'w'], outputs: ['y'], name: 'uses_weights' },
      ],
      inputs: [{ name: 'x', dtype: 'float32', shape: [2, 3] }],
      outputs: [{ name: 'y', dtype: 'float32', shape: [2, 3] }],
      initializers: [{ name: 'w', dtype: 'float32', dims: [3], data: [1, 2, 3] }],
    });
    const live = be.liveBufferCount();
    const e = await rejection(() => InferenceSession.create(model, { backend: be }));
    expect(e).toBeInstanceOf(OnnxUnsupportedError);
    const nodes = (e as OnnxUnsupportedError).nodes;
    expect(nodes.map((u) => [u.node, u.op, u.kind])).toEqual([
      ['no_such_op', 'FancyOp', 'op'],
      ['ms_gelu', 'Gelu', 'op'],
      ['odd_attribute', 'Relu', 'attribute'],
    ]);
    expect(nodes[2]!.reason).toMatch(/'slope'/);
    expect(e.message).toMatch(/3 nodes this runtime cannot run/);
    expect(e.message).toMatch(/no_such_op \(FancyOp\): op FancyOp/);
    expect(be.liveBufferCount()).toBe(live);
    // the dry pass plans with the declared shapes (a symbolic dim probed): Softmax's axis 5 of rank 2
    const bad = encodeModel({
      nodes: [{ op: 'Softmax', inputs: ['x'], outputs: ['y'], name: 'bad_axis', attrs: { axis: attr.int(5) } }],
      inputs: [{ name: 'x', dtype: 'float32', shape: ['n', 3] }],
      outputs: [{ name: 'y', dtype: 'float32', shape: ['n', 3] }],
    });
    const e2 = await rejection(() => InferenceSession.create(bad, { backend: be }));
    expect(e2).toBeInstanceOf(OnnxUnsupportedError);
    expect((e2 as OnnxUnsupportedError).nodes[0]).toMatchObject({ node: 'bad_axis', kind: 'attribute' });
  });

  test('types the HAL has no dtype for, a value never defined, a cycle', async () => {
    const strings = encodeModel({
      nodes: [{ op: 'Identity', inputs: ['s'], outputs: ['t'], name: 'id' }],
      inputs: [{ name: 's', dtype: 'string', shape: [1] }],
      outputs: [{ name: 't', dtype: 'string', shape: [1] }],
    });
    const e = await rejection(() => InferenceSession.create(strings, { backend: be }));
    expect(e).toBeInstanceOf(OnnxUnsupportedError);
    expect(e.message).toMatch(/ONNX type string/);
    const undefinedValue = encodeModel({
      nodes: [{ op: 'Add', inputs: ['x', 'nowhere'], outputs: ['y'], name: 'add' }],
      inputs: [{ name: 'x', dtype: 'float32', shape: [1] }],
      outputs: [{ name: 'y', dtype: 'float32', shape: [1] }],
    });
    await expect(InferenceSession.create(undefinedValue, { backend: be })).rejects.toThrow(
      /node add \(Add\) reads 'nowhere', which is never defined/,
    );
    const cycle = encodeModel({
      nodes: [
        { op: 'Add', inputs: ['x', 'b'], outputs: ['a'], name: 'n1' },
        { op: 'Relu', inputs: ['a'], outputs: ['b'], name: 'n2' },
      ],
      inputs: [{ name: 'x', dtype: 'float32', shape: [1] }],
      outputs: [{ name: 'b', dtype: 'float32', shape: [1] }],
    });
    const c = await rejection(() => InferenceSession.create(cycle, { backend: be }));
    expect(c).toBeInstanceOf(OnnxGraphError);
    expect(c.message).toMatch(/n1, n2 form a cycle/);
  });

  test('a path: the model read with fs, its external data from its directory; an unreadable path', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'polyhal-session-'));
    try {
      // MLP with W stored outside the model, at offset 8 of weights.bin
      const bytes = new Uint8Array(8 + 48);
      new Float32Array(bytes.buffer, 8, 12).set(W);
      writeFileSync(join(dir, 'weights.bin'), bytes);
      const external = { location: 'weights.bin', offset: '8', length: '48' };
      const model = encodeModel({
        ...MLP,
        initializers: [
          { name: 'W', dtype: 'float32', dims: [3, 4], external },
          { name: 'b', dtype: 'float32', dims: [4], data: B },
        ],
      });
      writeFileSync(join(dir, 'mlp.onnx'), model);
      const s = await InferenceSession.create(join(dir, 'mlp.onnx'), { backend: be });
      const x = values(3, 12);
      expectClose((await s.run({ x: f32([1, 3], x) }))['y']!, mlpOracle(x, 1), 2e-6);
      await s.release();
      const e = await rejection(() => InferenceSession.create(join(dir, 'absent.onnx'), { backend: be }));
      expect(e).toBeInstanceOf(InvalidArgumentError);
      expect(e.message).toMatch(/cannot read .*absent\.onnx/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('freeDimensionOverrides fix symbolic dims by name: the check at create and every feed use them', async () => {
    const s = await InferenceSession.create(encodeModel(MLP), { backend: be, freeDimensionOverrides: { batch: 2 } });
    const x = values(6, 8);
    expectClose((await s.run({ x: f32([2, 3], x) }))['y']!, mlpOracle(x, 2), 2e-6);
    const e = await rejection(() => s.run({ x: f32([3, 3], values(9, 8)) }));
    expect(e).toBeInstanceOf(OnnxFeedError);
    expect(e.message).toMatch(/dims \[3, 3\], the model expects \[2, 3\]/);
    await s.release();
    await expect(
      InferenceSession.create(encodeModel(MLP), { backend: be, freeDimensionOverrides: { batch: -1 } }),
    ).rejects.toThrow(/freeDimensionOverrides.batch must be a size/);
  });

  test('nodes out of order run in topological order; a backend by name is created and disposed', async () => {
    const model = encodeModel({
      nodes: [
        { op: 'Neg', inputs: ['a'], outputs: ['y'] },
        { op: 'Abs', inputs: ['x'], outputs: ['a'] },
      ],
      inputs: [{ name: 'x', dtype: 'float32', shape: [3] }],
      outputs: [{ name: 'y', dtype: 'float32', shape: [3] }],
    });
    const s = await InferenceSession.create(model, { backend: 'cpu' });
    expect(s.backend.name).toBe('cpu');
    expect(s.selection?.chosen).toBe('cpu');
    const { y } = await s.run({ x: f32([3], [1, -2, 3]) });
    expect(nums(y!)).toEqual([-1, -2, -3]);
    await s.release();
    expect(() => s.backend.fromArray([1], [1])).toThrow(); // disposed
    // no backend: createBackend's usual selection, reported
    const auto = await InferenceSession.create(model);
    expect(Object.keys(REPO_BACKENDS)).toContain(auto.backend.name);
    expect(auto.selection?.chosen).toBe(auto.backend.name);
    expect(nums((await auto.run({ x: f32([3], [4, 0, -1]) }))['y']!)).toEqual([-4, -0, -1]);
    await auto.release();
    await expect(InferenceSession.create(model, { backend: 'no-such-backend' })).rejects.toThrow(/no-such-backend/);
  });
});
