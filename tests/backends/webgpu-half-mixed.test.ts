// The 4-wide kernel of webgpu's shader-f16 path for operands that mix float16 and float32 or a float32 or bool
// output (backends/webgpu/src/kernels/half-native-mixed.ts, dispatched by dispatch-half-native.ts): a float32
// product plus a float16 bias row into float32 (as a float16 Linear on the tensor cores adds its bias), a float16
// array times a float16 scalar into float16, comparisons into bool. The binary kernel hook is called directly, as
// the matmul hook does (the HAL's binary ops take one dtype). Each result is checked against a float64 oracle
// computed here (float16 inputs and outputs rounded with the HAL's roundFloat16), and bit for bit against the
// one-element kernel (elementwiseNativeWgsl) on a transposed view of the same values; the kernel that ran is read
// from the pipeline key of its dispatch. Counts and rows that are not multiples of 4 and offsets that are not
// fall back to the one-element kernel, with the same values.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createWebGpuBackend, type WebGpuBackend } from '@polyhal/backend-webgpu';
import { type BinaryOp, type DeviceBuffer, type NDArray, roundFloat16, viewOf } from '@polyhal/hal';

let be: WebGpuBackend;
let keys: string[] = [];
type Hook = (op: BinaryOp, a: NDArray, b: NDArray, out: DeviceBuffer) => void;
let binaryKernel: Hook;
beforeAll(async () => {
  be = await createWebGpuBackend({ float16Arithmetic: 'native' });
  const batch = (be as unknown as { batch: { dispatch: (op: string, key: string, ...rest: unknown[]) => void } }).batch;
  const dispatch = batch.dispatch.bind(batch);
  batch.dispatch = (op: string, key: string, ...rest: unknown[]): void => {
    keys.push(key);
    dispatch(op, key, ...rest);
  };
  const hooks = be as unknown as { binaryKernel: Hook };
  binaryKernel = hooks.binaryKernel.bind(be);
});
afterAll(() => be?.dispose());

/** The pipeline keys of the elementwise dispatches since the last call. */
const ran = (): string[] => {
  const k = keys.filter((s) => s.startsWith('binaryhn'));
  keys = [];
  return k;
};

/** Deterministic values of both signs and a wide range of magnitudes (no NaN: compared with Object.is). */
const values = (n: number, seed: number): number[] =>
  Array.from({ length: n }, (_, i) => {
    const u = Math.sin(i * 12.9898 + seed * 78.233) * 43758.5453;
    const r = u - Math.floor(u);
    return Math.fround((r * 2 - 1) * 2 ** (Math.floor(r * 24) - 12) * (1 + i / 7));
  });

type Kind = 'float32' | 'float16';
const OPS: Record<string, (x: number, y: number) => number> = {
  add: (x, y) => x + y,
  sub: (x, y) => x - y,
  mul: (x, y) => x * y,
  div: (x, y) => x / y,
  less: (x, y) => (x < y ? 1 : 0),
};

interface Operand {
  dtype: Kind;
  /** The values of the operand's storage (before rounding to its dtype). */
  data: number[];
  /** The view: shape, strides, offset into `data`. */
  shape: number[];
  strides: number[];
  offset: number;
}

const stored = (o: Operand): number[] => o.data.map((v) => (o.dtype === 'float16' ? roundFloat16(v) : Math.fround(v)));

/** The operand's value at output element `i` (row-major over the view's shape). */
function at(o: Operand, i: number): number {
  let off = o.offset;
  for (let d = o.shape.length - 1; d >= 0; d--) {
    off += (i % o.shape[d]!) * o.strides[d]!;
    i = Math.floor(i / o.shape[d]!);
  }
  return stored(o)[off]!;
}

/** The operand as the kernel hooks receive it: float16 in its float32 storage dtype (the HAL's router). */
function upload(o: Operand, transposed = false): NDArray {
  if (!transposed) {
    const x = be.fromArray(Float32Array.from(o.data), [o.data.length], o.dtype);
    return { ...x, dtype: 'float32', shape: o.shape, strides: o.strides, offset: o.offset };
  }
  // the same values through a non-contiguous view: stored as [cols, rows], read as its transpose
  const [rows, cols] = [o.shape[0]!, o.shape[1]!];
  const t = new Float32Array(rows * cols);
  for (let i = 0; i < rows * cols; i++) t[(i % cols) * rows + Math.floor(i / cols)] = at(o, i);
  const y = be.fromArray(t, [cols, rows], o.dtype);
  return { ...y, dtype: 'float32', shape: [rows, cols], strides: [1, rows], offset: 0 };
}

/** op(a, b) into an `out`-typed buffer through the binary kernel hook: the values and the kernels that ran. */
async function compute(op: string, a: NDArray, b: NDArray, out: Kind | 'bool', shape: number[]) {
  ran();
  const size = shape.reduce((p, d) => p * d, 1);
  const buffer = be.allocate(size, out);
  binaryKernel(op as BinaryOp, a, b, buffer);
  const result = viewOf(buffer, shape);
  const got = Array.from(await be.read(result));
  be.free(result);
  be.free(a);
  be.free(b);
  return { got, keys: ran() };
}

function oracle(op: string, a: Operand, b: Operand, out: Kind | 'bool', size: number): number[] {
  return Array.from({ length: size }, (_, i) => {
    const v = OPS[op]!(at(a, i), at(b, i));
    if (out === 'bool') return v;
    const f = Math.fround(v); // add, sub, mul, div of float32 values: one rounding of the exact result
    return out === 'float16' ? roundFloat16(f) : f;
  });
}

const contiguous = (dtype: Kind, rows: number, n: number, seed: number, offset = 0): Operand => ({
  dtype,
  data: values(rows * n + offset, seed),
  shape: [rows, n],
  strides: [n, 1],
  offset,
});
const row = (dtype: Kind, rows: number, n: number, seed: number, offset = 0): Operand => ({
  dtype,
  data: values(n + offset, seed),
  shape: [rows, n],
  strides: [0, 1],
  offset,
});
const scalar = (dtype: Kind, rows: number, n: number, seed: number, offset = 0): Operand => ({
  dtype,
  data: values(1 + offset, seed).map((v) => v * 4 + 1),
  shape: [rows, n],
  strides: [0, 0],
  offset,
});

/** Checks op(a, b) against the oracle and returns the kernel keys. div: within 2 float32 ulp before rounding. */
async function check(op: string, a: Operand, b: Operand, out: Kind | 'bool'): Promise<string[]> {
  const shape = a.shape;
  const size = shape[0]! * shape[1]!;
  const { got, keys: k } = await compute(op, upload(a), upload(b), out, shape);
  const want = oracle(op, a, b, out, size);
  if (op === 'div') {
    for (let i = 0; i < size; i++) {
      if (got[i] === want[i]) continue;
      const tol = out === 'float16' ? Math.max(Math.abs(want[i]!) * 2 ** -10, 2 ** -24) : Math.abs(want[i]!) * 2 ** -22;
      expect(Math.abs(got[i]! - want[i]!)).toBeLessThanOrEqual(tol);
    }
  } else expect(got).toEqual(want);
  // the one-element kernel on the transposed views of the same values: the same bits
  const twin = await compute(op, upload(a, a.strides[1] !== 0), upload(b, b.strides[1] !== 0), out, shape);
  expect(twin.keys).toEqual([expect.stringMatching(/^binaryhn\/.*\/false\/\d+$/)]);
  expect(twin.got).toEqual(got);
  return k;
}

const FOUR = /^binaryhn4\//;

describe('mixed float16/float32 operands, 4 elements per invocation', () => {
  for (const op of Object.keys(OPS)) {
    const out = op === 'less' ? ('bool' as const) : ('float32' as const);
    test(`${op}: float32 [rows, n] with a float16 row into ${out}`, async () => {
      const k = await check(op, contiguous('float32', 37, 24, 1), row('float16', 37, 24, 2), out);
      expect(k).toEqual([expect.stringMatching(FOUR)]);
      expect(k[0]).toContain('/vec-row');
    });
  }

  test('float16 and float32, both contiguous, into float16 and float32: add, div', async () => {
    for (const [op, o] of [
      ['add', 'float16'],
      ['add', 'float32'],
      ['div', 'float16'],
    ] as const) {
      const k = await check(op, contiguous('float16', 9, 44, 3), contiguous('float32', 9, 44, 4), o);
      expect(k).toEqual([expect.stringMatching(/^binaryhn4\/.*\/vec-vec$/)]);
    }
  });

  test('a float16 array times a float16 scalar into float16 (computed in f16), and into float32', async () => {
    for (const o of ['float16', 'float32'] as const) {
      const k = await check('mul', contiguous('float16', 6, 52, 5), scalar('float16', 6, 52, 6, 3), o);
      expect(k).toEqual([expect.stringMatching(/^binaryhn4\/mul\/.*\/vec-scalar$/)]);
    }
  });

  test('float16 rows into float16: a row of float16 added to float16 in f16', async () => {
    const k = await check('add', contiguous('float16', 5, 16, 7, 8), row('float16', 5, 16, 8, 4), 'float16');
    expect(k).toEqual([expect.stringMatching(/^binaryhn4\/add\/.*\/hhh\/vec-row$/)]);
  });

  test('rows and counts that are not multiples of 4, offsets that are not: the one-element kernel', async () => {
    const one = [expect.stringMatching(/^binaryhn\//)];
    // n = 23: the row is not a whole number of vec4s
    expect(await check('add', contiguous('float32', 8, 23, 9), row('float16', 8, 23, 10), 'float32')).toEqual(one);
    // 7 × 5 elements: the count is odd
    expect(await check('sub', contiguous('float16', 7, 5, 11), contiguous('float32', 7, 5, 12), 'float32')).toEqual(
      one,
    );
    // offsets 1 and 2
    expect(await check('mul', contiguous('float32', 4, 12, 13, 1), row('float16', 4, 12, 14), 'float16')).toEqual(one);
    expect(await check('div', contiguous('float32', 4, 12, 15), row('float16', 4, 12, 16, 2), 'float32')).toEqual(one);
    // a scalar at an odd offset still takes the 4-wide kernel (one element read)
    expect(await check('add', contiguous('float32', 4, 12, 17), scalar('float16', 4, 12, 18, 1), 'float32')).toEqual([
      expect.stringMatching(FOUR),
    ]);
  });
});
