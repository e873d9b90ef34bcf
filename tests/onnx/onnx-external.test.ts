import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PolyHalError } from '@polyhal/hal';
import {
  decodeModel,
  type ExternalDataLoader,
  externalDataFromDirectory,
  OnnxDecodeError,
  type OnnxTensor,
} from '@polyhal/onnx';
import { attr, encodeModel, type GraphSpec, rawBytes, type TensorSpec } from '../support/onnx-builder.js';
import { runOrt } from '../support/onnx-ort.js';

// Models with external data (TensorProto data_location = EXTERNAL, external_data location/offset/length):
// decodeModel reads them through a loader (externalDataFromDirectory: a directory and Node's fs), checks
// every range before reading, and names the tensor, the file and the range in a typed error. The files
// are written here by tests/support/onnx-builder.ts; onnxruntime-node reads the same files as a peer.

let dir = '';
beforeAll(() => {
  dir = fs.mkdtempSync(join(tmpdir(), 'polyhal-onnx-external-'));
});
afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const W = [1.5, -2, 0.25, 8, -0.125, 3];
const K = [7n, -(2n ** 40n), 3n];

/** weights.bin: 8 bytes of padding, W (float32 [2, 3]) at 8, K (int64 [3]) at 32; sub/k.bin: K alone. */
function writeData(): void {
  const bin = new Uint8Array(56);
  bin.set(rawBytes('float32', W), 8);
  bin.set(rawBytes('int64', K), 32);
  fs.writeFileSync(join(dir, 'weights.bin'), bin);
  fs.mkdirSync(join(dir, 'sub'), { recursive: true });
  fs.writeFileSync(join(dir, 'sub', 'k.bin'), rawBytes('int64', K));
}

const ext = (name: string, dtype: TensorSpec['dtype'], dims: number[], kv: Record<string, string>): TensorSpec => ({
  name,
  dtype,
  dims,
  external: kv,
});

/** y = x + w (w external), with a Constant holding k (external, in a subdirectory) as a second output. */
function model(w: TensorSpec, k: TensorSpec = ext('k', 'int64', [3], { location: 'sub/k.bin' })): Uint8Array {
  const g: GraphSpec = {
    name: 'external',
    nodes: [
      { op: 'Add', inputs: ['x', 'w'], outputs: ['y'] },
      { op: 'Constant', inputs: [], outputs: ['k'], attrs: { value: attr.tensor(k) } },
    ],
    initializers: [w],
    inputs: [{ name: 'x', dtype: 'float32', shape: [2, 3] }],
    outputs: [
      { name: 'y', dtype: 'float32', shape: [2, 3] },
      { name: 'k', dtype: 'int64', shape: [3] },
    ],
  };
  return encodeModel(g, { opset: 13 });
}

const INLINE_K: TensorSpec = { name: 'k', dtype: 'int64', dims: [3], data: K };
const W_AT_8 = ext('w', 'float32', [2, 3], { location: 'weights.bin', offset: '8', length: '24' });
const loader = () => externalDataFromDirectory(dir, fs);

const decodeError = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(OnnxDecodeError);
    expect(e).toBeInstanceOf(PolyHalError);
    return (e as Error).message;
  }
  throw new Error('decoded without an error');
};

describe('external data', () => {
  test('tensors are read from the files at their offsets; onnxruntime reads the same values', () => {
    writeData();
    const bytes = model(W_AT_8);
    const m = decodeModel(bytes, { source: join(dir, 'model.onnx'), externalData: loader() });
    expect(m.initializers).toEqual([
      {
        name: 'w',
        dtype: 'float32',
        dims: [2, 3],
        data: Float32Array.from(W),
        external: { location: 'weights.bin', offset: 8, length: 24 },
      },
    ]);
    const k = m.nodes[1]!.attributes[0]!.value as OnnxTensor;
    expect(k).toEqual({
      name: 'k',
      dtype: 'int64',
      dims: [3],
      data: BigInt64Array.from(K),
      external: { location: 'sub/k.bin', offset: 0 },
    });
    // the peer: onnxruntime loads model.onnx from the directory and resolves the same locations
    fs.writeFileSync(join(dir, 'model.onnx'), bytes);
    const x = ['1', '2', '3', '4', '5', '6'];
    const [r] = runOrt([
      { model: join(dir, 'model.onnx'), feeds: [{ name: 'x', type: 'float32', dims: [2, 3], data: x }] },
    ]);
    expect(r!.error).toBeUndefined();
    expect(r!.outputs!['y']!.data).toEqual(W.map((w, i) => Math.fround(w + i + 1)));
    expect(r!.outputs!['k']!.data).toEqual(K.map(String));
  });

  test('the loader is asked for exactly the bytes the shape needs (no length key: the tensor size)', () => {
    writeData();
    const calls: [string, number, number][] = [];
    const spy: ExternalDataLoader = (location, offset, length) => {
      calls.push([location, offset, length]);
      return loader()(location, offset, length);
    };
    decodeModel(model(ext('w', 'float32', [2, 3], { location: 'weights.bin', offset: '8' })), { externalData: spy });
    expect(calls.sort()).toEqual([
      ['sub/k.bin', 0, 24],
      ['weights.bin', 8, 24],
    ]);
  });

  test.each([
    ['no loader', W_AT_8, undefined, /tensor 'w' is stored in external file 'weights\.bin': decode with an external/],
    [
      'a missing file',
      ext('w', 'float32', [2, 3], { location: 'nope.bin' }),
      loader,
      /tensor 'w': cannot read 24 bytes at offset 0 of 'nope\.bin': ENOENT/,
    ],
    [
      'a range past the end of the file',
      ext('w', 'float32', [2, 3], { location: 'weights.bin', offset: '40' }),
      loader,
      /tensor 'w': cannot read 24 bytes at offset 40 of 'weights\.bin': .*past the end of the file \(56 bytes\)/,
    ],
    [
      'a length that is not the shape',
      ext('w', 'float32', [2, 3], { location: 'weights.bin', length: '20' }),
      loader,
      /tensor 'w' of float32 \[2, 3\] needs 24 bytes; its external data has length 20/,
    ],
    ['a parent directory', ext('w', 'float32', [2, 3], { location: '../w.bin' }), loader, /outside the model/],
    ['an absolute path', ext('w', 'float32', [2, 3], { location: '/etc/passwd' }), loader, /outside the model/],
    ['a drive path', ext('w', 'float32', [2, 3], { location: 'C:\\w.bin' }), loader, /outside the model/],
    ['no location', ext('w', 'float32', [2, 3], { offset: '0' }), loader, /tensor 'w': external data without a loc/],
    [
      'an offset that is no byte count',
      ext('w', 'float32', [2, 3], { location: 'weights.bin', offset: '-8' }),
      loader,
      /tensor 'w': external data offset '-8' is not a byte count/,
    ],
    [
      'a shape of 4 TB over a 56-byte file',
      ext('w', 'float32', [1_000_000, 1_000_000], { location: 'weights.bin' }),
      loader,
      /cannot read 4000000000000 bytes at offset 0 of 'weights\.bin': .*past the end of the file \(56 bytes\)/,
    ],
    [
      'a shape beyond 2^53 bytes',
      ext('w', 'float32', [2 ** 30, 2 ** 30, 2 ** 30], { location: 'weights.bin' }),
      loader,
      new RegExp(
        "tensor 'w' of float32 \\[1073741824, 1073741824, 1073741824\\] " +
          'claims 1237940039285380274899124224 elements of 4 bytes',
      ),
    ],
  ])('%s: an OnnxDecodeError naming the tensor', (_, w, make, message) => {
    writeData();
    const options = { source: 'models/m.onnx', ...(make ? { externalData: make() } : {}) };
    const text = decodeError(() => decodeModel(model(w, INLINE_K), options));
    expect(text).toMatch(/^models\/m\.onnx: not an ONNX ModelProto: the graph 'external' initializer 0: /);
    expect(text).toMatch(message);
  });

  test('a loader that returns another number of bytes is an error, not a short tensor', () => {
    const short: ExternalDataLoader = (_l, _o, length) => new Uint8Array(length - 4);
    expect(decodeError(() => decodeModel(model(W_AT_8, INLINE_K), { externalData: short }))).toMatch(
      /tensor 'w': 'weights\.bin' gave 20 bytes, not 24/,
    );
  });
});
