// DataLoader over Datasets and iterables, and Dataset.mapParallel in worker threads: batches compared with the
// host-array DataLoader and with plain-array computations, prefetch observed with a counter, no leaked tensors or
// workers after an early break, typed errors naming the sample.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { type ComputeBackend, InvalidArgumentError, mulberry32 } from '@polyhal/hal';
import { REPO_BACKENDS } from '../support/backends.js';

let be: ComputeBackend;
beforeAll(async () => {
  be = await REPO_BACKENDS['cpu']!();
});
afterAll(() => be.dispose());

const rng = mulberry32(5);
const N = 23;
const X = Float32Array.from({ length: N * 3 }, () => rng() * 2 - 1);
const Y = Int32Array.from({ length: N }, (_, i) => i % 4);
const columns = { x: { data: X, shape: [N, 3] }, y: { data: Y, shape: [N] } };
const rows = (t: ag.Tensor) => Array.from(t.dataSync());

describe('DataLoader over a Dataset', () => {
  test('a random-access Dataset gives the batches of the host-array loader, shuffled with the same seed', async () => {
    const arrays = new ag.DataLoader({
      inputs: X,
      labels: Y,
      inputShape: [3],
      labelShape: [],
      batchSize: 5,
      backend: be,
      shuffle: true,
      seed: 9,
    });
    const fromDs = new ag.DataLoader(ag.Dataset.fromSlices(columns), {
      backend: be,
      batchSize: 5,
      shuffle: true,
      seed: 9,
    });
    expect([fromDs.length, fromDs.size]).toEqual([5, N]);
    for (let epoch = 0; epoch < 2; epoch++) {
      const a: number[][] = [];
      const b: number[][] = [];
      for await (const { x, y, index } of arrays) a.push([index, ...x.shape, ...rows(x), ...rows(y)]);
      for await (const { x, y, index } of fromDs) {
        expect(y.dtype).toBe('int32');
        b.push([index, ...x.shape, ...rows(x), ...rows(y)]);
      }
      expect(b).toEqual(a);
    }
  });

  test('streams, arrays of samples and ready batches (batchSize: null); dropLast', async () => {
    const samples = Array.from({ length: 7 }, (_, i) => ({ x: [i, -i], y: i }));
    const gen = ag.Dataset.from(function* () {
      yield* samples;
    });
    const shapes = async (l: ag.DataLoader) => {
      const out: number[][] = [];
      for await (const { x, y } of l) out.push([...x.shape, ...y.shape]);
      return out;
    };
    expect(await shapes(new ag.DataLoader(gen, { backend: be, batchSize: 3 }))).toEqual([
      [3, 2, 3],
      [3, 2, 3],
      [1, 2, 1],
    ]);
    expect(await shapes(new ag.DataLoader(samples, { backend: be, batchSize: 3, dropLast: true }))).toEqual([
      [3, 2, 3],
      [3, 2, 3],
    ]);
    const ready = new ag.DataLoader(ag.Dataset.fromArray(samples).batch(4), { backend: be, batchSize: null });
    expect(ready.length).toBe(2);
    expect(await shapes(ready)).toEqual([
      [4, 2, 4],
      [3, 2, 3],
    ]);
    let y: number[] = [];
    for await (const b of new ag.DataLoader(gen.take(2), { backend: be, batchSize: 2 })) y = rows(b.y);
    expect(y).toEqual([0, 1]);
  });

  test('prefetch(k) reads k batches ahead; an early break disposes every batch (no leaked tensors)', async () => {
    let made = 0;
    const counted = ag.Dataset.fromArray(Array.from({ length: 40 }, (_, i) => ({ x: [i], y: [i] }))).map((s) => {
      made++;
      return s;
    });
    const live = be.liveBufferCount();
    for (const prefetch of [0, 1, 3]) {
      made = 0;
      const loader = new ag.DataLoader(counted, { backend: be, batchSize: 2, prefetch });
      let n = 0;
      for await (const { x } of loader) {
        await new Promise((r) => setTimeout(r, 1));
        expect(made).toBe(2 * (n + 1 + prefetch)); // this batch and `prefetch` more
        expect(rows(x)).toEqual([2 * n, 2 * n + 1]);
        if (++n === 4) break;
      }
      expect(be.liveBufferCount()).toBe(live);
    }
    const arrays = new ag.DataLoader({
      inputs: X,
      labels: Y,
      inputShape: [3],
      labelShape: [],
      batchSize: 4,
      backend: be,
    });
    for await (const _ of arrays) break;
    expect(be.liveBufferCount()).toBe(live);
  });

  test('typed errors: shuffle on a stream, samples that are not { x, y }, bad options', async () => {
    const stream = ag.Dataset.from(() => [{ x: 1, y: 1 }][Symbol.iterator]());
    expect(() => new ag.DataLoader(stream, { backend: be, batchSize: 2, shuffle: true })).toThrow(InvalidArgumentError);
    expect(() => new ag.DataLoader(stream, { backend: be, batchSize: 0 })).toThrow(InvalidArgumentError);
    expect(() => new ag.DataLoader(stream, { backend: be, batchSize: 2, prefetch: -1 })).toThrow(InvalidArgumentError);
    expect(() => new ag.DataLoader(stream, undefined as never)).toThrow(InvalidArgumentError);
    const live = be.liveBufferCount();
    const notXY = new ag.DataLoader([{ a: 1 }, { a: 2 }] as never, { backend: be, batchSize: 2 });
    await expect(
      (async () => {
        for await (const _ of notXY);
      })(),
    ).rejects.toThrow(InvalidArgumentError);
    expect(be.liveBufferCount()).toBe(live);
  });
});

test('batchToTensors uploads each array of a collated batch, keeping records, tuples and strings', async () => {
  const samples = [0, 1, 2].map((i) => ({ x: [i, 2 * i], pair: [Int32Array.of(i), i / 2], name: `n${i}` }));
  const batch = ag.collate(samples);
  const live = be.liveBufferCount();
  const t = ag.batchToTensors(batch, be);
  expect([t.x.shape, t.x.dtype, rows(t.x)]).toEqual([[3, 2], 'float32', [0, 0, 1, 2, 2, 4]]);
  const [ids, halves] = t.pair as unknown as [ag.Tensor, ag.Tensor];
  expect([ids.dtype, rows(ids), rows(halves)]).toEqual(['int32', [0, 1, 2], [0, 0.5, 1]]);
  expect(t.name).toEqual(['n0', 'n1', 'n2']);
  for (const u of [t.x, ids, halves]) u.dispose();
  expect(be.liveBufferCount()).toBe(live);
});

describe('Dataset.mapParallel', () => {
  const heavy = (s: { x: number }) => {
    let acc = 0;
    for (let k = 1; k <= 2000; k++) acc += Math.sin(s.x * k) / k;
    return { x: s.x, v: Float32Array.of(acc, s.x * 2) };
  };
  const plain = (s: { x: number }) => heavy(s);
  const samples = Array.from({ length: 30 }, (_, i) => ({ x: i / 7 }));

  test('workers give the results of the same map on this thread, in order', async () => {
    const want = samples.map(plain);
    for (const workers of [0, 1, 3]) {
      const got = await ag.Dataset.fromArray(samples).mapParallel(heavy, { workers }).toArray();
      expect(got).toEqual(want);
    }
    expect(ag.liveDatasetWorkers()).toBe(0);
  });

  test('an error in a worker is a DatasetWorkerError naming the sample; workers end, also on a break', async () => {
    const failing = (s: { x: number }) => {
      if (s.x === 5) throw new RangeError('five');
      return s.x;
    };
    const ds = ag.Dataset.fromArray(Array.from({ length: 12 }, (_, x) => ({ x })));
    for (const workers of [0, 2]) {
      const e = await ds
        .mapParallel(failing, { workers })
        .toArray()
        .catch((err: unknown) => err);
      expect(e).toBeInstanceOf(ag.DatasetWorkerError);
      expect((e as ag.DatasetWorkerError).index).toBe(5);
      expect((e as ag.DatasetWorkerError).causeName).toBe('RangeError');
      expect((e as Error).message).toMatch(/sample 5: RangeError: five/);
    }
    expect(ag.liveDatasetWorkers()).toBe(0);
    let seen = 0;
    for await (const _ of ds.mapParallel((s: { x: number }) => s.x, { workers: 2 })) {
      expect(ag.liveDatasetWorkers()).toBe(2);
      if (++seen === 2) break;
    }
    expect(ag.liveDatasetWorkers()).toBe(0);
    const captured = 3;
    const closure = ds.mapParallel((s: { x: number }) => s.x * captured, { workers: 1 });
    await expect(closure.toArray()).rejects.toThrow(/ReferenceError/);
    const method = {
      f(s: { x: number }) {
        return s.x;
      },
    };
    await expect(ds.mapParallel(method.f, { workers: 1 }).toArray()).rejects.toThrow(ag.DatasetWorkerError);
    expect(() => ds.mapParallel(3 as never)).not.toThrow(); // lazy: the pass reports it
    await expect(ds.mapParallel(3 as never).toArray()).rejects.toThrow(InvalidArgumentError);
    await expect(ds.mapParallel((s) => s, { workers: -1 }).toArray()).rejects.toThrow(InvalidArgumentError);
    expect(ag.liveDatasetWorkers()).toBe(0);
  });

  test('a map from a module URL, in workers and inline', async () => {
    const code = 'export default (s) => s.x + 1; export const twice = (s) => 2 * s.x;';
    const url = `data:text/javascript,${encodeURIComponent(code)}`;
    const ds = ag.Dataset.fromArray([{ x: 1 }, { x: 2 }]);
    expect(await ds.mapParallel({ module: url }, { workers: 1 }).toArray()).toEqual([2, 3]);
    expect(await ds.mapParallel({ module: url, export: 'twice' }, { workers: 0 }).toArray()).toEqual([2, 4]);
  });
});
