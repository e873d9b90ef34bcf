// Dataset pipelines against plain-array computations written here: map/filter/take/skip/repeat/zip/concatenate
// (property-based), the seeded shuffle (a true permutation by an independent count, the same orders for the same
// seed, a new order each pass), collation shapes and dtypes, async sources, prefetch running ahead (a counter),
// early stops closing the source, and the typed errors.
import { describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { DTypeError, InvalidArgumentError, ShapeMismatchError } from '@polyhal/hal';
import fc from 'fast-check';

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Dataset steps match the same computation on plain arrays', () => {
  test('map, filter, take, skip, repeat, concatenate, zip (property-based)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: -50, max: 50 }), { maxLength: 30 }),
        fc.nat(35),
        fc.nat(35),
        fc.nat(3),
        async (xs, k, s, r) => {
          const ds = ag.Dataset.fromArray(xs);
          expect(await ds.map((x) => x * 3 + 1).toArray()).toEqual(xs.map((x) => x * 3 + 1));
          expect(await ds.map(async (x) => x - 1).toArray()).toEqual(xs.map((x) => x - 1));
          expect(await ds.filter((x) => x % 2 === 0).toArray()).toEqual(xs.filter((x) => x % 2 === 0));
          expect(await ds.take(k).toArray()).toEqual(xs.slice(0, k));
          expect(await ds.skip(s).toArray()).toEqual(xs.slice(s));
          expect(await ds.skip(s).take(k).toArray()).toEqual(xs.slice(s, s + k));
          expect(await ds.repeat(r).toArray()).toEqual(Array.from({ length: r }, () => xs).flat());
          expect(await ds.concatenate(ds.take(k)).toArray()).toEqual([...xs, ...xs.slice(0, k)]);
          const other = ag.Dataset.fromArray(xs.slice(s).map(String));
          const n = Math.min(xs.length, xs.length - s);
          expect(await ag.Dataset.zip([ds, other]).toArray()).toEqual(
            range(Math.max(0, n)).map((i) => [xs[i], `${xs[i + s]}`]),
          );
          expect(await ag.Dataset.zip({ a: ds, b: other }).toArray()).toEqual(
            range(Math.max(0, n)).map((i) => ({ a: xs[i], b: `${xs[i + s]}` })),
          );
        },
      ),
      { numRuns: 60 },
    );
  });

  test('sizes and random access follow the steps; a stream has none', async () => {
    const ds = ag.Dataset.fromArray(range(10));
    expect([ds.size, ds.map((x) => x).size, ds.take(3).size, ds.skip(4).size, ds.repeat(2).size]).toEqual([
      10, 10, 3, 6, 20,
    ]);
    expect([
      ds.filter(() => true).size,
      ds.repeat().size,
      ds.batch(4).size,
      ds.batch(4, { dropLast: true }).size,
    ]).toEqual([null, Infinity, 3, 2]);
    const view = ds
      .skip(2)
      .map((x) => x * 10)
      .concatenate(ds.take(2))
      .repeat(2);
    expect(view.randomAccess).toBe(true);
    const all = await view.toArray();
    expect(await Promise.all(range(all.length).map((i) => view.get(i)))).toEqual(all);
    expect(await ag.Dataset.zip([ds, ds.skip(1)]).get(3)).toEqual([3, 4]);
    expect(ds.filter(() => true).randomAccess).toBe(false);
    await expect(ds.filter(() => true).get(0)).rejects.toThrow(InvalidArgumentError);
    await expect(ds.get(10)).rejects.toThrow(InvalidArgumentError);
    expect(await ds.repeat().take(25).toArray()).toEqual([...range(10), ...range(10), ...range(5)]);
  });

  test('forEachAsync visits every sample in order, awaiting each', async () => {
    const seen: number[] = [];
    await ag.Dataset.fromArray([3, 1, 2]).forEachAsync(async (x) => {
      await sleep(1);
      seen.push(x);
    });
    expect(seen).toEqual([3, 1, 2]);
  });
});

describe('shuffle', () => {
  test('a true permutation for every buffer size (an independent count), reproducible for a seed', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 1, max: 80 }),
        fc.nat(),
        async (n, buf, seed) => {
          const make = () => ag.Dataset.fromArray(range(n)).shuffle(buf, { seed });
          const a = make();
          const p0 = await a.toArray();
          const p1 = await a.toArray();
          const counts = new Array<number>(n).fill(0);
          for (const v of p0) counts[v]!++;
          expect(counts.every((c) => c === 1)).toBe(true);
          expect(p0.length).toBe(n);
          const b = make(); // a fresh pipeline with the same seed: the same first and second orders
          expect(await b.toArray()).toEqual(p0);
          expect(await b.toArray()).toEqual(p1);
        },
      ),
      { numRuns: 80 },
    );
  });

  test('a new order each pass; bufferSize 1 keeps the order; a full buffer reaches every position', async () => {
    const ds = ag.Dataset.fromArray(range(50)).shuffle(50, { seed: 7 });
    const orders = [await ds.toArray(), await ds.toArray(), await ds.toArray()];
    expect(orders[0]).not.toEqual(orders[1]);
    expect(orders[1]).not.toEqual(orders[2]);
    expect(await ag.Dataset.fromArray(range(20)).shuffle(1, { seed: 3 }).toArray()).toEqual(range(20));
    // over 400 passes of a full buffer, sample 0 lands in each of 8 positions about 50 times (χ² with 7 dof)
    const small = ag.Dataset.fromArray(range(8)).shuffle(8, { seed: 11 });
    const at = new Array<number>(8).fill(0);
    for (let p = 0; p < 400; p++) at[(await small.toArray()).indexOf(0)]!++;
    const chi2 = at.reduce((s, c) => s + (c - 50) ** 2 / 50, 0);
    expect(chi2).toBeLessThan(24.3); // p = 0.001
    const repeated = await ag.Dataset.fromArray(range(10)).shuffle(10, { seed: 1 }).repeat(2).toArray();
    expect(repeated.slice(0, 10)).not.toEqual(repeated.slice(10));
    expect([...repeated.slice(10)].sort((x, y) => x - y)).toEqual(range(10));
  });
});

describe('batch collates samples as PyTorch default_collate', () => {
  test('{ x, y } samples of typed arrays, { data, shape }, numbers and nested arrays', async () => {
    const samples = range(5).map((i) => ({
      x: Float32Array.from([i, i + 0.5, -i]),
      y: Int32Array.of(i % 2),
      img: { data: Float32Array.from(range(6).map((k) => i * 10 + k)), shape: [2, 3] },
      w: i / 4,
      grid: [
        [i, 1],
        [2, 3],
      ],
      name: `s${i}`,
      pair: [Float32Array.of(i), { id: Int32Array.of(i) }],
    }));
    const batches = await ag.Dataset.fromArray(samples).batch(2).toArray();
    expect(batches.map((b) => b.x.shape)).toEqual([
      [2, 3],
      [2, 3],
      [1, 3],
    ]);
    const [b0] = batches;
    expect(Array.from(b0!.x.data)).toEqual([0, 0.5, -0, 1, 1.5, -1]);
    expect(b0!.y.data).toBeInstanceOf(Int32Array);
    expect(b0!.y.shape).toEqual([2, 1]);
    expect(b0!.img.shape).toEqual([2, 2, 3]);
    expect(Array.from(b0!.img.data)).toEqual([0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15]);
    expect(b0!.w).toEqual({ data: Float32Array.of(0, 0.25), shape: [2] });
    expect(b0!.grid).toEqual({ data: Float32Array.of(0, 1, 2, 3, 1, 1, 2, 3), shape: [2, 2, 2] });
    expect(b0!.name).toEqual(['s0', 's1']);
    expect(b0!.pair[0]).toEqual({ data: Float32Array.of(0, 1), shape: [2, 1] });
    expect((b0!.pair[1] as { id: ag.HostArray }).id).toEqual({ data: Int32Array.of(0, 1), shape: [2, 1] });
    expect(
      await ag.Dataset.fromArray(samples)
        .batch(2, { dropLast: true })
        .map((b) => b.w.shape[0])
        .toArray(),
    ).toEqual([2, 2]);
    const custom = await ag.Dataset.fromArray(range(5))
      .batch(2, { collate: (s) => s.reduce((a, b) => a + b, 0) })
      .toArray();
    expect(custom).toEqual([1, 5, 4]);
  });

  test('ragged, mixed-dtype and differently built samples are typed errors naming the field and sample', async () => {
    const ragged = ag.Dataset.fromArray([{ x: Float32Array.of(1, 2) }, { x: Float32Array.of(1, 2, 3) }]).batch(2);
    await expect(ragged.toArray()).rejects.toThrow(ShapeMismatchError);
    await expect(ragged.toArray()).rejects.toThrow(/ragged samples: the sample\.x of sample 1 has shape \[3\]/);
    const nested = ag.Dataset.fromArray([[[1, 2], [3]]]).batch(1);
    await expect(nested.toArray()).rejects.toThrow(ShapeMismatchError);
    const mixed = ag.Dataset.fromArray([Int32Array.of(1), Float32Array.of(1)]).batch(2);
    await expect(mixed.toArray()).rejects.toThrow(DTypeError);
    const keys = ag.Dataset.fromArray<object>([{ x: 1 }, { y: 1 }]).batch(2);
    await expect(keys.toArray()).rejects.toThrow(InvalidArgumentError);
    const bad = ag.Dataset.fromArray([{ x: { data: [1, 2, 3], shape: [2, 2] } }]).batch(1);
    await expect(bad.toArray()).rejects.toThrow(ShapeMismatchError);
    await expect(
      ag.Dataset.fromArray([{ f: () => 1 }])
        .batch(1)
        .toArray(),
    ).rejects.toThrow(InvalidArgumentError);
    expect(() => ag.collate([])).toThrow(InvalidArgumentError);
  });

  test('fromSlices rows are views of the columns, and batch back to the columns', async () => {
    const x = Float32Array.from(range(12), (v) => v / 2);
    const y = Int32Array.from([2, 0, 1, 2]);
    const ds = ag.Dataset.fromSlices({ x: { data: x, shape: [4, 3] }, y: { data: y, shape: [4] } });
    const s2 = await ds.get(2);
    expect(s2.x).toEqual({ data: Float32Array.of(3, 3.5, 4), shape: [3] });
    expect(s2.y).toEqual({ data: Int32Array.of(1), shape: [] });
    expect(s2.x.data.buffer).toBe(x.buffer);
    const [all] = await ds.batch(4).toArray();
    expect(all!.x).toEqual({ data: x, shape: [4, 3] });
    expect(all!.y).toEqual({ data: y, shape: [4] });
    expect(() => ag.Dataset.fromSlices({ x: { data: x, shape: [4, 3] }, y: { data: y, shape: [3] } })).toThrow(
      ShapeMismatchError,
    );
    expect(() => ag.Dataset.fromSlices({ x: { data: x, shape: [4, 2] } })).toThrow(ShapeMismatchError);
  });
});

describe('sources, prefetch and early stops', () => {
  test('generator functions, async iterables and iterators; a one-shot generator object gives one pass', async () => {
    async function* agen(n: number) {
      for (let i = 0; i < n; i++) {
        await sleep(0);
        yield i * i;
      }
    }
    const fromFn = ag.Dataset.from(() => agen(4));
    expect(await fromFn.toArray()).toEqual([0, 1, 4, 9]);
    expect(await fromFn.toArray()).toEqual([0, 1, 4, 9]);
    expect(await ag.Dataset.from(new Set([5, 6])).toArray()).toEqual([5, 6]);
    const it = [7, 8][Symbol.iterator]();
    expect(await ag.Dataset.from(() => it).toArray()).toEqual([7, 8]);
    const once = ag.Dataset.from(agen(3));
    expect(await once.toArray()).toEqual([0, 1, 4]);
    await expect(once.toArray()).rejects.toThrow(InvalidArgumentError);
    expect(() => ag.Dataset.from(42 as never)).toThrow(InvalidArgumentError);
    await expect(ag.Dataset.from(() => 42 as never).toArray()).rejects.toThrow(InvalidArgumentError);
  });

  test('prefetch(n) computes n samples ahead of the consumer, and only n', async () => {
    let made = 0;
    const ds = ag.Dataset.from(function* () {
      for (let i = 0; i < 20; i++) {
        made++;
        yield i;
      }
    });
    const seen: number[] = [];
    const ahead: number[] = [];
    for await (const v of ds.map(async (x) => x).prefetch(4)) {
      await sleep(2); // the consumer is slow: the upstream fills the prefetch queue meanwhile
      ahead.push(made - v - 1);
      seen.push(v);
    }
    expect(seen).toEqual(range(20));
    expect(Math.max(...ahead)).toBe(4); // while sample v is in use, samples v+1..v+4 are made
    made = 0;
    for await (const v of ds.map(async (x) => x)) {
      await sleep(1);
      expect(made - v - 1).toBe(0); // without prefetch, nothing is made ahead
    }
  });

  test('breaking out of a pass closes the source through every step, also with prefetch', async () => {
    let closed = 0;
    let made = 0;
    const ds = ag.Dataset.from(async function* () {
      try {
        for (let i = 0; ; i++) {
          made++;
          yield { x: [i, i] };
        }
      } finally {
        closed++;
      }
    });
    const pipeline = ds
      .map((s) => s)
      .shuffle(4, { seed: 1 })
      .batch(3)
      .prefetch(2)
      .take(100);
    let n = 0;
    for await (const b of pipeline) {
      expect(b.x.shape).toEqual([3, 2]);
      if (++n === 3) break;
    }
    expect(closed).toBe(1);
    expect(made).toBeLessThan(30);
    await expect(
      ds
        .map(() => Promise.reject(new RangeError('x')))
        .prefetch(3)
        .toArray(),
    ).rejects.toThrow(RangeError);
    expect(closed).toBe(2);
  });

  test('bad arguments are InvalidArgumentError', () => {
    const ds = ag.Dataset.fromArray([1]);
    for (const f of [
      () => ds.batch(0),
      () => ds.shuffle(0),
      () => ds.take(-1),
      () => ds.skip(1.5),
      () => ds.prefetch(0),
      () => ds.repeat(-2),
      () => ds.map(3 as never),
      () => ds.filter(null as never),
      () => ds.concatenate([1] as never),
      () => ag.Dataset.zip([]),
      () => ag.Dataset.fromArray(3 as never),
    ])
      expect(f).toThrow(InvalidArgumentError);
    return expect(ds.repeat().toArray()).rejects.toThrow(InvalidArgumentError);
  });
});
