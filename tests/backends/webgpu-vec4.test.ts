// The webgpu backend's 4-elements-per-invocation elementwise kernels (contiguous operands, offsets and
// count multiples of 4) against its one-element kernels (the same data at offset 1) bit for bit, and
// the exactly rounded ops against the cpu backend; counts that are not multiples of 4 and offsets that
// are not take the one-element kernels.
import { describe, expect, test } from '@jest/globals';
import type { BinaryOp, ComputeBackend, NDArray, UnaryOp } from '@polyhal/hal';
import { crossBackends } from '../support/cross-backend.js';

const fixture = crossBackends();
const SPECIAL = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 0, 1e-40, -1e-40, 3.5, -2];
const values = (n: number, seed: number): Float32Array =>
  Float32Array.from({ length: n }, (_, i) =>
    i % 7 === 0 ? SPECIAL[(i / 7 + seed) % SPECIAL.length]! : Math.sin(i * seed) * 4,
  );

/** `data` on a backend, once at offset 0 and once at offset 1 of a longer buffer (a view). */
function placed(be: ComputeBackend, data: Float32Array, offset: number): NDArray {
  const whole = be.fromArray(Float32Array.from([...new Array(offset).fill(9), ...data]), [data.length + offset]);
  return offset ? be.shrink(whole, [[offset, data.length + offset]]) : whole;
}
const bits = async (be: ComputeBackend, x: NDArray): Promise<Int32Array> => {
  const d = await be.read(x);
  return d instanceof Float32Array ? new Int32Array(d.buffer, d.byteOffset, d.length) : Int32Array.from(d);
};

describe('webgpu 4-wide elementwise kernels', () => {
  const need = (): ComputeBackend | undefined => fixture.backends['webgpu'];
  const BINARY: BinaryOp[] = ['add', 'sub', 'mul', 'div', 'maximum', 'minimum', 'less', 'equal', 'pow', 'mod'];
  const UNARY: UnaryOp[] = ['relu', 'neg', 'abs', 'exp', 'log', 'tanh', 'sigmoid', 'sqrt', 'floor'];
  for (const n of [1024, 1022]) {
    for (const op of BINARY)
      test(`${op}, ${n} elements: offset 0 equals offset 1 bit for bit`, async () => {
        const be = need();
        if (!be) return;
        const [a, b] = [values(n, 3), values(n, 5)];
        const r0 = be.binary(op, placed(be, a, 0), placed(be, b, 0));
        const r1 = be.binary(op, placed(be, a, 1), placed(be, b, 1));
        expect(await bits(be, r0)).toEqual(await bits(be, r1));
      });
    for (const op of UNARY)
      test(`${op}, ${n} elements: offset 0 equals offset 1 bit for bit`, async () => {
        const be = need();
        if (!be) return;
        const a = values(n, 3);
        const r0 = be.unary(op, placed(be, a, 0));
        const r1 = be.unary(op, placed(be, a, 1));
        expect(await bits(be, r0)).toEqual(await bits(be, r1));
      });
  }

  for (const op of BINARY)
    test(`${op} with a broadcast scalar operand (either side) equals it materialized, bit for bit`, async () => {
      const be = need();
      if (!be) return;
      const x = placed(be, values(1024, 3), 0);
      for (const v of [2.5, -0, Number.NaN]) {
        const s = be.expand(be.reshape(be.fromArray([v], [1]), [1]), [1024]);
        const full = be.contiguous(s);
        expect(await bits(be, be.binary(op, x, s))).toEqual(await bits(be, be.binary(op, x, full)));
        expect(await bits(be, be.binary(op, s, x))).toEqual(await bits(be, be.binary(op, full, x)));
      }
    });

  test('exactly rounded ops, 4-wide, equal the cpu backend bit for bit (float32, int32, bool)', async () => {
    const be = need();
    if (!be) return;
    const [a, b] = [values(4096, 3), values(4096, 5)];
    for (const op of ['add', 'sub', 'mul', 'div', 'maximum', 'minimum', 'less', 'equal'] as BinaryOp[]) {
      const ours = be.binary(op, be.fromArray(a, [64, 64]), be.fromArray(b, [64, 64]));
      const cpu = fixture.cpu.binary(op, fixture.cpu.fromArray(a, [64, 64]), fixture.cpu.fromArray(b, [64, 64]));
      expect([op, await bits(be, ours)]).toEqual([op, await bits(fixture.cpu, cpu)]);
    }
    const ints = Int32Array.from({ length: 4096 }, (_, i) => (i * 2654435761) | 0);
    const x = be.fromArray(ints, [4096]);
    expect(await be.read(be.binary('add', x, x))).toEqual(
      await fixture.cpu.read(
        fixture.cpu.binary('add', fixture.cpu.fromArray(ints, [4096]), fixture.cpu.fromArray(ints, [4096])),
      ),
    );
    const mask = be.less(be.fromArray(a, [4096]), be.fromArray(b, [4096]));
    expect(await be.read(be.binary('logicalAnd', mask, mask))).toEqual(await be.read(mask));
    expect(Array.from(await be.read(be.unary('relu', be.fromArray(a, [4096]))))).toEqual(
      Array.from(a, (v) => (Number.isNaN(v) ? v : Math.max(v, 0))),
    );
  });
});
