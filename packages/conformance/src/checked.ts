/**
 * `checked(backend)`: a decorator for any backend that makes memory bugs loud. New allocations are
 * filled with garbage (so a kernel that leaves part of its output unwritten fails its case), freed
 * buffers are poisoned with NaN before they go, the allocation stack of every live buffer is recorded
 * (`leaks()` lists what is still alive, with where it was allocated), and every read is checked to
 * see all queued work: it is compared with a read taken after `synchronize()`.
 */
import type { ComputeBackend, DeviceBuffer, HostArray, NDArray } from '@polyhal/hal';

/** A buffer still alive, with where it was allocated. */
export interface LeakReport {
  /** The live buffer. */
  buffer: DeviceBuffer;
  /** The JavaScript stack of its allocation. */
  stack: string;
}

/** A backend wrapped by `checked`: the same backend, plus `leaks()` and the wrapped `inner`. */
export type CheckedBackend = ComputeBackend & {
  /** Buffers allocated through this wrapper and not freed, with their allocation stacks. */
  leaks(): LeakReport[];
  /** The wrapped backend. */
  readonly inner: ComputeBackend;
};

/** Thrown when a read differs from the same read after synchronize(). */
export class StaleReadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StaleReadError';
  }
}

function garbage(buffer: DeviceBuffer, seed: number): HostArray {
  const n = buffer.size;
  // bool: the host form holds 0/1 only, so the garbage is an irregular 0/1 pattern
  if (buffer.dtype === 'bool') return Uint8Array.from({ length: n }, (_, i) => ((i * 7 + seed) % 3) & 1);
  if (buffer.dtype === 'int32') return Int32Array.from({ length: n }, (_, i) => ((i + seed) * 2654435761) | 0);
  // int8, uint8: any byte (the host array wraps it); float16: large values and NaN, float16 ones
  if (buffer.dtype === 'int8') return Int8Array.from({ length: n }, (_, i) => (i + seed) * 2654435761);
  if (buffer.dtype === 'uint8') return Uint8Array.from({ length: n }, (_, i) => (i + seed) * 2654435761);
  const out = buffer.dtype === 'float64' ? new Float64Array(n) : new Float32Array(n);
  const scale = buffer.dtype === 'float16' ? 16 : 1e7;
  for (let i = 0; i < out.length; i++) out[i] = i % 3 === 0 ? NaN : ((i * 7919 + seed) % 1000) * scale;
  return out;
}

/** What a freed buffer is poisoned with: −1 (integers), true (bool), NaN (floats). */
function poison(buffer: DeviceBuffer): HostArray {
  const n = buffer.size;
  if (buffer.dtype === 'int32') return new Int32Array(n).fill(-1);
  if (buffer.dtype === 'int8') return new Int8Array(n).fill(-1);
  if (buffer.dtype === 'uint8') return new Uint8Array(n).fill(255);
  if (buffer.dtype === 'bool') return new Uint8Array(n).fill(1);
  return (buffer.dtype === 'float64' ? new Float64Array(n) : new Float32Array(n)).fill(NaN);
}

/**
 * Wraps `be` (any ComputeBackend) so that memory bugs fail loudly: fresh buffers hold garbage, freed ones are
 * poisoned, live ones keep their allocation stack, and a read that misses queued work throws StaleReadError.
 */
export function checked(be: ComputeBackend): CheckedBackend {
  const live = new Map<number, LeakReport>();
  let n = 0;
  const proxy: CheckedBackend = new Proxy(be as CheckedBackend, {
    get(target, prop, receiver) {
      switch (prop) {
        case 'inner':
          return be;
        case 'leaks':
          return () => [...live.values()];
        case 'allocate':
          return (size: number, dtype?: NDArray['dtype']) => {
            const b = target.allocate.call(receiver, size, dtype);
            target.write.call(receiver, b, garbage(b, ++n));
            live.set(b.id, { buffer: b, stack: new Error('allocated here').stack ?? '' });
            return b;
          };
        case 'deallocate':
          return (b: DeviceBuffer) => {
            if (live.has(b.id)) target.write.call(receiver, b, poison(b));
            target.deallocate.call(receiver, b);
            live.delete(b.id);
          };
        case 'read':
          return async (x: NDArray | DeviceBuffer) => {
            const first = await target.read.call(receiver, x);
            await target.synchronize.call(receiver);
            const again = await target.read.call(receiver, x);
            for (let i = 0; i < first.length; i++) {
              if (!Object.is(first[i], again[i]))
                throw new StaleReadError(
                  `read returned element ${i} = ${first[i]} before synchronize() and ${again[i]} ` +
                    `after: a read did not wait for queued work`,
                );
            }
            return first;
          };
        default: {
          const v = Reflect.get(target, prop, receiver) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(receiver) : v;
        }
      }
    },
  });
  return proxy;
}
