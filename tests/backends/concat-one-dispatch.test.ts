/**
 * concat and stack in one dispatch on webgpu (the copyIntoManyKernel hook: backends/webgpu/src/dispatch-copy-many.ts,
 * kernels/copy-many.ts): the non-empty inputs of one call share a dispatch, up to one per storage binding beyond
 * the destination's (at most 16), counted with kernelStats().dispatches. Every result is checked against a host
 * oracle written here (row-major index arithmetic on the inputs' host values, nothing of the HAL), bit for bit:
 * permuted, reversed and broadcast views, the packed-QKV stack of attention's gradients, an empty input among
 * them, int32, bool and int8; float16 in 2-byte storage declines (one copy per input, the same values); inside a
 * capture the replay gives the oracle's values on new inputs.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createWebGpuBackend, type WebGpuBackend } from '@polyhal/backend-webgpu';
import type { DType, NDArray } from '@polyhal/hal';
import { type Capturing, captureRun } from '../support/capture-run.js';

let be: WebGpuBackend;
beforeAll(async () => {
  be = await createWebGpuBackend();
});
afterAll(() => be?.dispose());

/** Views per dispatch: a storage binding each, one more for the destination (dispatch-copy-many.ts). */
const slotsOf = (b: WebGpuBackend): number => Math.min(16, b.device.limits.maxStorageBuffersPerShaderStage - 1);
const sizeOf = (s: readonly number[]): number => s.reduce((p, d) => p * d, 1);
const rand = (n: number, seed: number): number[] =>
  Array.from({ length: n }, (_, i) => Math.fround(100 * Math.sin(i * 12.9898 + seed * 78.233)));
const bits = (x: ArrayLike<number>): number[] => Array.from(new Uint32Array(Float32Array.from(x).buffer));

/** A host array: row-major values of a shape. */
interface Host {
  shape: number[];
  data: number[];
}

/** The element of `h` at multi-index `idx`. */
const at = (h: Host, idx: readonly number[]): number => {
  let flat = 0;
  for (let k = 0; k < idx.length; k++) flat = flat * h.shape[k]! + idx[k]!;
  return h.data[flat]!;
};

/** Every multi-index of `shape`, row-major. */
function indices(shape: readonly number[]): number[][] {
  const out: number[][] = [];
  const idx = shape.map(() => 0);
  for (let n = 0; n < sizeOf(shape); n++) {
    out.push([...idx]);
    for (let k = shape.length - 1; k >= 0; k--) {
      if (++idx[k]! < shape[k]!) break;
      idx[k] = 0;
    }
  }
  return out;
}

/** NumPy's concatenate on host arrays: each output index finds its input by the axis position. */
function concat64(xs: readonly Host[], axis: number): Host {
  const shape = [...xs[0]!.shape];
  shape[axis] = xs.reduce((s, x) => s + x.shape[axis]!, 0);
  const data = indices(shape).map((idx) => {
    let p = idx[axis]!;
    for (const x of xs) {
      if (p < x.shape[axis]!)
        return at(
          x,
          idx.map((v, k) => (k === axis ? p : v)),
        );
      p -= x.shape[axis]!;
    }
    throw new Error('unreachable');
  });
  return { shape, data };
}

/** numpy.transpose on a host array. */
function permute64(x: Host, perm: readonly number[]): Host {
  const shape = perm.map((p) => x.shape[p]!);
  const data = indices(shape).map((idx) => {
    const src = new Array<number>(idx.length);
    perm.forEach((p, k) => {
      src[p] = idx[k]!;
    });
    return at(x, src);
  });
  return { shape, data };
}

/** A host array with a unit axis inserted (numpy.expand_dims). */
const lift = (x: Host, axis: number): Host => ({
  shape: [...x.shape.slice(0, axis), 1, ...x.shape.slice(axis)],
  data: x.data,
});

/** Runs `op` on webgpu; returns its result's values and the kernels it dispatched. */
async function counted(op: () => NDArray): Promise<{ shape: number[]; out: number[]; kernels: number }> {
  await be.synchronize();
  const k0 = be.kernelStats().dispatches;
  const r = op();
  const kernels = be.kernelStats().dispatches - k0;
  const out = Array.from(await be.read(r));
  const shape = [...r.shape];
  be.free(r);
  return { shape, out, kernels };
}

function upload(hs: readonly Host[], dtype: DType = 'float32'): NDArray[] {
  return hs.map((h) => be.fromArray(h.data, h.shape, dtype));
}

describe('webgpu concat and stack in one dispatch', () => {
  test('concat of 2 and 3 inputs along each axis: one kernel, the oracle bits', async () => {
    for (const [shapes, axis] of [
      [
        [
          [3, 5],
          [4, 5],
        ],
        0,
      ],
      [
        [
          [3, 5],
          [3, 1],
          [3, 300],
        ],
        1,
      ],
      [
        [
          [2, 3, 4],
          [2, 7, 4],
          [2, 1, 4],
        ],
        1,
      ],
      [[[257], [1000], [3]], 0],
    ] as [number[][], number][]) {
      const hs = shapes.map((s, k) => ({ shape: s, data: rand(sizeOf(s), k + 1) }));
      const xs = upload(hs);
      const r = await counted(() => be.concat(xs, axis));
      const want = concat64(hs, axis);
      expect({ shapes, kernels: r.kernels, shape: r.shape }).toEqual({ shapes, kernels: 1, shape: want.shape });
      expect(bits(r.out)).toEqual(bits(want.data));
      for (const x of xs) be.free(x);
    }
  });

  test("attention's packed-QKV gradient: three [N, H, L, D] permuted to [N, L, H, D] stacked at axis 2", async () => {
    const [N, H, L, D] = [2, 3, 5, 4];
    const hs = [0, 1, 2].map((k) => ({ shape: [N, H, L, D], data: rand(N * H * L * D, 10 + k) }));
    const xs = upload(hs);
    const perm = [0, 2, 1, 3];
    const r = await counted(() =>
      be.stack(
        xs.map((x) => be.permute(x, perm)),
        2,
      ),
    );
    const want = concat64(
      hs.map((h) => lift(permute64(h, perm), 2)),
      2,
    );
    expect({ kernels: r.kernels, shape: r.shape }).toEqual({ kernels: 1, shape: [N, L, 3, H, D] });
    expect(want.shape).toEqual(r.shape);
    expect(bits(r.out)).toEqual(bits(want.data));
    for (const x of xs) be.free(x);
  });

  test('reversed and broadcast views, and NaN payloads and −0, copied bit for bit', async () => {
    const a: Host = { shape: [4, 6], data: rand(24, 3) };
    a.data[5] = -0;
    const nanBits = new Float32Array(new Uint32Array([0x7fa00001, 0xffc00123]).buffer);
    a.data[7] = nanBits[0]!;
    a.data[8] = nanBits[1]!;
    const b: Host = { shape: [1, 6], data: rand(6, 4) };
    const [xa, xb] = upload([a, b]);
    const flipped = be.flip(xa!, [0, 1]);
    const wide = be.expand(xb!, [3, 6]);
    const r = await counted(() => be.concat([flipped, wide, xa!], 0));
    const flip64: Host = { shape: [4, 6], data: [...a.data].reverse() };
    const wide64: Host = { shape: [3, 6], data: [...b.data, ...b.data, ...b.data] };
    const want = concat64([flip64, wide64, a], 0);
    expect(r.kernels).toBe(1);
    expect(bits(r.out)).toEqual(bits(want.data));
    be.free(xa!);
    be.free(xb!);
  });

  test('more inputs than one dispatch binds: one kernel per slots of them', async () => {
    const slots = slotsOf(be);
    expect(slots).toBeGreaterThanOrEqual(7); // WebGPU's minimum of 8 storage bindings
    for (const count of [slots + 1, 2 * slots + 3]) {
      const hs = Array.from({ length: count }, (_, k) => ({ shape: [1 + (k % 5), 3], data: rand(3 + 3 * (k % 5), k) }));
      const xs = upload(hs);
      const r = await counted(() => be.concat(xs, 0));
      expect({ count, kernels: r.kernels }).toEqual({ count, kernels: Math.ceil(count / slots) });
      expect(bits(r.out)).toEqual(bits(concat64(hs, 0).data));
      for (const x of xs) be.free(x);
    }
  });

  test('an empty input among them takes no slot; one non-empty input is the single copy', async () => {
    const hs: Host[] = [
      { shape: [2, 3], data: rand(6, 1) },
      { shape: [0, 3], data: [] },
      { shape: [5, 3], data: rand(15, 2) },
      { shape: [1, 3], data: rand(3, 3) },
    ];
    const xs = upload(hs);
    const r = await counted(() => be.concat(xs, 0));
    expect(r.kernels).toBe(1);
    expect(bits(r.out)).toEqual(bits(concat64(hs, 0).data));
    const one = await counted(() => be.concat([xs[1]!, xs[2]!], 0));
    expect(one.kernels).toBe(1);
    expect(bits(one.out)).toEqual(bits(hs[2]!.data));
    const none = await counted(() => be.concat([xs[1]!, xs[1]!], 0));
    expect({ kernels: none.kernels, shape: none.shape }).toEqual({ kernels: 0, shape: [0, 3] });
    for (const x of xs) be.free(x);
  });

  test('int32, bool and int8 (int32 storage): one kernel, the exact values', async () => {
    const cases: [DType, number[][]][] = [
      ['int32', [[-2147483648, 2147483647, 0, -1, 7], [123456789, -5], [42]]],
      ['bool', [[1, 0, 0, 1], [1], [0, 1, 1]]],
      [
        'int8',
        [
          [-128, 127, 0],
          [-1, 5, 100, -100],
        ],
      ],
    ];
    for (const [dtype, data] of cases) {
      const hs = data.map((d) => ({ shape: [d.length], data: d }));
      const xs = upload(hs, dtype);
      const r = await counted(() => be.stack([be.concat(xs, 0), be.concat([...xs].reverse(), 0)], 0));
      // two concats and the stack, one kernel each
      expect({ dtype, kernels: r.kernels }).toEqual({ dtype, kernels: 3 });
      const fwd = concat64(hs, 0);
      const bwd = concat64([...hs].reverse(), 0);
      expect({ dtype, out: r.out }).toEqual({ dtype, out: [...fwd.data, ...bwd.data] });
      for (const x of xs) be.free(x);
    }
  });

  test('float16 in 2-byte storage declines: one copy per input, the same values', async () => {
    const hs = [0, 1, 2].map((k) => ({ shape: [2, 3], data: [0.5, -2, 1024, 0.25 * k, -0.125, 3 + k] }));
    const xs = upload(hs, 'float16');
    const r = await counted(() => be.stack(xs, 1));
    expect(r.kernels).toBe(3);
    expect(r.out).toEqual(
      concat64(
        hs.map((h) => lift(h, 1)),
        1,
      ).data,
    );
    for (const x of xs) be.free(x);
  });

  test('inside a capture: the replay copies the new inputs, one kernel for the stack', async () => {
    const shape = [2, 3, 4, 5];
    const n = sizeOf(shape);
    const [x0, next] = [Float32Array.from(rand(n, 1)), Float32Array.from(rand(n, 2))];
    // three views of the input (one contiguous, two permuted), stacked: the one kernel of the work
    const perm = [0, 2, 1, 3];
    const run = await captureRun(be as unknown as Capturing, x0, next, shape, (b, x) => [
      b.stack([b.permute(x, perm), b.permute(b.flip(x, 3), perm), b.permute(x, perm)], 2),
    ]);
    const host = (d: Float32Array): number[] => {
      const h: Host = { shape, data: Array.from(d) };
      const f: Host = {
        shape,
        data: indices(shape).map((idx) => at(h, [idx[0]!, idx[1]!, idx[2]!, shape[3]! - 1 - idx[3]!])),
      };
      return concat64(
        [h, f, h].map((v) => lift(permute64(v, perm), 2)),
        2,
      ).data;
    };
    expect(run.kernels).toBe(1);
    expect(bits(run.first[0]!)).toEqual(bits(host(x0)));
    expect(bits(run.replayed[0]!)).toEqual(bits(host(next)));
  });
});
