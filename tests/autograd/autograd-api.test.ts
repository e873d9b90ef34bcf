// The autograd package's conveniences, held to real behaviour: method chaining (derived from the op
// table, gradients as the function form), toString as NumPy/PyTorch print, safetensors files laid out
// as the format's specification says, and state dicts that round-trip across backends.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { Linear, loadSafetensors, saveSafetensors, Sequential, Tensor, ReLU } from '@polyhal/autograd';
import { CpuBackend } from '@polyhal/backend-cpu';
import { createWasmBackend } from '@polyhal/backend-wasm';
import {
  BINARY_OPS,
  type ComputeBackend,
  type DType,
  DTypeError,
  InvalidArgumentError,
  REDUCE_OPS,
  ShapeMismatchError,
  UNARY_OPS,
} from '@polyhal/hal';

let cpu: CpuBackend;
let wasm: ComputeBackend;
beforeAll(async () => {
  cpu = new CpuBackend();
  wasm = await createWasmBackend();
});
afterAll(() => {
  cpu.dispose();
  wasm.dispose();
});

const t = (values: number[], shape: number[], opts: { dtype?: DType; requiresGrad?: boolean } = {}) =>
  Tensor.fromArray(cpu, values, shape, opts);

describe('method chaining', () => {
  test('every op of the table is a method', () => {
    for (const op of [...UNARY_OPS, ...BINARY_OPS, ...REDUCE_OPS])
      expect(typeof (Tensor.prototype as unknown as Record<string, unknown>)[op]).toBe('function');
  });

  test('x.matmul(w).add(b).relu().sum() equals the function form, values and gradients', async () => {
    const x = t([1, -2, 3, 0.5, 2, -1], [2, 3]);
    const w1 = t([0.1, -0.4, 0.3, 0.2, -0.5, 0.6], [3, 2], { requiresGrad: true });
    const b1 = t([0.05, -0.1], [2], { requiresGrad: true });
    const chained = x.matmul(w1).add(b1).relu().sum();
    chained.backward();
    const w2 = t([0.1, -0.4, 0.3, 0.2, -0.5, 0.6], [3, 2], { requiresGrad: true });
    const b2 = t([0.05, -0.1], [2], { requiresGrad: true });
    const plain = ag.sum(ag.relu(ag.add(ag.matmul(x, w2), b2)));
    plain.backward();
    expect(Array.from(chained.dataSync())).toEqual(Array.from(plain.dataSync()));
    expect(Array.from(w1.grad!.dataSync())).toEqual(Array.from(w2.grad!.dataSync()));
    expect(Array.from(b1.grad!.dataSync())).toEqual(Array.from(b2.grad!.dataSync()));
    // x·w1 + b1 = [[-1.95, 0.9], [1.2, -0.5]] → relu sum = 2.1
    expect(chained.dataSync()[0]).toBeCloseTo(2.1, 6);
    expect(x.reshape([3, 2]).transpose().mean(1).shape).toEqual([2]);
    expect(Array.from(x.mul(2).sub(1).max(1).dataSync())).toEqual([5, 3]);
    // argmax/argmin: int32, first index among ties, no gradient
    const am = x.argmax(1);
    expect(am.dtype).toBe('int32');
    expect(Array.from(am.dataSync())).toEqual([2, 1]);
    expect(Array.from(t([2, 7, 7, -1], [4]).argmax().dataSync())).toEqual([1]);
    expect(Array.from(t([2, 7, 7, -1], [4]).argmax(0, false, { lastIndex: true }).dataSync())).toEqual([2]);
    expect(Array.from(x.argmin(0, true).dataSync())).toEqual([1, 0, 1]); // columns [1, 0.5], [-2, 2], [3, -1]
  });
});

describe('the backward engine takes views of g over', () => {
  test('inputs given one gradient get it once each, also when the first already holds one', async () => {
    const live = cpu.liveBufferCount();
    for (const order of [0, 1]) {
      const x = t([1, -2, 3, 0.5], [2, 2], { requiresGrad: true });
      await ag.scope(async () => {
        const a = x.mul(2);
        const parts = [a.mul(1), a.add(a)];
        const loss = (order ? parts[0]!.add(parts[1]!) : parts[1]!.add(parts[0]!)).sum();
        loss.backward();
      });
      expect(Array.from(x.grad!.dataSync())).toEqual([6, 6, 6, 6]);
      x.grad!.dispose();
      x.dispose();
    }
    expect(cpu.liveBufferCount()).toBe(live);
  });

  test('gradients through reshape, permute, expand, pad and mean arrive whole at the leaves', async () => {
    const live = cpu.liveBufferCount();
    const x = t([1, 2, 3, 4, 5, 6], [2, 3], { requiresGrad: true });
    const w = t([0.5, -1, 2, 0.25, 1, -0.5], [2, 3], { requiresGrad: true });
    await ag.scope(async () => {
      const y = x.pad([
        [1, 0],
        [0, 2],
      ]);
      const z = y.reshape([15]).reshape([3, 5]).transpose().mean(1, true).expand([5, 4]);
      const lin = x.matmul(w.transpose()).mul(x.sum(1, true));
      z.sum().add(lin.sum()).backward();
    });
    for (const p of [x, w]) expect(p.grad!.isWhole).toBe(true);
    // z: each x element lands once in a column mean of 3 (4 copies): 4/3; lin: Σ_j x·w_j·s with s = Σ x
    const xv = [1, 2, 3, 4, 5, 6];
    const wv = [0.5, -1, 2, 0.25, 1, -0.5];
    const expectX = xv.map((_, idx) => {
      const i = Math.floor(idx / 3);
      const k = idx % 3;
      const row = xv.slice(3 * i, 3 * i + 3);
      const s = row.reduce((p, v) => p + v, 0);
      const dots = [0, 1].map((j) => row.reduce((p, v, kk) => p + v * wv[3 * j + kk]!, 0));
      return 4 / 3 + (wv[k]! + wv[3 + k]!) * s + dots[0]! + dots[1]!;
    });
    Array.from(x.grad!.dataSync()).forEach((v, i) => expect(v).toBeCloseTo(expectX[i]!, 4));
    const expectW = wv.map((_, idx) => {
      const k = idx % 3;
      return [0, 1].reduce((p, i) => p + xv[3 * i + k]! * xv.slice(3 * i, 3 * i + 3).reduce((q, v) => q + v, 0), 0);
    });
    Array.from(w.grad!.dataSync()).forEach((v, i) => expect(v).toBeCloseTo(expectW[i]!, 4));
    for (const p of [x, w]) {
      p.grad!.dispose();
      p.dispose();
    }
    expect(cpu.liveBufferCount()).toBe(live);
  });
});

describe('toString', () => {
  test('as PyTorch prints: aligned columns, four decimals, rows on their own lines', () => {
    const x = t([1, 2.5, -3, 4], [2, 2]);
    expect(x.toString()).toBe(
      'tensor([[ 1.0000,  2.5000],\n        [-3.0000,  4.0000]], shape=[2, 2], dtype=float32, backend=cpu)',
    );
    expect(t([1, 2, 3], [3]).toString()).toBe('tensor([1., 2., 3.], shape=[3], dtype=float32, backend=cpu)');
    expect(t([1, -20, 300], [3], { dtype: 'int32' }).toString()).toBe(
      'tensor([  1, -20, 300], shape=[3], dtype=int32, backend=cpu)',
    );
    expect(t([NaN, Infinity, 0.5], [3]).toString()).toBe(
      'tensor([   nan,    inf, 0.5000], shape=[3], dtype=float32, backend=cpu)',
    );
    expect(t([1e-6, 2], [2]).toString()).toBe('tensor([1.0000e-6, 2.0000e+0], shape=[2], dtype=float32, backend=cpu)');
    expect(t([7], []).toString()).toBe('tensor(7., shape=[], dtype=float32, backend=cpu)');
  });

  test('bool prints true and false; comparisons chain', () => {
    const x = t([1, NaN, -2], [3]);
    expect(x.greater(0).toString()).toBe('tensor([ true, false, false], shape=[3], dtype=bool, backend=cpu)');
    expect(x.isnan().logicalNot().toString()).toBe('tensor([ true, false,  true], shape=[3], dtype=bool, backend=cpu)');
  });

  test('more than 1,000 elements: the first and last 3 along each dim, as NumPy summarizes', () => {
    const x = t(
      Array.from({ length: 2000 }, (_, i) => i),
      [2000],
    );
    expect(x.toString()).toBe(
      'tensor([   0.,    1.,    2., ..., 1997., 1998., 1999.], shape=[2000], dtype=float32, backend=cpu)',
    );
    const m = t(
      Array.from({ length: 40 * 40 }, (_, i) => i % 10),
      [40, 40],
    );
    const lines = m.toString().split('\n');
    expect(lines.length).toBe(7); // 3 rows, '...', 3 rows
    expect(lines[0]).toBe('tensor([[0., 1., 2., ..., 7., 8., 9.],');
    expect(lines[3]).toBe('        ...,');
  });

  test('the graph and the grad flag are shown; a disposed tensor says so', () => {
    const a = t([1, 2], [2], { requiresGrad: true });
    expect(a.toString()).toMatch(/, requiresGrad=true\)$/);
    const b = a.add(1);
    expect(b.toString()).toMatch(/, gradFn=add\)$/);
    b.dispose();
    expect(b.toString()).toBe('tensor(<disposed>, shape=[2], dtype=float32, backend=cpu)');
  });

  test('format() reads from any backend', async () => {
    const x = Tensor.fromArray(wasm, [0.25, -1], [2]);
    expect(await x.format()).toBe('tensor([ 0.2500, -1.0000], shape=[2], dtype=float32, backend=wasm)');
  });
});

describe('safetensors', () => {
  test('the bytes follow the specification: u64 LE header length, padded JSON header, little-endian data', async () => {
    const bytes = await saveSafetensors(
      { w: t([1.5, -2], [1, 2]), i: t([7, -1], [2], { dtype: 'int32' }) },
      { format: 'pt' },
    );
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const n = Number(dv.getBigUint64(0, true));
    expect((8 + n) % 8).toBe(0);
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
    expect(header).toEqual({
      __metadata__: { format: 'pt' },
      i: { dtype: 'I32', shape: [2], data_offsets: [0, 8] },
      w: { dtype: 'F32', shape: [1, 2], data_offsets: [8, 16] },
    });
    expect(bytes.length).toBe(8 + n + 16);
    const data = 8 + n;
    expect([dv.getInt32(data, true), dv.getInt32(data + 4, true)]).toEqual([7, -1]);
    expect([dv.getFloat32(data + 8, true), dv.getFloat32(data + 12, true)]).toEqual([1.5, -2]);
  });

  test('a file written by hand from the specification loads; round trips keep every bit', async () => {
    const json = '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}';
    const head = new TextEncoder().encode(json);
    const file = new Uint8Array(8 + head.length + 8);
    const dv = new DataView(file.buffer);
    dv.setBigUint64(0, BigInt(head.length), true);
    file.set(head, 8);
    dv.setFloat32(8 + head.length, 3.25, true);
    dv.setFloat32(8 + head.length + 4, -0, true);
    const { tensors } = loadSafetensors(file, cpu);
    expect(Array.from(tensors['a']!.dataSync())).toEqual([3.25, -0]);
    const values = [Math.PI, -0, NaN, Infinity, 1e-40, -3.4e38];
    const back = loadSafetensors(await saveSafetensors({ x: t(values, [2, 3]) }), wasm).tensors['x']!;
    expect(back.shape).toEqual([2, 3]);
    expect(Array.from(await back.data())).toEqual(values.map(Math.fround));
  });

  test('bool tensors are stored as BOOL, one byte each, and read back; a byte other than 0 is true', async () => {
    const bytes = await saveSafetensors({ m: t([1, 0, 0, 1, 1], [5], { dtype: 'bool' }) });
    const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
    expect(header.m).toEqual({ dtype: 'BOOL', shape: [5], data_offsets: [0, 5] });
    expect(Array.from(bytes.subarray(8 + n))).toEqual([1, 0, 0, 1, 1]);
    bytes[8 + n + 1] = 7;
    const back = loadSafetensors(bytes, wasm).tensors['m']!;
    expect(back.dtype).toBe('bool');
    expect(Array.from(await back.data())).toEqual([1, 1, 0, 1, 1]);
  });

  test('malformed files are typed errors and allocate nothing', async () => {
    const good = await saveSafetensors({ a: t([1, 2], [2]), b: t([3], [1]) });
    const n = Number(new DataView(good.buffer).getBigUint64(0, true));
    const withHeader = (h: string): Uint8Array => {
      const head = new TextEncoder().encode(h);
      const f = new Uint8Array(8 + head.length + 12);
      new DataView(f.buffer).setBigUint64(0, BigInt(head.length), true);
      f.set(head, 8);
      return f;
    };
    const live = cpu.liveBufferCount();
    expect(() => loadSafetensors(good.subarray(0, 5), cpu)).toThrow(InvalidArgumentError);
    expect(() => loadSafetensors(good.subarray(0, 8 + n - 1), cpu)).toThrow(InvalidArgumentError);
    expect(() => loadSafetensors(withHeader('{"a": [1, 2'), cpu)).toThrow(InvalidArgumentError);
    expect(() => loadSafetensors(withHeader('{"a":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}}'), cpu)).toThrow(
      DTypeError,
    );
    expect(() => loadSafetensors(withHeader('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,16]}}'), cpu)).toThrow(
      InvalidArgumentError,
    );
    expect(() => loadSafetensors(withHeader('{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}'), cpu)).toThrow(
      ShapeMismatchError,
    );
    expect(() =>
      loadSafetensors(
        withHeader(
          '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},' +
            '"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}',
        ),
        cpu,
      ),
    ).toThrow(/overlap/);
    expect(cpu.liveBufferCount()).toBe(live);
  });
});

describe('state dicts', () => {
  const model = (be: ComputeBackend, seed: number) =>
    new Sequential(
      new Linear(4, 3, { backend: be, rng: seed }),
      new ReLU(),
      new Linear(3, 2, { backend: be, rng: seed + 1 }),
    );

  test('saved through safetensors and loaded into another model (on another backend), the outputs agree', async () => {
    const a = model(cpu, 1);
    const b = model(wasm, 99);
    const x = [0.5, -1, 2, 0.25, 1, 1, -0.5, 0];
    const ya = a.forward(t(x, [2, 4]));
    expect(Object.keys(a.stateDict())).toEqual(['0.weight', '0.bias', '2.weight', '2.bias']);
    const before = b.parameters();
    const { tensors } = loadSafetensors(await saveSafetensors(a.stateDict()), cpu);
    expect(await b.loadStateDict(tensors)).toEqual({ missing: [], unexpected: [] });
    for (const v of Object.values(tensors)) v.dispose();
    expect(b.parameters()).toEqual(before); // the same tensor objects, updated in place
    const yb = Array.from(await b.forward(Tensor.fromArray(wasm, x, [2, 4])).data());
    // the same weights on both backends: equal up to the summation order of their matmuls
    Array.from(ya.dataSync()).forEach((v, i) =>
      expect(Math.abs(yb[i]! - v)).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(v))),
    );
    expect(yb.some((v) => v !== 0)).toBe(true);
  });

  test('a wrong shape, dtype or name set is a typed error before anything is copied', async () => {
    const a = model(cpu, 1);
    const w0 = Array.from(a.stateDict()['0.weight']!.dataSync());
    const state = { ...a.stateDict() };
    await expect(a.loadStateDict({ ...state, '2.bias': t([1, 2, 3], [3]) })).rejects.toThrow(ShapeMismatchError);
    await expect(
      a.loadStateDict({
        ...state,
        '2.bias': t([1, 2], [2], { dtype: 'int32' }),
        '0.weight': t(new Array(12).fill(0), [3, 4]),
      }),
    ).rejects.toThrow(DTypeError);
    await expect(a.loadStateDict({ '0.weight': state['0.weight']!, extra: t([1], [1]) })).rejects.toThrow(
      /missing 0\.bias, 2\.weight, 2\.bias; unexpected extra/,
    );
    expect(Array.from(a.stateDict()['0.weight']!.dataSync())).toEqual(w0);
    expect(await a.loadStateDict({ '0.bias': t([1, 2, 3], [3]) }, { strict: false })).toEqual({
      missing: ['0.weight', '2.weight', '2.bias'],
      unexpected: [],
    });
    expect(Array.from(a.stateDict()['0.bias']!.dataSync())).toEqual([1, 2, 3]);
  });
});

describe('shared gradients', () => {
  test('a gradient passed on to two inputs is shared, not copied, and each leaf gets a .grad of its own', async () => {
    // z = sum((x·2 + y) + y): add's rule hands one g to both inputs twice over. The engine keeps one buffer
    // with several owners, copying only where it becomes a leaf's .grad.
    const live = cpu.liveBufferCount();
    const x = t([1, 2, 3], [3], { requiresGrad: true });
    const y = t([4, 5, 6], [3], { requiresGrad: true });
    const w = t([1, -1], [2], { requiresGrad: true });
    const contiguous = cpu.contiguous;
    let copies = 0;
    cpu.contiguous = (v) => {
      copies++;
      return contiguous.call(cpu, v);
    };
    try {
      await ag.scope(async () => {
        ag.sum(ag.add(ag.add(ag.mul(x, 2), y), y)).backward();
        // add(w, w): the same leaf twice, its gradient the sum of both shares.
        ag.sum(ag.add(w, w)).backward();
      });
    } finally {
      cpu.contiguous = contiguous;
    }
    // Copying every second owner's share made 5 copies here; with shared owners there are 2.
    expect(copies).toBeLessThanOrEqual(2);
    expect(Array.from(await x.grad!.data())).toEqual([2, 2, 2]);
    expect(Array.from(await y.grad!.data())).toEqual([2, 2, 2]);
    expect(Array.from(await w.grad!.data())).toEqual([2, 2]);
    expect(x.grad!.value.buffer).not.toBe(y.grad!.value.buffer);
    for (const v of [x, y, w]) {
      v.grad!.dispose();
      v.dispose();
    }
    expect(cpu.liveBufferCount()).toBe(live);
  });
});
