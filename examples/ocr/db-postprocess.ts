/**
 * DB post-processing (Liao et al., "Real-time Scene Text Detection with Differentiable Binarization"), as PaddleOCR's
 * DBPostProcess does it: threshold the text probability map, take each connected region's minimum-area
 * rectangle, keep it when its mean probability is high enough, grow it back by the shrink the model was trained
 * with ("unclip": offset d = area × ratio / perimeter) and scale it to the original image.
 */
import { InvalidArgumentError, ShapeMismatchError } from '@polyhal/hal';
import { corners, grow, insideConvex, minAreaRect, type Point, type Quad } from './geometry.js';

/**
 * DB post-processing options: PaddleOCR's defaults but for unclipRatio (2, not 1.5: at 1.5 the boxes of Latin
 * lines cut descenders and leave no margin, and PP-OCRv4's recognizer then drops the spaces between words;
 * measured on DejaVu Sans, DejaVu Serif and Liberation Sans lines of 18 to 48 px).
 */
export interface DbOptions {
  /** Probability above which a pixel is text (default 0.3). */
  readonly threshold?: number;
  /** Mean probability inside a box below which it is dropped (default 0.6). */
  readonly boxThreshold?: number;
  /** How far a box grows back: d = area × unclipRatio / perimeter (default 2). */
  readonly unclipRatio?: number;
  /** Boxes whose short side is below this many map pixels are dropped (default 3). */
  readonly minSize?: number;
  /** At most this many regions are looked at (default 1000). */
  readonly maxCandidates?: number;
}

/** A detected text box in image pixels, and its mean text probability. */
export interface TextBox {
  readonly box: Quad;
  readonly score: number;
}

/** Per row of one 8-connected region of `bitmap`: its leftmost and rightmost pixel (the hull needs no more). */
function regions(bitmap: Uint8Array, w: number, h: number, max: number): Point[][] {
  const label = new Int32Array(w * h);
  const out: Point[][] = [];
  const stack: number[] = [];
  for (let start = 0; start < w * h && out.length < max; start++) {
    if (!bitmap[start] || label[start]) continue;
    const id = out.length + 1;
    const rows = new Map<number, [number, number]>();
    label[start] = id;
    stack.push(start);
    while (stack.length) {
      const i = stack.pop() as number;
      const x = i % w;
      const y = (i - x) / w;
      const r = rows.get(y);
      if (r) {
        r[0] = Math.min(r[0], x);
        r[1] = Math.max(r[1], x);
      } else rows.set(y, [x, x]);
      for (let dy = -1; dy <= 1; dy++)
        for (let dx = -1; dx <= 1; dx++) {
          const xx = x + dx;
          const yy = y + dy;
          if (xx < 0 || yy < 0 || xx >= w || yy >= h) continue;
          const j = yy * w + xx;
          if (bitmap[j] && !label[j]) {
            label[j] = id;
            stack.push(j);
          }
        }
    }
    const pts: Point[] = [];
    for (const [y, [x0, x1]] of rows) pts.push([x0, y], [x1, y]);
    out.push(pts);
  }
  return out;
}

/** Mean of `prob` over the pixels inside `box` (PaddleOCR's "fast" box score). */
function boxScore(prob: Float32Array, w: number, h: number, box: Quad): number {
  const xs = box.map((p) => p[0]);
  const ys = box.map((p) => p[1]);
  const clampX = (v: number): number => Math.min(Math.max(v, 0), w - 1);
  const clampY = (v: number): number => Math.min(Math.max(v, 0), h - 1);
  let sum = 0;
  let n = 0;
  for (let y = clampY(Math.floor(Math.min(...ys))); y <= clampY(Math.ceil(Math.max(...ys))); y++)
    for (let x = clampX(Math.floor(Math.min(...xs))); x <= clampX(Math.ceil(Math.max(...xs))); x++)
      if (insideConvex(box, x, y)) {
        sum += prob[y * w + x] as number;
        n++;
      }
  return n ? sum / n : 0;
}

/**
 * Text boxes from a DB probability map `prob` (mapHeight × mapWidth, row-major, values in [0, 1]), in the pixels
 * of an image of imageWidth × imageHeight (the map covers the whole image), in reading order (top to bottom,
 * then left to right within 10 pixels of height). Throws ShapeMismatchError when prob's length is not
 * mapHeight × mapWidth, InvalidArgumentError for an option out of range.
 */
export function dbPostprocess(
  prob: Float32Array,
  mapWidth: number,
  mapHeight: number,
  imageWidth: number,
  imageHeight: number,
  options: DbOptions = {},
): TextBox[] {
  const { threshold = 0.3, boxThreshold = 0.6, unclipRatio = 2, minSize = 3, maxCandidates = 1000 } = options;
  if (prob.length !== mapWidth * mapHeight)
    throw new ShapeMismatchError(`dbPostprocess: a ${mapHeight}×${mapWidth} map needs ${mapWidth * mapHeight} values`);
  for (const [name, v] of Object.entries({ threshold, boxThreshold }))
    if (!(v >= 0 && v <= 1)) throw new InvalidArgumentError(`dbPostprocess: ${name} must lie in [0, 1], got ${v}`);
  if (!(unclipRatio >= 0) || !(minSize >= 0) || !(maxCandidates >= 1))
    throw new InvalidArgumentError('dbPostprocess: unclipRatio and minSize must be ≥ 0, maxCandidates ≥ 1');
  const bitmap = new Uint8Array(prob.length);
  for (let i = 0; i < prob.length; i++) bitmap[i] = (prob[i] as number) > threshold ? 1 : 0;
  const boxes: TextBox[] = [];
  for (const points of regions(bitmap, mapWidth, mapHeight, maxCandidates)) {
    const rect = minAreaRect(points);
    if (Math.min(rect.width, rect.height) < minSize) continue;
    const score = boxScore(prob, mapWidth, mapHeight, corners(rect));
    if (score < boxThreshold) continue;
    const d = (rect.width * rect.height * unclipRatio) / (2 * (rect.width + rect.height));
    const grown = grow(rect, d);
    if (Math.min(grown.width, grown.height) < minSize + 2) continue;
    const scale = (p: Point): Point => [
      Math.min(Math.max(Math.round((p[0] / mapWidth) * imageWidth), 0), imageWidth),
      Math.min(Math.max(Math.round((p[1] / mapHeight) * imageHeight), 0), imageHeight),
    ];
    const [a, b, c, e] = corners(grown);
    boxes.push({ box: [scale(a), scale(b), scale(c), scale(e)], score });
  }
  return readingOrder(boxes);
}

/** PaddleOCR's sorted_boxes: by top-left corner's y then x; neighbours within 10 px of height go left to right. */
export function readingOrder(boxes: readonly TextBox[]): TextBox[] {
  const b = [...boxes].sort((p, q) => p.box[0][1] - q.box[0][1] || p.box[0][0] - q.box[0][0]);
  for (let i = 0; i < b.length - 1; i++)
    for (let j = i; j >= 0; j--) {
      const lo = b[j] as TextBox;
      const hi = b[j + 1] as TextBox;
      if (Math.abs(hi.box[0][1] - lo.box[0][1]) < 10 && hi.box[0][0] < lo.box[0][0]) {
        b[j] = hi;
        b[j + 1] = lo;
      } else break;
    }
  return b;
}
