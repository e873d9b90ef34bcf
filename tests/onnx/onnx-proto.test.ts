import { describe, expect, test } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeModel, decodeTensor, OnnxDecodeError } from '@polyhal/conformance';
import { PolyHalError } from '@polyhal/hal';

// The ONNX protobuf decoder on bytes that are not a valid message: a typed error (OnnxDecodeError, a
// PolyHalError) that says what is wrong, never a message read from bytes past the end or an empty one.
const DIR = process.env['POLYHAL_ONNX_NODE_TESTS'] ?? '/usr/share/libonnx-testdata/data/node';

const decodeError = (f: () => unknown): PolyHalError => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(PolyHalError);
    expect(e).toBeInstanceOf(OnnxDecodeError);
    return e as PolyHalError;
  }
  throw new Error('decoded without an error');
};

describe('decodeTensor and decodeModel on malformed bytes', () => {
  test.each([
    ['an empty file', [], /empty file \(0 bytes\)/],
    ['a varint cut short (dims: 0x80, then the end)', [0x08, 0x80], /past the end/],
    ['a varint cut short inside a packed field', [0x0a, 0x02, 0x80, 0x80], /past the end/],
    ['a length past the end (raw_data: 16 bytes, 2 there)', [0x4a, 0x10, 1, 2], /past the end/],
    ['a float past the end', [0x10, 0x01, 0x25, 0, 0], /past the end/],
    ['an invalid wire type', [0x0f], /wire type 7/],
    ['field number 0', [0x00, 0x00], /field number 0/],
    ['no data_type (dims [2] only)', [0x08, 0x02], /no data_type/],
    ['raw_data of 3 bytes for float32', [0x08, 0x01, 0x10, 0x01, 0x4a, 0x03, 0, 0, 0], /3 bytes.*float32/],
    [
      'a negative dimension',
      [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x10, 0x01],
      /dimension -1/,
    ],
  ])('a TensorProto: %s', (_, bytes, message) => {
    expect(decodeError(() => decodeTensor(Uint8Array.from(bytes))).message).toMatch(message);
  });

  test.each([
    ['an empty file', [], /empty file \(0 bytes\)/],
    ['a graph whose length runs past the end', [0x08, 0x07, 0x3a, 0x32, 0x0a, 0x00], /past the end/],
    ['no graph (ir_version 7 only)', [0x08, 0x07], /no graph/],
    ['no ir_version (an empty graph only)', [0x3a, 0x00], /no ir_version/],
    ['no opset_import (ir_version 7, an empty graph)', [0x08, 0x07, 0x3a, 0x00], /no opset_import/],
    ['a string field as a varint (ir_version 7, producer_name 5)', [0x08, 0x07, 0x10, 0x05], /wire type 0/],
  ])('a ModelProto: %s', (_, bytes, message) => {
    expect(decodeError(() => decodeModel(Uint8Array.from(bytes))).message).toMatch(message);
  });

  test("ONNX's own test_add decodes; every cut of its files is an OnnxDecodeError", () => {
    const add = join(DIR, 'test_add');
    if (!existsSync(join(add, 'model.onnx'))) {
      console.warn(`ONNX node tests not found at ${DIR}: skipped`);
      return;
    }
    const model = readFileSync(join(add, 'model.onnx'));
    const input = readFileSync(join(add, 'test_data_set_0/input_0.pb'));
    expect(decodeModel(model).nodes.map((n) => n.opType)).toEqual(['Add']);
    expect(decodeTensor(input)).toMatchObject({ dtype: 'float32', dims: [3, 4, 5] });
    for (let n = 0; n < model.length; n++) decodeError(() => decodeModel(model.subarray(0, n)));
    // a cut between fields still decodes as a shorter message: only cuts that leave it invalid must throw
    for (let n = 0; n < input.length; n++) {
      let t: ReturnType<typeof decodeTensor> | undefined;
      try {
        t = decodeTensor(input.subarray(0, n));
      } catch (e) {
        expect((e as Error).name).toBe('OnnxDecodeError');
        continue;
      }
      throw new Error(`a cut at byte ${n} of ${input.length} decoded: ${JSON.stringify(t).slice(0, 200)}`);
    }
  });
});
