// The narrow dtypes in the autograd package: cast between float32 and float16 passes the gradient (and
// casts to integers stop it), tensors print their values and dtype, and safetensors stores F16, I8 and
// U8 as the format specifies (IEEE binary16 bits, one byte each) and reads them back bit for bit.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { loadSafetensors, saveSafetensors, Tensor } from '@polyhal/autograd';
import { CpuBackend } from '@polyhal/backend-cpu';
import { createWasmBackend } from '@polyhal/backend-wasm';
import { type ComputeBackend, type DType, roundFloat16 } from '@polyhal/hal';

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

const t = (values: number[], shape: number[], opts: { dtype?: DType; requiresGrad?: boolean } = {}): Tensor =>
  Tensor.fromArray(cpu, values, shape, opts);

describe('cast gradients', () => {
  test('float32 → float16 → float32: the gradient of a product passes through both casts', () => {
    const x = t([0.1, -2, 3.3], [3], { requiresGrad: true });
    const w = t([1.5, 0.25, -4], [3]);
    const h = x.cast('float16');
    expect(h.dtype).toBe('float16');
    expect(Array.from(h.dataSync())).toEqual([0.1, -2, 3.3].map(roundFloat16));
    const y = ag.sum(ag.mul(h.cast('float32'), w));
    y.backward();
    // d/dx Σ w·f32(f16(x)) = w (the casts pass g through)
    expect(Array.from(x.grad!.dataSync())).toEqual([1.5, 0.25, -4]);
    expect(x.grad!.dtype).toBe('float32');
  });

  test('a float16 leaf gets a float16 gradient, rounded from the float32 one', () => {
    const x = t([1, 2], [2], { dtype: 'float16', requiresGrad: true });
    const y = ag.sum(ag.mul(x.cast('float32'), t([0.1, 3], [2])));
    y.backward();
    expect(x.grad!.dtype).toBe('float16');
    expect(Array.from(x.grad!.dataSync())).toEqual([roundFloat16(Math.fround(0.1)), 3]);
  });

  test('casts to integers and bool carry no gradient', () => {
    const x = t([1.5, -2], [2], { requiresGrad: true });
    for (const dtype of ['int8', 'uint8', 'int32', 'bool'] as const) expect(x.cast(dtype).requiresGrad).toBe(false);
  });
});

describe('printing', () => {
  test('int8, uint8 and float16 tensors print their values and dtype', () => {
    expect(t([1, -2, 127], [3], { dtype: 'int8' }).toString()).toBe(
      'tensor([  1,  -2, 127], shape=[3], dtype=int8, backend=cpu)',
    );
    expect(t([0, 255], [2], { dtype: 'uint8' }).toString()).toBe(
      'tensor([  0, 255], shape=[2], dtype=uint8, backend=cpu)',
    );
    expect(t([0.1, 2], [2], { dtype: 'float16' }).toString()).toBe(
      'tensor([0.1000, 2.0000], shape=[2], dtype=float16, backend=cpu)',
    );
    expect(t([1, 70000], [2], { dtype: 'float16' }).toString()).toBe(
      'tensor([ 1., inf], shape=[2], dtype=float16, backend=cpu)',
    );
  });
});

describe('safetensors', () => {
  test('F16, I8, U8: binary16 little-endian and single bytes; round trips keep every bit', async () => {
    const halfValues = [0.1, -0, 65504, Infinity, 2 ** -24, -1.5];
    const bytes = await saveSafetensors({
      h: t(halfValues, [2, 3], { dtype: 'float16' }),
      i: t([-128, 127, -1], [3], { dtype: 'int8' }),
      u: t([0, 200, 255], [3], { dtype: 'uint8' }),
    });
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const n = Number(dv.getBigUint64(0, true));
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
    expect(header).toEqual({
      h: { dtype: 'F16', shape: [2, 3], data_offsets: [0, 12] },
      i: { dtype: 'I8', shape: [3], data_offsets: [12, 15] },
      u: { dtype: 'U8', shape: [3], data_offsets: [15, 18] },
    });
    const at = 8 + n;
    // binary16 bits written by hand: 0.1 → 0x2e66, −0 → 0x8000, 65504 → 0x7bff, Inf → 0x7c00,
    // 2^-24 → 0x0001, −1.5 → 0xbe00
    expect(Array.from({ length: 6 }, (_, k) => dv.getUint16(at + 2 * k, true))).toEqual([
      0x2e66, 0x8000, 0x7bff, 0x7c00, 0x0001, 0xbe00,
    ]);
    expect(Array.from(bytes.subarray(at + 12, at + 18))).toEqual([0x80, 0x7f, 0xff, 0, 200, 255]);
    const back = loadSafetensors(bytes, wasm).tensors;
    expect(back['h']!.dtype).toBe('float16');
    expect(Array.from(await back['h']!.data())).toEqual(halfValues.map(roundFloat16));
    expect(back['i']!.dtype).toBe('int8');
    expect(Array.from(await back['i']!.data())).toEqual([-128, 127, -1]);
    expect(back['u']!.dtype).toBe('uint8');
    expect(Array.from(await back['u']!.data())).toEqual([0, 200, 255]);
    for (const x of Object.values(back)) x.dispose();
  });

  test('a NaN float16 is stored as a quiet NaN and read back as NaN', async () => {
    const bytes = await saveSafetensors({ h: t([Number.NaN], [1], { dtype: 'float16' }) });
    const back = loadSafetensors(bytes, cpu).tensors['h']!;
    expect(Number.isNaN(back.dataSync()[0]!)).toBe(true);
    back.dispose();
  });
});
