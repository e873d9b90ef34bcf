/**
 * Text recognition with a PaddleOCR CRNN-style model (PP-OCRv4 rec): each box cropped upright out of the image,
 * resized to height 48 (width by its aspect ratio, at least 320 with zero padding), normalized to [−1, 1]
 * (B, G, R planes), one run giving 1 × T × C class probabilities, then greedy CTC decoding.
 */
import { float32, floatOutput, type Session } from '../engine.js';
import { ctcGreedyDecode, type Decoded } from './ctc-decode.js';
import { distance, type Quad } from './geometry.js';
import { checkImage, type RgbaImage, resize, sample, toPlanarBgr } from './image.js';

/** The model's input height and its narrowest input width (PaddleOCR's rec_image_shape 3, 48, 320). */
export const REC_HEIGHT = 48;
export const REC_MIN_WIDTH = 320;

/**
 * The pixels of `box` (tl, tr, br, bl in image pixels) as an upright image (PaddleOCR's get_rotate_crop_image):
 * as wide as its longer horizontal side, as tall as its longer vertical side, sampled bilinearly with the
 * border repeated; a crop at least 1.5 times taller than wide is turned a quarter counter-clockwise.
 */
export function cropBox(image: RgbaImage, box: Quad): RgbaImage {
  const [tl, tr, br, bl] = box;
  const w = Math.max(1, Math.trunc(Math.max(distance(tl, tr), distance(bl, br))));
  const h = Math.max(1, Math.trunc(Math.max(distance(tl, bl), distance(tr, br))));
  const data = new Uint8ClampedArray(w * h * 4);
  for (let v = 0; v < h; v++)
    for (let u = 0; u < w; u++) {
      const x = tl[0] + (u / w) * (tr[0] - tl[0]) + (v / h) * (bl[0] - tl[0]);
      const y = tl[1] + (u / w) * (tr[1] - tl[1]) + (v / h) * (bl[1] - tl[1]);
      const o = (v * w + u) * 4;
      for (let c = 0; c < 3; c++) data[o + c] = sample(image, x, y, c);
      data[o + 3] = 255;
    }
  if (h / w < 1.5) return { width: w, height: h, data };
  const turned = new Uint8ClampedArray(w * h * 4);
  for (let i = 0; i < w; i++)
    for (let j = 0; j < h; j++)
      turned.set(data.subarray((j * w + w - 1 - i) * 4, (j * w + w - i) * 4), (i * h + j) * 4);
  return { width: h, height: w, data: turned };
}

/** The recognizer's input for `crop`: 1 × 3 × 48 × W data and W (PaddleOCR's resize_norm_img). */
export function recognitionInput(crop: RgbaImage): { data: Float32Array; width: number } {
  checkImage(crop, 'crop');
  const ratio = crop.width / crop.height;
  const width = Math.trunc(REC_HEIGHT * Math.max(REC_MIN_WIDTH / REC_HEIGHT, ratio));
  const resizedWidth = Math.min(width, Math.ceil(REC_HEIGHT * ratio));
  const resized = resize(crop, resizedWidth, REC_HEIGHT);
  return { data: toPlanarBgr(resized, [0.5, 0.5, 0.5], [0.5, 0.5, 0.5], width), width };
}

/** The text in `crop` (an upright line of text) read by the recognition model `session` with `classes`. */
export async function recognize(session: Session, crop: RgbaImage, classes: readonly string[]): Promise<Decoded> {
  const { data, width } = recognitionInput(crop);
  const out = await session.run({ [session.inputNames[0] as string]: float32([1, 3, REC_HEIGHT, width], data) });
  const probs = floatOutput(out, session.outputNames[0] as string);
  return ctcGreedyDecode(probs.data, probs.dims[1] ?? 0, classes);
}
