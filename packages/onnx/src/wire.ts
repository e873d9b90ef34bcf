/**
 * A check of protobuf's wire format against a message type, before protobufjs decodes: protobufjs reads a
 * known field by its declared type whatever its wire type, so malformed bytes could decode as garbage.
 */
import { PolyHalError } from '@polyhal/hal';
import protobuf from 'protobufjs/light.js';

/**
 * Bytes that are not a valid ONNX ModelProto or TensorProto: an empty file, a varint or length that runs
 * past the end, an invalid wire type, a field of the wrong wire type, or a message without the fields
 * ONNX requires (a model's ir_version, opset_import and graph; a tensor's data_type). The message says
 * which, with the byte offset where it applies.
 */
export class OnnxDecodeError extends PolyHalError {}

/** The wire type a field is encoded with (unpacked): 0 varint, 1 fixed 64-bit, 2 length-delimited, 5 fixed 32-bit. */
function wireType(field: protobuf.Field): number {
  if (field.resolvedType instanceof protobuf.Type) return 2;
  if (field.type === 'float' || field.type === 'fixed32' || field.type === 'sfixed32') return 5;
  if (field.type === 'double' || field.type === 'fixed64' || field.type === 'sfixed64') return 1;
  return field.type === 'string' || field.type === 'bytes' ? 2 : 0;
}

/** Messages nest at most this deep (graphs in attributes); deeper is not an ONNX file. */
const MAX_DEPTH = 64;
/** Protobuf's largest field number, 2^29 − 1. */
const MAX_FIELD = 536_870_911;

/**
 * Checks that `bytes[start, end)` is well-formed protobuf for message type `t`, descending into fields of
 * message types: every tag, varint and length ends by `end`, every field number is in [1, 2^29 − 1], every wire
 * type is 0, 1, 2 or 5, and a known
 * field has its type's wire type (or 2, packed, for a repeated number). Throws OnnxDecodeError, naming the
 * byte offset and the field; protobufjs then decodes bytes that hold no surprise.
 */
function checkWire(bytes: Uint8Array, start: number, end: number, t: protobuf.Type, depth = 0): void {
  if (depth > MAX_DEPTH) throw new OnnxDecodeError(`messages nested deeper than ${MAX_DEPTH} at byte ${start}`);
  let pos = start;
  const past = (what: string, at: number) =>
    new OnnxDecodeError(`${what} at byte ${at} runs past the end (byte ${end}) of ${t.name}`);
  const varint = (what: string, limit = end): number => {
    const at = pos;
    let v = 0;
    for (let i = 0; i < 10; i++) {
      if (pos >= limit) throw past(what, at);
      const b = bytes[pos++]!;
      v += (b & 0x7f) * 2 ** (7 * i);
      if (b < 0x80) return v;
    }
    throw new OnnxDecodeError(`${what} at byte ${at} is a varint longer than 10 bytes`);
  };
  while (pos < end) {
    const at = pos;
    const tag = varint('a field tag');
    const id = Math.floor(tag / 8);
    const wire = tag % 8;
    if (id === 0) throw new OnnxDecodeError(`field number 0 at byte ${at} of ${t.name}`);
    // protobuf's largest field number; protobufjs reads a tag as 32 bits, so a larger one would alias a field
    if (id > MAX_FIELD)
      throw new OnnxDecodeError(`field number ${id} at byte ${at} of ${t.name} is beyond ${MAX_FIELD}`);
    const field = t.fieldsById[id];
    const name = field ? `${t.name}.${field.name}` : `field ${id} of ${t.name}`;
    const want = field ? wireType(field) : wire;
    const packed = field?.repeated === true && wire === 2 && want !== 2;
    if (wire !== want && !packed) throw new OnnxDecodeError(`${name} at byte ${at} has wire type ${wire}, not ${want}`);
    if (wire === 0) varint(name);
    else if (wire === 1 || wire === 5) {
      if (pos + (wire === 1 ? 8 : 4) > end) throw past(name, at);
      pos += wire === 1 ? 8 : 4;
    } else if (wire === 2) {
      const length = varint(`the length of ${name}`);
      const stop = pos + length;
      if (stop > end) throw past(`${name} (${length} bytes)`, at);
      if (packed && want === 0) while (pos < stop) varint(name, stop);
      else if (packed && length % (want === 1 ? 8 : 4) !== 0)
        throw new OnnxDecodeError(`${name} at byte ${at}: ${length} bytes of packed ${field!.type}`);
      else if (field?.resolvedType instanceof protobuf.Type) checkWire(bytes, pos, stop, field.resolvedType, depth + 1);
      pos = stop;
    } else throw new OnnxDecodeError(`${name} at byte ${at} has wire type ${wire} (0, 1, 2 or 5 expected)`);
  }
}

/**
 * `bytes` decoded as message type `t` into a plain object (arrays for repeated fields, absent fields
 * absent), after checkWire, and given to `build`; any fault of the bytes, there or in `build` (an int64
 * past 2^53, a tensor whose data does not fill its shape), is an OnnxDecodeError whose message starts
 * "not an ONNX <type>" (or "empty file (0 bytes)"), after `source: ` where a source is given.
 */
export function decodeChecked<T>(
  bytes: Uint8Array,
  t: protobuf.Type,
  build: (m: Record<string, unknown>) => T,
  source?: string,
): T {
  const from = source ? `${source}: ` : '';
  if (bytes.length === 0) throw new OnnxDecodeError(`${from}empty file (0 bytes), not an ONNX ${t.name}`);
  try {
    checkWire(bytes, 0, bytes.length, t);
    return build(t.toObject(t.decode(bytes), { arrays: true, defaults: false }));
  } catch (e) {
    throw new OnnxDecodeError(`${from}not an ONNX ${t.name}: ${(e as Error).message}`);
  }
}
