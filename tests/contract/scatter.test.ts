// scatter, scatterND and scatterElements beyond the conformance cases: the same bits on every backend
// (updates applied in index order), BaseBackend's default scatterKernel for a backend without one
// (hal/src/families/indexing/scatter-composite.ts) against the reference backend's kernel, and autograd's refusal of
// reduction 'mul' when a gradient is wanted.
import { expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { Tensor } from '@polyhal/autograd';
import { BaseBackend, InvalidArgumentError, mulberry32, type NDArray, UnsupportedOpError } from '@polyhal/hal';
import { ReferenceBackend } from '@polyhal/backend-reference';
import { REPO_BACKENDS } from '../support/backends.js';

const rng = mulberry32(17);
const N = 3000;
const idx = Array.from({ length: N }, () => Math.floor(rng() * 11) - 2); // −2 … 8 into 7 rows: 8 out of range
const upd = Array.from({ length: N * 3 }, () => (rng() - 0.5) * 10 ** Math.floor(rng() * 6 - 3));
const mulUpd = Array.from({ length: N * 3 }, () => 1 + (rng() - 0.5) * 0.01);

test.each(['none', 'add', 'mul'] as const)(
  'scatter (%s) gives the same bits on every backend',
  async (reduction) => {
    const bits: number[][] = [];
    for (const factory of Object.values(REPO_BACKENDS)) {
      const be = await factory();
      const t = be.fromArray(
        Float32Array.from({ length: 21 }, (_, i) => i - 10),
        [7, 3],
      );
      const i = be.fromArray(Int32Array.from(idx), [N], 'int32');
      const u = be.fromArray(Float32Array.from(reduction === 'mul' ? mulUpd : upd), [N, 3]);
      const got = await be.read(be.scatter(t, i, u, 0, reduction));
      bits.push(Array.from(new Int32Array(got.buffer, got.byteOffset, got.length)));
      be.dispose();
    }
    for (const b of bits.slice(1)) expect(b).toEqual(bits[0]);
  },
  60_000,
);

/** The reference backend with BaseBackend's default scatterKernel (a backend that implements none). */
class WithoutScatterKernel extends ReferenceBackend {}
Object.defineProperty(WithoutScatterKernel.prototype, 'scatterKernel', {
  value: (BaseBackend.prototype as unknown as Record<string, unknown>)['scatterKernel'],
});

test('the default scatterKernel gives the kernel’s results for none and add; mul is UnsupportedOpError', async () => {
  type Call = (be: ReferenceBackend) => NDArray;
  const f32 = (be: ReferenceBackend, n: number, shape: number[]): NDArray =>
    be.fromArray(Float32Array.from(upd.slice(0, n)), shape);
  const i32 = (be: ReferenceBackend, shape: number[]): NDArray =>
    be.fromArray(Int32Array.from(idx.slice(0, 40)), shape, 'int32');
  const calls: Call[] = [
    (be) => be.scatter(f32(be, 35, [7, 5]), i32(be, [40]), f32(be, 200, [40, 5]), 0),
    (be) => be.scatter(f32(be, 35, [7, 5]), i32(be, [40]), f32(be, 200, [40, 5]), 0, 'add'),
    (be) => be.scatter(f32(be, 35, [5, 7]), i32(be, [40]), f32(be, 200, [5, 40]), 1),
    (be) => be.scatterND(f32(be, 35, [7, 5]), i32(be, [20, 2]), f32(be, 20, [20])),
    (be) => be.scatterElements(f32(be, 35, [7, 5]), i32(be, [8, 5]), f32(be, 40, [8, 5]), 0),
  ];
  const ref = new ReferenceBackend();
  const dflt = new WithoutScatterKernel();
  for (const call of calls) {
    const want = Array.from(await ref.read(call(ref)));
    expect(Array.from(await dflt.read(call(dflt)))).toEqual(want);
  }
  expect(() => dflt.scatter(f32(dflt, 35, [7, 5]), i32(dflt, [40]), f32(dflt, 200, [40, 5]), 0, 'mul')).toThrow(
    UnsupportedOpError,
  );
  ref.dispose();
  dflt.dispose();
});

test("autograd: reduction 'mul' is an InvalidArgumentError when an input requires grad, fine without", async () => {
  const be = new ReferenceBackend();
  const t = Tensor.fromArray(be, [1, 2, 3, 4], [4], { requiresGrad: true });
  const i = Tensor.fromArray(be, [1, 1], [2], { dtype: 'int32' });
  const u = Tensor.fromArray(be, [3, 5], [2]);
  expect(() => ag.scatter(t, i, u, 0, 'mul')).toThrow(InvalidArgumentError);
  expect(() => ag.scatterElements(t, i, u, 0, 'mul')).toThrow(/'mul' has no gradient/);
  expect(Array.from(await ag.scatter(t.detach(), i, u, 0, 'mul').data())).toEqual([1, 30, 3, 4]);
  be.dispose();
});
