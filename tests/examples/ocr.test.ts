/**
 * @jest-environment ./tests/examples/native-arrays-environment.cjs
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { type CreateSession, fromPolyhal } from '../../examples/engine.js';
import { insideConvex, type Quad } from '../../examples/ocr/geometry.js';
import { Ocr, type OcrLine, type OcrModels } from '../../examples/ocr/index.js';
import { ppOcrV4 } from '../../examples/ocr/models.js';
import { type Rendered, type TextLine, type TextRenderer, textRenderer } from './render-text.js';
import { onnxRuntimeInChild } from '../support/ort-remote.js';

// The OCR example end to end (examples/ocr): lines of known text drawn by headless Chromium in DejaVu Sans,
// detected, cropped, recognized and CTC-decoded with PP-OCRv4; the text must come back exactly and each box
// must hold its line's ink (the canvas's own text metrics). On PolyHAL the boxes must also be onnxruntime-node's
// within a pixel. The three-line page runs on onnxruntime-node and PolyHAL wasm; PolyHAL cpu and webgpu (on
// lavapipe, in CI) read one line of a 256 × 64 image.
const LINE: readonly TextLine[] = [{ text: 'WebGPU 2024', x: 16, y: 42, size: 30 }];
const PAGE: readonly TextLine[] = [
  { text: 'PolyHAL reads text 2024', x: 32, y: 48, size: 32 },
  { text: 'ONNX Runtime on WebGPU', x: 32, y: 112, size: 32 },
  { text: 'Hello, World!', x: 32, y: 176, size: 32, angle: -4 },
];

let renderer: TextRenderer;
let models: OcrModels;
let page: Rendered;
let line: Rendered;
// onnxruntime-node, the peer, runs in a child process (tests/support/ort-server.mjs)
const ortChild = onnxRuntimeInChild();

/** onnxruntime-node's lines for the page and the line, the peer PolyHAL's boxes are compared with. */
const peer = new Map<Rendered, OcrLine[]>();

beforeAll(async () => {
  renderer = await textRenderer();
  models = await ppOcrV4();
  page = await renderer.render(704, 224, PAGE);
  line = await renderer.render(256, 64, LINE);
  const ocr = await Ocr.create(ortChild.create, models);
  for (const r of [page, line]) peer.set(r, await ocr.read(r.image));
  await ocr.release();
}, 60_000);

afterAll(async () => {
  await renderer?.close();
  ortChild.close();
});

const area = (q: Quad): number => {
  let s = 0;
  for (let i = 0; i < 4; i++) {
    const a = q[i] as Quad[0];
    const b = q[(i + 1) % 4] as Quad[0];
    s += a[0] * b[1] - b[0] * a[1];
  }
  return Math.abs(s) / 2;
};

/**
 * Each line read exactly, in order, its box holding its ink (2 px slack) and at most 2.5 times its area; with
 * `boxesOf`, each box within 1 px of that peer's.
 */
async function readsPage(
  createSession: CreateSession,
  rendered: Rendered,
  lines: readonly TextLine[],
  boxesOf?: OcrLine[],
): Promise<OcrLine[]> {
  const ocr = await Ocr.create(createSession, models);
  try {
    const read = await ocr.read(rendered.image);
    expect(read.map((l) => l.text)).toEqual(lines.map((l) => l.text));
    read.forEach((l, i) => {
      const ink = rendered.ink[i] as Quad;
      const grown = l.box.map(([x, y], k) => [x + (k === 0 || k === 3 ? -2 : 2), y + (k < 2 ? -2 : 2)]) as never;
      for (const [x, y] of ink) expect(insideConvex(grown, x, y)).toBe(true);
      expect(area(l.box) / area(ink)).toBeLessThan(2.5);
      expect(l.score).toBeGreaterThan(0.8);
      if (boxesOf)
        l.box.forEach((p, k) => {
          const q = boxesOf[i]?.box[k] as Quad[0];
          expect(Math.max(Math.abs(p[0] - q[0]), Math.abs(p[1] - q[1]))).toBeLessThanOrEqual(1);
        });
    });
    return read;
  } finally {
    await ocr.release();
  }
}

describe('OCR example (PP-OCRv4 det → DB boxes → crops → rec → CTC)', () => {
  test('onnxruntime-node (cpu) reads three rendered lines back exactly, one of them turned 4°', async () => {
    await readsPage(ortChild.create, page, PAGE);
    await readsPage(ortChild.create, line, LINE);
  });

  test('PolyHAL wasm reads the page as onnxruntime-node does', async () => {
    await readsPage(fromPolyhal('wasm'), page, PAGE, peer.get(page));
  });

  test.each(['cpu', 'webgpu'])('PolyHAL %s reads a line as onnxruntime-node does', async (backend) => {
    await readsPage(fromPolyhal(backend), line, LINE, peer.get(line));
  });

  test('a blank page has no text', async () => {
    const ocr = await Ocr.create(ortChild.create, models);
    const blank = await renderer.render(320, 96, []);
    expect(await ocr.read(blank.image)).toEqual([]);
    await ocr.release();
  });
});
