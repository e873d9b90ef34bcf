/**
 * The integer matmul composite: what `matmul` of integer operands runs on a backend without the
 * optional integerMatmulKernel hook. Exact modulo 2^32 from HAL ops alone: for a slab of Kc columns,
 * a [..., M, Kc, 1] × b [..., 1, Kc, N] in int32 (products wrap), summed over the slab axis; slabs
 * sized so one product array stays under 2^22 elements.
 */
import type { ComputeBackend } from '../../backend.js';
import type { NDArray } from '../../core/ndarray.js';

export function integerMatmulComposite(be: ComputeBackend, a: NDArray, b: NDArray): NDArray {
  const r = a.shape.length;
  const [M, K, N] = [a.shape[r - 2]!, a.shape[r - 1]!, b.shape[r - 1]!];
  const batch = a.shape.slice(0, -2);
  const items = batch.reduce((p, d) => p * d, 1);
  const slab = Math.max(1, Math.min(K, Math.floor(2 ** 22 / Math.max(1, items * M * N))));
  let acc: NDArray | null = null;
  for (let k0 = 0; k0 < K; k0 += slab) {
    const k1 = Math.min(K, k0 + slab);
    const bounds = (rows: number, cols: [number, number]): [number, number][] => [
      ...batch.map((d) => [0, d] as [number, number]),
      [0, rows],
      cols,
    ];
    const as = be.reshape(be.shrink(a, bounds(M, [k0, k1])), [...batch, M, k1 - k0, 1]);
    const bs = be.reshape(be.shrink(b, [...batch.map((d) => [0, d] as [number, number]), [k0, k1], [0, N]]), [
      ...batch,
      1,
      k1 - k0,
      N,
    ]);
    const products = be.mul(as, bs);
    const part = be.sum(products, [r - 1]);
    be.free(products);
    if (acc) {
      const next = be.add(acc, part);
      be.free(acc);
      be.free(part);
      acc = next;
    } else acc = part;
  }
  return acc ?? be.full([...batch, M, N], 0, 'int32');
}
