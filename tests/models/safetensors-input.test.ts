// safetensors files arrive from strangers: every name is an ordinary entry (no prototype lookups, no
// leaked buffers), and every corrupt field of the header or the input is a typed error naming the
// tensor or field, raised before anything is allocated.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Linear, loadSafetensors, saveSafetensors, Tensor } from '@polyhal/autograd';
import { CpuBackend } from '@polyhal/backend-cpu';
import { type ComputeBackend, DTypeError, InvalidArgumentError, ShapeMismatchError } from '@polyhal/hal';

let cpu: CpuBackend;
beforeAll(() => {
  cpu = new CpuBackend();
});
afterAll(() => cpu.dispose());

/** Names that Object.prototype has (or is reached through). */
const PROTO_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];

/** A file with header `json` (as written) followed by `data`. */
function file(json: string, data: number[] = []): Uint8Array {
  const head = new TextEncoder().encode(json);
  const f = new Uint8Array(8 + head.length + data.length);
  new DataView(f.buffer).setBigUint64(0, BigInt(head.length), true);
  f.set(head, 8);
  f.set(data, 8 + head.length);
  return f;
}

/** float32 little-endian bytes of `values`. */
const f32 = (values: number[]): number[] => Array.from(new Uint8Array(new Float32Array(values).buffer));

/** The parsed JSON header of a file. */
function headerOf(bytes: Uint8Array): Record<string, unknown> {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  return JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
}

/** Expects `fn` to throw an instance of `cls` whose message matches every pattern, and to allocate nothing. */
function expectTyped(fn: () => unknown, cls: new (...a: never[]) => Error, ...patterns: RegExp[]): void {
  const live = cpu.liveBufferCount();
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(cls);
  for (const p of patterns) expect((caught as Error).message).toMatch(p);
  expect(cpu.liveBufferCount()).toBe(live);
}

const disposeAll = (ts: Record<string, Tensor>): void => {
  for (const t of Object.values(ts)) t.dispose();
};

describe('names that Object.prototype has', () => {
  test.each(PROTO_NAMES)('a tensor named %s loads as an ordinary own entry, and every buffer is released', (name) => {
    const live = cpu.liveBufferCount();
    const json =
      `{${JSON.stringify(name)}:{"dtype":"F32","shape":[2],"data_offsets":[0,8]},` +
      '"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}';
    const { tensors } = loadSafetensors(file(json, f32([1.5, -2, 7])), cpu);
    expect(Object.getPrototypeOf(tensors)).toBeNull();
    expect(Object.keys(tensors).sort()).toEqual([name, 'b'].sort());
    expect(Object.hasOwn(tensors, name)).toBe(true);
    const t = tensors[name]!;
    expect(t).toBeInstanceOf(Tensor);
    expect(Array.from(t.dataSync())).toEqual([1.5, -2]);
    expect(cpu.liveBufferCount()).toBe(live + 2);
    disposeAll(tensors);
    expect(cpu.liveBufferCount()).toBe(live);
  });

  test('metadata keys such as __proto__ and constructor are ordinary own entries', () => {
    const json =
      '{"__metadata__":{"__proto__":"p","constructor":"c","toString":"s"},' +
      '"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}';
    const { tensors, metadata } = loadSafetensors(file(json, f32([1])), cpu);
    expect(Object.getPrototypeOf(metadata)).toBeNull();
    expect(Object.keys(metadata).sort()).toEqual(['__proto__', 'constructor', 'toString']);
    expect(['__proto__', 'constructor', 'toString'].map((k) => metadata[k])).toEqual(['p', 'c', 's']);
    disposeAll(tensors);
  });

  test.each(PROTO_NAMES)(
    'a record holding %s (null-prototype or defineProperty) saves and round-trips',
    async (name) => {
      const bare = Object.create(null) as Record<string, Tensor>;
      bare[name] = Tensor.fromArray(cpu, [3, -4], [2]);
      bare['w'] = Tensor.fromArray(cpu, [5], [1], { dtype: 'int32' });
      const plain: Record<string, Tensor> = {};
      Object.defineProperty(plain, name, { value: bare[name], enumerable: true });
      plain['w'] = bare['w']!;
      for (const rec of [bare, plain]) {
        const bytes = await saveSafetensors(rec, Object.fromEntries([[name, 'meta']]));
        const header = headerOf(bytes);
        expect(Object.hasOwn(header, name)).toBe(true);
        expect(header[name]).toEqual({ dtype: 'F32', shape: [2], data_offsets: [0, 8] });
        const { tensors, metadata } = loadSafetensors(bytes, cpu);
        expect(Object.keys(tensors).sort()).toEqual([name, 'w'].sort());
        expect(Array.from(tensors[name]!.dataSync())).toEqual([3, -4]);
        expect(Array.from(tensors['w']!.dataSync())).toEqual([5]);
        expect(Object.keys(metadata)).toEqual([name]);
        disposeAll(tensors);
      }
      disposeAll(bare);
    },
  );
});

describe('Module.loadStateDict of a loaded record', () => {
  test.each(PROTO_NAMES)(
    'an extra tensor named %s is reported as unexpected, not looked up on a prototype',
    async (name) => {
      const model = new Linear(2, 1, { backend: cpu, rng: 1 });
      const state = Object.create(null) as Record<string, Tensor>;
      state['weight'] = Tensor.fromArray(cpu, [0.5, -1], [1, 2]);
      state['bias'] = Tensor.fromArray(cpu, [2], [1]);
      state[name] = Tensor.fromArray(cpu, [9], [1]);
      const { tensors } = loadSafetensors(await saveSafetensors(state), cpu);
      await expect(model.loadStateDict(tensors)).rejects.toThrow(new RegExp(`unexpected ${name}`));
      expect(await model.loadStateDict(tensors, { strict: false })).toEqual({ missing: [], unexpected: [name] });
      expect(Array.from(model.stateDict()['weight']!.dataSync())).toEqual([0.5, -1]);
      disposeAll(tensors);
      disposeAll(state);
      model.dispose();
    },
  );
});

describe('__metadata__ is an object of string → string', () => {
  const entry = '"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}';
  test.each([
    ['a string', '"pt"', /__metadata__ must be an object/],
    ['an array', '["pt"]', /__metadata__ must be an object/],
    ['a number', '3', /__metadata__ must be an object/],
    ['a number value', '{"format":1}', /__metadata__ value of "format" must be a string, got 1/],
    ['a null value', '{"format":null}', /"format" must be a string, got null/],
    ['an object value', '{"format":{"x":"y"}}', /"format" must be a string/],
  ])('on load, %s is an InvalidArgumentError naming the key', (_what, meta, pattern) => {
    expectTyped(
      () => loadSafetensors(file(`{"__metadata__":${meta},${entry}}`, f32([1])), cpu),
      InvalidArgumentError,
      /loadSafetensors/,
      pattern,
    );
  });

  test('on load, null is no metadata (as the reference reader takes it)', () => {
    const { tensors, metadata } = loadSafetensors(file(`{"__metadata__":null,${entry}}`, f32([1])), cpu);
    expect(Object.keys(metadata)).toEqual([]);
    disposeAll(tensors);
  });

  test.each([
    ['a string', 'pt', /__metadata__ must be an object/],
    ['an array', ['pt'], /__metadata__ must be an object/],
    ['a Map', new Map([['format', 'pt']]), /__metadata__ must be an object of strings, got a Map/],
    ['a number value', { format: 1 }, /__metadata__ value of "format" must be a string, got 1/],
    ['an undefined value', { format: undefined }, /"format" must be a string, got undefined/],
  ])('on save, %s is an InvalidArgumentError naming the key', async (_what, meta, pattern) => {
    const a = Tensor.fromArray(cpu, [1], [1]);
    const call = saveSafetensors({ a }, meta as unknown as Record<string, string>);
    await expect(call).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(call).rejects.toThrow(pattern);
    a.dispose();
  });

  test('on save, null is no metadata', async () => {
    const a = Tensor.fromArray(cpu, [1], [1]);
    expect(Object.keys(headerOf(await saveSafetensors({ a }, null)))).toEqual(['a']);
    a.dispose();
  });
});

describe('inputs of the wrong kind', () => {
  const good = (): Uint8Array => file('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', f32([2]));

  test.each([
    ['an ArrayBuffer', () => good().buffer, /bytes must be a Uint8Array, got .*ArrayBuffer.*new Uint8Array/],
    ['null', () => null, /bytes must be a Uint8Array, got null/],
    ['undefined', () => undefined, /got undefined/],
    ['a string', () => 'safetensors', /got 'safetensors'/],
    ['an array of numbers', () => Array.from(good()), /bytes must be a Uint8Array, got an array/],
    ['a Float32Array', () => new Float32Array(4), /got a Float32Array/],
  ])('loadSafetensors of %s is an InvalidArgumentError naming bytes', (_what, make, pattern) => {
    expectTyped(() => loadSafetensors(make() as unknown as Uint8Array, cpu), InvalidArgumentError, pattern);
  });

  test('a Node Buffer (a Uint8Array) and a view at an offset load', () => {
    const f = good();
    const { tensors } = loadSafetensors(Buffer.from(f), cpu);
    expect(Array.from(tensors['a']!.dataSync())).toEqual([2]);
    disposeAll(tensors);
    const padded = new Uint8Array(f.length + 3);
    padded.set(f, 3);
    const back = loadSafetensors(padded.subarray(3), cpu).tensors;
    expect(Array.from(back['a']!.dataSync())).toEqual([2]);
    disposeAll(back);
  });

  test('a backend that is not one is an InvalidArgumentError naming backend', () => {
    expectTyped(() => loadSafetensors(good(), null as unknown as ComputeBackend), InvalidArgumentError, /backend/);
    expectTyped(() => loadSafetensors(good(), {} as ComputeBackend), InvalidArgumentError, /backend must be/);
  });

  test('saveSafetensors of a Map, an array, null or a non-tensor value is an InvalidArgumentError', async () => {
    const a = Tensor.fromArray(cpu, [1], [1]);
    const cases: [unknown, RegExp][] = [
      [new Map([['a', a]]), /tensors must be a record.*got a Map.*Object\.fromEntries/],
      [[a], /tensors must be a record/],
      [null, /tensors must be a record of name → Tensor, got null/],
      [{ a, b: [1, 2] }, /tensors\["b"\] must be a Tensor, got \[1, 2\]/],
      [{ a, c: undefined }, /tensors\["c"\] must be a Tensor, got undefined/],
    ];
    for (const [arg, pattern] of cases) {
      const call = saveSafetensors(arg as Record<string, Tensor>);
      await expect(call).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(call).rejects.toThrow(pattern);
    }
    a.dispose();
  });
});

describe('corrupt headers are typed errors naming the tensor and field, and allocate nothing', () => {
  const one = (fields: string, data = f32([1, 2])): Uint8Array =>
    file(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{${fields}}}`, [...f32([9]), ...data]);

  test.each([...PROTO_NAMES, 'BF16', 'f32', ''])('dtype "%s" is a DTypeError naming the tensor and dtype', (code) => {
    expectTyped(
      () => loadSafetensors(one(`"dtype":${JSON.stringify(code)},"shape":[2],"data_offsets":[4,12]`), cpu),
      DTypeError,
      /tensor "w": dtype/,
      new RegExp(`"${code}" is not read; F32, `),
    );
  });

  test.each([
    ['a missing dtype', '"shape":[2],"data_offsets":[4,12]', /tensor "w": dtype must be a string, got undefined/],
    ['a number dtype', '"dtype":4,"shape":[2],"data_offsets":[4,12]', /tensor "w": dtype must be a string, got 4/],
    ['a missing shape', '"dtype":"F32","data_offsets":[4,12]', /tensor "w": shape undefined is not a list/],
    ['a negative size', '"dtype":"F32","shape":[-2],"data_offsets":[4,12]', /tensor "w": shape \[-2\]/],
    ['a fractional size', '"dtype":"F32","shape":[1.5],"data_offsets":[4,12]', /tensor "w": shape \[1.5\]/],
    ['a string size', '"dtype":"F32","shape":["2"],"data_offsets":[4,12]', /tensor "w": shape/],
    ['missing offsets', '"dtype":"F32","shape":[2]', /tensor "w": data_offsets undefined is not \[begin, end\]/],
    ['three offsets', '"dtype":"F32","shape":[2],"data_offsets":[4,12,12]', /"w": data_offsets \[4, 12, 12\]/],
    ['one offset', '"dtype":"F32","shape":[0],"data_offsets":[4]', /"w": data_offsets \[4\] is not/],
    ['string offsets', '"dtype":"F32","shape":[2],"data_offsets":["4","12"]', /"w": data_offsets/],
    ['a negative offset', '"dtype":"F32","shape":[2],"data_offsets":[-4,4]', /"w": data_offsets \[-4, 4\]/],
    ['reversed offsets', '"dtype":"F32","shape":[2],"data_offsets":[12,4]', /"w": data_offsets \[12, 4\] end before/],
    ['offsets past the data', '"dtype":"F32","shape":[2],"data_offsets":[8,16]', /"w".*outside the 12 data bytes/],
    ['huge offsets', '"dtype":"F32","shape":[2],"data_offsets":[1e300,1e300]', /"w": data_offsets/],
  ])('%s is an InvalidArgumentError naming the tensor and field', (_what, fields, pattern) => {
    expectTyped(() => loadSafetensors(one(fields), cpu), InvalidArgumentError, pattern);
  });

  test.each([
    ['a number', '5'],
    ['null', 'null'],
    ['an array', '[]'],
    ['a string', '"F32"'],
  ])('an entry that is %s is an InvalidArgumentError naming the tensor', (_what, value) => {
    const f = file(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":${value}}`, f32([1]));
    expectTyped(() => loadSafetensors(f, cpu), InvalidArgumentError, /tensor "w" must be an object \{dtype, shape/);
  });

  test.each([
    ['shape × item size above the bytes', '"dtype":"F32","shape":[3],"data_offsets":[4,12]', /"w" has 8 bytes/],
    ['shape × item size below the bytes', '"dtype":"F16","shape":[2],"data_offsets":[4,12]', /F16 shape \[2\] \(4\)/],
    ['a product past 2^53', '"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[4,12]', /"w" has 8/],
  ])('%s is a ShapeMismatchError naming the tensor', (_what, fields, pattern) => {
    expectTyped(() => loadSafetensors(one(fields), cpu), ShapeMismatchError, pattern);
  });

  test('overlapping spans are refused whatever the header order, naming both tensors', () => {
    const data = f32([1, 2, 3]);
    const f = file(
      '{"late":{"dtype":"F32","shape":[2],"data_offsets":[4,12]},' +
        '"early":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}',
      data,
    );
    expectTyped(() => loadSafetensors(f, cpu), InvalidArgumentError, /"early" \[0, 8\] and "late" \[4, 12\] overlap/);
    // Out of header order but disjoint: both load.
    const g = file(
      '{"late":{"dtype":"F32","shape":[1],"data_offsets":[8,12]},' +
        '"early":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}',
      data,
    );
    const { tensors } = loadSafetensors(g, cpu);
    expect(Array.from(tensors['early']!.dataSync())).toEqual([1, 2]);
    expect(Array.from(tensors['late']!.dataSync())).toEqual([3]);
    disposeAll(tensors);
  });

  test('header length, encoding and JSON: each an InvalidArgumentError', () => {
    const f = file('{}');
    new DataView(f.buffer).setBigUint64(0, 2n ** 63n, true);
    expectTyped(() => loadSafetensors(f, cpu), InvalidArgumentError, /header length \d+ does not fit 10 bytes/);
    const g = file('{"a":1}');
    new DataView(g.buffer).setBigUint64(0, 8n, true);
    expectTyped(() => loadSafetensors(g, cpu), InvalidArgumentError, /header length 8 does not fit 15 bytes/);
    expectTyped(() => loadSafetensors(new Uint8Array(7), cpu), InvalidArgumentError, /7 bytes: too short/);
    expectTyped(() => loadSafetensors(file('{"a": [1, 2'), cpu), InvalidArgumentError, /not UTF-8 JSON/);
    const bin = file('{"a":1}');
    bin[9] = 0xff;
    expectTyped(() => loadSafetensors(bin, cpu), InvalidArgumentError, /not UTF-8 JSON/);
    for (const h of ['[]', '"x"', '7', 'null'])
      expectTyped(() => loadSafetensors(file(h), cpu), InvalidArgumentError, /the header is not an object/);
  });
});
