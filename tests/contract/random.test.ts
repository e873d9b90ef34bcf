// Device-side random numbers: Philox4x32-10 against the Random123 known-answer vectors, the same bits
// on every backend (cpu, wasm, webgpu, reference) as the conformance kit's BigInt oracle, streams that
// continue across calls, statistics of 1e5 samples, typed errors, and dropout.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { Dropout, Tensor } from '@polyhal/autograd';
import { ReferenceBackend } from '@polyhal/backend-reference';
import { CpuBackend } from '@polyhal/backend-cpu';
import { oBernoulli, oPhilox4x32, oUniforms } from '@polyhal/conformance';
import {
  BaseBackend,
  type ComputeBackend,
  type DeviceBuffer,
  InvalidArgumentError,
  type PhiloxStream,
  philox4x32,
} from '@polyhal/hal';
import { REPO_BACKENDS } from '../support/backends.js';

// The philox4x32 lines of Random123's tests/kat_vectors (D. E. Shaw Research, Random123 1.14:
// name, rounds, counter[4], key[2], expected[4], all hexadecimal uint32).
const KAT = `
philox4x32 7 00000000 00000000 00000000 00000000 00000000 00000000   5f6fb709 0d893f64 4f121f81 4f730a48
philox4x32 7 ffffffff ffffffff ffffffff ffffffff ffffffff ffffffff   5207ddc2 45165e59 4d8ee751 8c52f662
philox4x32 7 243f6a88 85a308d3 13198a2e 03707344 a4093822 299f31d0   4dfccaba 190a87f0 c47362ba b6b5242a
philox4x32 10 00000000 00000000 00000000 00000000 00000000 00000000   6627e8d5 e169c58d bc57ac4c 9b00dbd8
philox4x32 10 ffffffff ffffffff ffffffff ffffffff ffffffff ffffffff   408f276d 41c83b0e a20bc7c6 6d5451fd
philox4x32 10 243f6a88 85a308d3 13198a2e 03707344 a4093822 299f31d0   d16cfe09 94fdcceb 5001e420 24126ea1
`
  .trim()
  .split('\n')
  .map((line) => {
    const [, rounds, ...hex] = line.split(/\s+/);
    const w = hex.map((h) => Number.parseInt(h, 16));
    return {
      rounds: Number(rounds),
      ctr: w.slice(0, 4) as [number, number, number, number],
      key: w.slice(4, 6) as [number, number],
      want: w.slice(6),
    };
  });

describe('Philox4x32 known answers (Random123 kat_vectors)', () => {
  test.each(KAT.map((k) => [k.rounds, k.ctr.map((v) => v.toString(16)).join(' '), k] as const))(
    '%i rounds, counter %s: the HAL and the BigInt oracle',
    (_r, _c, k) => {
      expect(philox4x32(k.ctr, k.key, k.rounds)).toEqual(k.want);
      expect(oPhilox4x32(k.ctr, k.key, k.rounds)).toEqual(k.want);
    },
  );
});

/** The oracle's uniforms rounded to float32 (exact: multiples of 2^-24). */
const memo = new Map<string, Float32Array>();
const want = (seed: number, offset: number, n: number): Float32Array => {
  const key = `${seed}/${offset}/${n}`;
  if (!memo.has(key)) memo.set(key, Float32Array.from(oUniforms(seed, offset, n)));
  return memo.get(key)!;
};
const bits = (a: ArrayLike<number>): Uint32Array => new Uint32Array(Float32Array.from(a).buffer);

/** The BaseBackend default hook (host fill) on the cpu backend: what a backend without its own kernel runs. */
class HostFillBackend extends CpuBackend {
  protected override randomUniformKernel(out: DeviceBuffer, s: PhiloxStream): void {
    (
      BaseBackend.prototype as unknown as { randomUniformKernel: (o: DeviceBuffer, s: PhiloxStream) => void }
    ).randomUniformKernel.call(this, out, s);
  }
}

const BACKENDS: Record<string, () => Promise<ComputeBackend>> = {
  ...REPO_BACKENDS,
  reference: async () => new ReferenceBackend(),
  'default hook': async () => new HostFillBackend(),
};

// Seeds with both key words, offsets inside a block and across a 2^32 carry of the block counter, and
// sizes past the wasm thread split (2^18) and many webgpu workgroups.
const STREAMS: [number, number, number][] = [
  [0, 0, 1],
  [1, 0, 4099],
  [1, 3, 17],
  [2 ** 32 - 1, 4 * (2 ** 32 - 3) + 1, 40],
  [2 ** 32 + 5, 2 ** 40 + 2, 333],
  [2 ** 53 - 1, 7, 1000],
  [1234, 5, 2 ** 19 + 3],
];

for (const [name, factory] of Object.entries(BACKENDS)) {
  describe(`random numbers on ${name}`, () => {
    let be: ComputeBackend;
    beforeAll(async () => {
      be = await factory();
    });
    afterAll(() => be.dispose());

    test.each(STREAMS)(
      'uniforms of seed %d at offset %d (%d elements) are the oracle bit for bit',
      async (seed, offset, n) => {
        const u = be.randomUniform([n], seed, { offset });
        const got = await be.read(u);
        be.free(u);
        expect(bits(got)).toEqual(bits(want(seed, offset, n)));
      },
    );

    test('consecutive offsets continue one stream; shape does not change the bits', async () => {
      const whole = be.randomUniform([7, 11], 99);
      const parts = [be.randomUniform([30], 99), be.randomUniform([47], 99, { offset: 30 })];
      const all = await be.read(whole);
      const joined = [...(await be.read(parts[0]!)), ...(await be.read(parts[1]!))];
      expect(bits(joined)).toEqual(bits(all));
      for (const x of [whole, ...parts]) be.free(x);
    });

    test('bernoulli is the oracle bit for bit; normals stay near it; no buffers leak', async () => {
      const live = be.liveBufferCount();
      const b = be.bernoulli([3, 1001], 0.3, 5, { offset: 2 });
      expect(Array.from(await be.read(b))).toEqual(Array.from(oBernoulli([3, 1001], 0.3, 5, 2).data));
      const z = be.randomNormal([501], 8, { offset: 3, mean: 1, std: 2 });
      const got = await be.read(z);
      expect(got.every((v) => Number.isFinite(v))).toBe(true);
      const r = be.randomUniform([2], 0, { low: -1, high: 3 });
      const lh = await be.read(r);
      expect(Array.from(lh)).toEqual(Array.from(want(0, 0, 2)).map((u) => Math.fround(Math.fround(u * 4) - 1)));
      for (const x of [b, z, r]) be.free(x);
      expect(be.liveBufferCount()).toBe(live);
    });
  });
}

/** Φ(x) from erf (Abramowitz & Stegun 7.1.26, |error| < 1.5e-7: ample for a KS bound of 5e-3). */
function normalCdf(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * z);
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erf = 1 - poly * Math.exp(-z * z);
  return 0.5 * (1 + (x < 0 ? -erf : erf));
}

/** Kolmogorov–Smirnov statistic of samples against a CDF. */
function ks(samples: ArrayLike<number>, cdf: (x: number) => number): number {
  const s = Float64Array.from(samples).sort();
  let d = 0;
  for (let i = 0; i < s.length; i++) {
    const f = cdf(s[i]!);
    d = Math.max(d, Math.abs(f - i / s.length), Math.abs((i + 1) / s.length - f));
  }
  return d;
}
const moments = (a: ArrayLike<number>): [number, number] => {
  let m = 0;
  for (let i = 0; i < a.length; i++) m += a[i]!;
  m /= a.length;
  let v = 0;
  for (let i = 0; i < a.length; i++) v += (a[i]! - m) ** 2;
  return [m, v / (a.length - 1)];
};

describe('statistics of 1e5 samples (deterministic: fixed seeds)', () => {
  const be = new CpuBackend();
  afterAll(() => be.dispose());
  const N = 100_000;
  // KS at significance 0.001: D < 1.95/sqrt(N) ≈ 0.0062; means within 5 standard errors.
  const KS_BOUND = 1.95 / Math.sqrt(N);

  test('uniform: mean 1/2, variance 1/12, KS against U[0, 1)', () => {
    const u = be.readSync!(be.randomUniform([N], 2024));
    const [m, v] = moments(u);
    expect(Math.abs(m - 0.5)).toBeLessThan(5 * Math.sqrt(1 / 12 / N));
    expect(Math.abs(v - 1 / 12)).toBeLessThan(0.002);
    expect(ks(u, (x) => Math.min(Math.max(x, 0), 1))).toBeLessThan(KS_BOUND);
  });

  test('normal: mean 0, variance 1, KS against Φ; mean and std shift and scale', () => {
    const z = be.readSync!(be.randomNormal([N], 2025));
    const [m, v] = moments(z);
    expect(Math.abs(m)).toBeLessThan(5 / Math.sqrt(N));
    expect(Math.abs(v - 1)).toBeLessThan(0.03);
    expect(ks(z, normalCdf)).toBeLessThan(KS_BOUND);
    const y = be.readSync!(be.randomNormal([N], 2025, { mean: 3, std: 0.5 }));
    let worst = 0;
    y.forEach((val, i) => {
      worst = Math.max(worst, Math.abs(val - (3 + 0.5 * z[i]!)));
    });
    expect(worst).toBeLessThan(1e-5);
  });

  test('bernoulli: the fraction of ones is p', () => {
    for (const p of [0.1, 0.5, 0.9]) {
      const [m] = moments(be.readSync!(be.bernoulli([N], p, 7)));
      expect(Math.abs(m - p)).toBeLessThan(5 * Math.sqrt((p * (1 - p)) / N));
    }
  });
});

describe('arguments are validated (InvalidArgumentError before anything is allocated)', () => {
  const be = new CpuBackend();
  afterAll(() => be.dispose());
  test.each([
    ['negative seed', () => be.randomUniform([2], -1)],
    ['fractional seed', () => be.randomUniform([2], 1.5)],
    ['seed 2^53', () => be.randomNormal([2], 2 ** 53)],
    ['NaN seed', () => be.bernoulli([2], 0.5, Number.NaN)],
    ['string seed', () => be.randomUniform([2], '1' as never)],
    ['negative offset', () => be.randomUniform([2], 1, { offset: -4 })],
    ['offset past 2^53', () => be.randomUniform([4], 1, { offset: 2 ** 53 - 2 })],
    ['low > high', () => be.randomUniform([2], 1, { low: 2, high: 1 })],
    ['infinite high', () => be.randomUniform([2], 1, { high: Number.POSITIVE_INFINITY })],
    ['negative std', () => be.randomNormal([2], 1, { std: -1 })],
    ['p > 1', () => be.bernoulli([2], 1.5, 1)],
    ['bad shape', () => be.randomUniform([2, -1], 1)],
  ])('%s', (_name, call) => {
    const live = be.liveBufferCount();
    expect(call).toThrow(InvalidArgumentError);
    expect(be.liveBufferCount()).toBe(live);
  });
});

describe('dropout', () => {
  const be = new CpuBackend();
  afterAll(() => be.dispose());

  test('inverted: kept elements scaled by 1/(1 − p), the same mask as bernoulli(1 − p); eval is the identity', () => {
    const x = Tensor.fromArray(
      be,
      Array.from({ length: 4000 }, (_, i) => 1 + (i % 7)),
      [40, 100],
    );
    const y = ag.dropout(x, 0.25, { seed: 3, offset: 10 }).dataSync();
    const mask = oBernoulli([4000], 0.75, 3, 10).data;
    const xs = x.dataSync();
    y.forEach((v, i) => expect(v).toBe(mask[i] ? Math.fround(xs[i]! * Math.fround(1 / 0.75)) : 0));
    expect(ag.dropout(x, 0.25, { seed: 3, training: false })).toBe(x);
    expect(Array.from(ag.dropout(x, 1, { seed: 3 }).dataSync()).every((v) => v === 0)).toBe(true);
    expect(() => ag.dropout(x, 1.5, { seed: 3 })).toThrow(InvalidArgumentError);
  });

  test('the gradient is the same mask over 1 − p (gradient-checked with a fixed seed)', async () => {
    const values = Array.from({ length: 24 }, (_, i) => Math.sin(i) * 2);
    const res = await ag.gradCheck(be, ([x]) => ag.dropout(x!, 0.4, { seed: 11 }), [{ shape: [4, 6], values }]);
    expect(res.details).toEqual([]);
    expect(res.pass).toBe(true);
    const x = Tensor.fromArray(be, values, [4, 6], { requiresGrad: true });
    ag.sum(ag.dropout(x, 0.4, { seed: 11 })).backward();
    const mask = oBernoulli([24], 0.6, 11).data;
    expect(Array.from(x.grad!.dataSync())).toEqual(Array.from(mask, (m) => (m ? Math.fround(1 / 0.6) : 0)));
  });

  test('the Dropout module draws a fresh stream each forward; the same seed replays a run', () => {
    const x = Tensor.fromArray(be, new Float32Array(256).fill(1), [16, 16]);
    const run = (seed: number): number[][] => {
      const d = new Dropout(0.5, seed);
      return [0, 1, 2].map(() => Array.from(d.forward(x).dataSync()));
    };
    const a = run(5);
    expect(a[0]).not.toEqual(a[1]);
    expect(run(5)).toEqual(a);
    expect(run(6)[0]).not.toEqual(a[0]);
    const d = new Dropout(0.5, 5).eval();
    expect(d.forward(x)).toBe(x);
    const live = be.liveBufferCount();
    ag.dropout(x, 0.5, { seed: 1 }).dispose();
    expect(be.liveBufferCount()).toBe(live);
  });
});
