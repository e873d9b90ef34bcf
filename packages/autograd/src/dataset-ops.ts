/**
 * The stream steps of Dataset, as async generators over the upstream pass: each one pulls what it needs, and a
 * consumer that stops early (break, return, an error) closes the whole chain back to the source.
 */
import { mulberry32 } from '@polyhal/hal';

/** `fn` over each item of a sync or async iterable, awaited, in order. */
export async function* mapStream<T, U>(
  src: Iterable<T> | AsyncIterable<T>,
  fn: (x: T) => U | Promise<U>,
): AsyncGenerator<Awaited<U>> {
  for await (const s of src) yield await fn(s);
}

/** The items for which `predicate` holds. */
export async function* filterStream<T>(
  src: AsyncIterable<T>,
  predicate: (x: T) => boolean | Promise<boolean>,
): AsyncGenerator<T> {
  for await (const s of src) if (await predicate(s)) yield s;
}

/**
 * tfjs's shuffle buffer: fill `bufferSize` items, then each output is a uniformly drawn buffer slot, refilled by the
 * next item; at the end the buffer drains in random order. Draws come from mulberry32 seeded by (seed, pass).
 */
export async function* shuffleStream<T>(
  src: AsyncIterable<T>,
  bufferSize: number,
  seed: number,
  pass: number,
): AsyncGenerator<T> {
  const rng = mulberry32(((seed >>> 0) * 1000003 + pass * 7919) >>> 0);
  const buf: T[] = [];
  for await (const s of src) {
    if (buf.length < bufferSize) {
      buf.push(s);
      continue;
    }
    const j = Math.floor(rng() * bufferSize);
    const out = buf[j]!;
    buf[j] = s;
    yield out;
  }
  while (buf.length > 0) {
    const j = Math.floor(rng() * buf.length);
    const out = buf[j]!;
    buf[j] = buf[buf.length - 1]!;
    buf.pop();
    yield out;
  }
}

/** Groups of `size` consecutive items through `make`; a last, shorter group unless dropLast. */
export async function* batchStream<T, B>(
  src: AsyncIterable<T>,
  size: number,
  dropLast: boolean,
  make: (items: T[]) => B,
): AsyncGenerator<B> {
  let group: T[] = [];
  for await (const s of src) {
    group.push(s);
    if (group.length === size) {
      const g = group;
      group = [];
      yield make(g);
    }
  }
  if (group.length > 0 && !dropLast) yield make(group);
}

/**
 * Keeps up to `count` next() calls of the upstream in flight: the upstream generator runs ahead while the consumer
 * works. On an early stop the pending results are awaited (their errors dropped) and the upstream is closed.
 */
export async function* prefetchStream<T>(src: AsyncIterable<T>, count: number): AsyncGenerator<T> {
  const it = src[Symbol.asyncIterator]();
  const queue: Promise<IteratorResult<T>>[] = [];
  let ended = false;
  const fill = (): void => {
    while (!ended && queue.length < count) {
      const p = it.next();
      p.then(
        (r) => {
          if (r.done) ended = true;
        },
        () => {
          ended = true;
        },
      );
      queue.push(p);
    }
  };
  let finished = false;
  try {
    fill();
    while (queue.length > 0) {
      const r = await queue.shift()!;
      if (r.done) {
        finished = true;
        return;
      }
      fill();
      yield r.value;
    }
    finished = true;
  } finally {
    if (!finished) {
      ended = true;
      await Promise.allSettled(queue);
      await it.return?.();
    }
  }
}

/** The upstream's passes `times` over (Infinity: forever); stops when a pass yields nothing. */
export async function* repeatStream<T>(src: AsyncIterable<T>, times: number): AsyncGenerator<T> {
  for (let k = 0; k < times; k++) {
    let any = false;
    for await (const s of src) {
      any = true;
      yield s;
    }
    if (!any) return;
  }
}

/** Each source in turn. */
export async function* concatStream<T>(srcs: readonly AsyncIterable<T>[]): AsyncGenerator<T> {
  for (const s of srcs) yield* s;
}

/** Items of several sources side by side through `build`, until the shortest ends; every source is closed. */
export async function* zipStream<T>(
  srcs: readonly AsyncIterable<unknown>[],
  build: (v: unknown[]) => T,
): AsyncGenerator<T> {
  const its = srcs.map((s) => s[Symbol.asyncIterator]());
  const done = new Set<number>();
  try {
    for (;;) {
      const rs = await Promise.all(its.map((it) => it.next()));
      rs.forEach((r, i) => r.done && done.add(i));
      if (done.size > 0) return;
      yield build(rs.map((r) => r.value));
    }
  } finally {
    await Promise.all(its.map((it, i) => (done.has(i) ? undefined : it.return?.())));
  }
}
