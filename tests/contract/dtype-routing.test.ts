import { describe, expect, test } from '@jest/globals';
import {
  type DeviceBuffer,
  type DType,
  DTYPE_DESCRIPTORS,
  DTYPES,
  hostValue,
  type NDArray,
  OPTIONAL_HOOKS,
  REQUIRED_HOOKS,
} from '@polyhal/hal';
import { ReferenceBackend } from '@polyhal/backend-reference';

// The routing step between BaseBackend's ops and the kernel hooks (hal/src/contract/kernel-router.ts), seen
// from a backend: a reference backend that records the dtype of every array and buffer each hook receives.
// The contract (hooks.ts): int8, uint8 and float16 reach the kernels as their storage dtype, except as
// copyKernel's `out` (the narrowing cast); float64 reaches no kernel hook (host kernels run it).

type Call = { hook: string; dtypes: DType[] };
const isArg = (a: unknown): a is NDArray | DeviceBuffer => typeof a === 'object' && a !== null && 'dtype' in a;

/** A ReferenceBackend whose every hook records its call (the hooks are its class's methods: no patching). */
function recording(): { be: ReferenceBackend; calls: Call[] } {
  const calls: Call[] = [];
  class Recorder extends ReferenceBackend {}
  for (const { name } of [...REQUIRED_HOOKS, ...OPTIONAL_HOOKS]) {
    const inherited = (ReferenceBackend.prototype as unknown as Record<string, unknown>)[name];
    if (typeof inherited !== 'function') continue;
    Object.defineProperty(Recorder.prototype, name, {
      value(this: ReferenceBackend, ...args: unknown[]) {
        calls.push({ hook: name, dtypes: args.filter(isArg).map((a) => a.dtype) });
        return (inherited as (...a: unknown[]) => unknown).apply(this, args);
      },
    });
  }
  return { be: new Recorder(), calls };
}

const KERNEL = /Kernel$/;
const kernelCalls = (calls: Call[]) => calls.filter((c) => KERNEL.test(c.hook));

describe('kernels meet only the dtypes they take', () => {
  test('int8 add: the binary kernel computes in int32, copyKernel narrows (wrapping as int8 does)', async () => {
    const { be, calls } = recording();
    const a = [127, -128, 5, 100];
    const b = [1, -1, 3, 100];
    const x = be.fromArray(a, [4], 'int8');
    const y = be.fromArray(b, [4], 'int8');
    calls.length = 0;
    const z = be.add(x, y);
    expect(await be.read(z)).toEqual(Int8Array.from(a.map((v, i) => v + b[i]!)));
    expect(kernelCalls(calls)).toEqual([
      { hook: 'binaryKernel', dtypes: ['int32', 'int32', 'int32'] },
      { hook: 'copyKernel', dtypes: ['int32', 'int8'] },
    ]);
    be.dispose();
  });

  test('float16 neg and a float16 → int8 cast: float32 storage in, narrow dtypes only as copyKernel out', async () => {
    const { be, calls } = recording();
    const x = be.fromArray([1.5, -2, 65504], [3], 'float16');
    calls.length = 0;
    const n = be.neg(x);
    const c = be.cast(x, 'int8');
    expect(await be.read(n)).toEqual(Float32Array.from([-1.5, 2, -65504]));
    expect(await be.read(c)).toEqual(Int8Array.from([1, -2, 127]));
    for (const call of kernelCalls(calls)) {
      const narrowAt = call.dtypes.flatMap((d, i) => (d === 'float16' || d === 'int8' ? [i] : []));
      if (call.hook === 'copyKernel') expect(narrowAt.every((i) => i === call.dtypes.length - 1)).toBe(true);
      else expect(narrowAt).toEqual([]);
    }
    be.dispose();
  });

  test('int8 gather out of range: the kernel fills int32 storage, the HAL writes int8’s fill (−128)', async () => {
    const { be, calls } = recording();
    const x = be.fromArray([7, -3], [2], 'int8');
    const i = be.fromArray(Int32Array.from([1, 5, -1]), [3]);
    calls.length = 0;
    expect(await be.read(be.gather(x, i))).toEqual(Int8Array.from([-3, -128, -3]));
    expect(kernelCalls(calls)[0]).toEqual({ hook: 'gatherKernel', dtypes: ['int32', 'int32', 'int32'] });
    be.dispose();
  });

  test('float64 add, sum and cast reach no kernel hook: the host computes them (hostStorage)', async () => {
    const { be, calls } = recording();
    const x = be.fromArray([0.1, 1e-17, 2 ** 53], [3], 'float64');
    const y = be.fromArray([0.2, 1, 1], [3], 'float64');
    calls.length = 0;
    const s = be.add(x, y);
    const t = be.sum(s);
    const f = be.cast(s, 'float32');
    expect(await be.read(s)).toEqual(Float64Array.from([0.1 + 0.2, 1e-17 + 1, 2 ** 53 + 1]));
    expect(await be.read(t)).toEqual(Float64Array.from([0.1 + 0.2 + (1e-17 + 1) + (2 ** 53 + 1)]));
    expect(await be.read(f)).toEqual(Float32Array.from([0.1 + 0.2, 1e-17 + 1, 2 ** 53 + 1]));
    expect(kernelCalls(calls)).toEqual([]);
    expect(calls.filter((c) => c.dtypes.includes('float64')).map((c) => c.hook)).toEqual(
      expect.arrayContaining(['createStorage', 'readStorage']),
    );
    be.dispose();
  });
});

describe('the dtype descriptors (DTYPE_DESCRIPTORS)', () => {
  test('one per dtype, in DTYPES order; storage dtypes are routed natively or on the host', () => {
    expect(Object.keys(DTYPE_DESCRIPTORS)).toEqual([...DTYPES]);
    for (const d of DTYPES) {
      const { storage, route } = DTYPE_DESCRIPTORS[d];
      expect(DTYPE_DESCRIPTORS[storage].storage).toBe(storage);
      if (route === 'narrow') expect(storage).not.toBe(d);
      else expect(storage).toBe(d === 'bool' ? 'int32' : d);
    }
  });

  test("fromHost is the host typed array's own conversion (ints wrap, float32 and float64 as stored)", () => {
    const values = [0, -0.5, 1.7, -1.7, 127, 128, -129, 255, 256, 2 ** 31, -(2 ** 31) - 1, 1e10, 0.1, NaN, -Infinity];
    for (const d of DTYPES) {
      if (d === 'bool' || d === 'float16') continue; // no typed array holds them (bool: Uint8Array of 0/1)
      const H = DTYPE_DESCRIPTORS[d].hostArray;
      for (const v of values) expect({ d, v, got: hostValue(d, v) }).toEqual({ d, v, got: H.from([v])[0] });
    }
    for (const v of values) expect(hostValue('bool', v)).toBe(v === 0 ? 0 : 1);
  });
});
