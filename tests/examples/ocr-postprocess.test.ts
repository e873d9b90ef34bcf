import { describe, expect, test } from '@jest/globals';
import { InvalidArgumentError, ShapeMismatchError } from '@polyhal/hal';
import {
  checkImage,
  cropBox,
  ctcClasses,
  ctcGreedyDecode,
  dbPostprocess,
  detectionSize,
  minAreaRect,
  type Point,
  type Quad,
  readingOrder,
  recognitionInput,
} from '../../examples/ocr/index.js';

// The OCR example's pieces on inputs whose answers are known by construction (hand-built probability tables,
// probability maps of known rectangles, images of known pixels).

describe('CTC greedy decoding', () => {
  const classes = ctcClasses('a\nb\nc\n');
  /** One step per class index, probability 0.9 on it and the rest spread evenly. */
  const table = (path: number[]): Float32Array => {
    const c = classes.length;
    const p = new Float32Array(path.length * c).fill(0.1 / (c - 1));
    path.forEach((k, t) => {
      p[t * c + k] = 0.9;
    });
    return p;
  };

  test('the class table is blank, the dictionary lines, a space', () => {
    expect(classes).toEqual(['', 'a', 'b', 'c', ' ']);
  });

  test('repeats merge, blanks split repeats and are dropped', () => {
    // a a _ a b b ␣ c _ c  →  "aab c" + "c"
    const d = ctcGreedyDecode(table([1, 1, 0, 1, 2, 2, 4, 3, 0, 3]), 10, classes);
    expect(d.text).toBe('aab cc');
    expect(d.score).toBeCloseTo(0.9, 6);
  });

  test('all blanks decode to an empty line with a NaN score', () => {
    const d = ctcGreedyDecode(table([0, 0, 0]), 3, classes);
    expect(d.text).toBe('');
    expect(d.score).toBeNaN();
  });

  test('a table that does not fit the dictionary is a ShapeMismatchError; an empty dictionary is invalid', () => {
    expect(() => ctcGreedyDecode(new Float32Array(12), 3, classes)).toThrow(ShapeMismatchError);
    expect(() => ctcClasses('')).toThrow(InvalidArgumentError);
  });
});

describe('geometry', () => {
  test('minAreaRect of a 40 × 10 rectangle turned 30° finds its sides and centre', () => {
    const a = Math.PI / 6;
    const pts: Point[] = [];
    for (let u = -20; u <= 20; u += 2.5)
      for (let v = -5; v <= 5; v += 2.5)
        pts.push([7 + u * Math.cos(a) - v * Math.sin(a), 3 + u * Math.sin(a) + v * Math.cos(a)]);
    const r = minAreaRect(pts);
    expect([Math.max(r.width, r.height), Math.min(r.width, r.height)].map((x) => +x.toFixed(9))).toEqual([40, 10]);
    expect(r.center[0]).toBeCloseTo(7, 9);
    expect(r.center[1]).toBeCloseTo(3, 9);
  });
});

describe('DB post-processing', () => {
  const W = 128;
  const H = 64;
  /** A map with value p on rows y0…y1 and columns x0…x1 (inclusive) of each rectangle. */
  const map = (rects: [number, number, number, number, number][]): Float32Array => {
    const m = new Float32Array(W * H);
    for (const [x0, y0, x1, y1, p] of rects)
      for (let y = y0; y <= y1; y++) for (let x = x0; x <= x1; x++) m[y * W + x] = p;
    return m;
  };
  /**
   * The box DB gives for the pixels x0…x1 × y0…y1: their rectangle (corner pixels' coordinates: sides x1 − x0 and
   * y1 − y0) grown by d = area · ratio / perimeter on every side, scaled by s and rounded.
   */
  const expected = (x0: number, y0: number, x1: number, y1: number, ratio: number, s = 1): Quad => {
    const w = x1 - x0;
    const h = y1 - y0;
    const d = (w * h * ratio) / (2 * (w + h));
    const p = (x: number, y: number): Point => [Math.round(x * s), Math.round(y * s)];
    return [p(x0 - d, y0 - d), p(x1 + d, y0 - d), p(x1 + d, y1 + d), p(x0 - d, y1 + d)];
  };

  test('two text regions become their grown boxes in reading order; a speck and a faint region are dropped', () => {
    const m = map([
      [20, 40, 99, 49, 0.9], // second line
      [10, 10, 59, 19, 0.95], // first line
      [110, 5, 111, 6, 0.99], // a 2 × 2 speck: shorter side 1 < minSize 3
      [70, 25, 120, 30, 0.45], // above threshold 0.3, but its mean 0.45 < boxThreshold 0.6
    ]);
    const boxes = dbPostprocess(m, W, H, W, H, { unclipRatio: 1.5 });
    expect(boxes.map((b) => b.box)).toEqual([expected(10, 10, 59, 19, 1.5), expected(20, 40, 99, 49, 1.5)]);
    expect(boxes[0]?.score).toBeCloseTo(0.95, 6);
  });

  test('boxes are scaled from the map to the image', () => {
    const boxes = dbPostprocess(map([[10, 10, 59, 19, 0.9]]), W, H, 2 * W, 2 * H);
    expect(boxes.map((b) => b.box)).toEqual([expected(10, 10, 59, 19, 2, 2)]);
  });

  test('bad input is a typed error', () => {
    expect(() => dbPostprocess(new Float32Array(10), W, H, W, H)).toThrow(ShapeMismatchError);
    expect(() => dbPostprocess(new Float32Array(W * H), W, H, W, H, { threshold: 2 })).toThrow(InvalidArgumentError);
  });

  test('readingOrder: boxes within 10 px of height go left to right', () => {
    const at = (x: number, y: number) => ({
      box: [
        [x, y],
        [x + 5, y],
        [x + 5, y + 5],
        [x, y + 5],
      ] as Quad,
      score: 1,
    });
    // by top y: (50, 12) (10, 15) (90, 30) (0, 40); the first two are 3 px apart, so x orders them
    const order = readingOrder([at(0, 40), at(90, 30), at(50, 12), at(10, 15)]).map((b) => b.box[0]);
    expect(order).toEqual([
      [10, 15],
      [50, 12],
      [90, 30],
      [0, 40],
    ]);
  });
});

describe('images, crops and model inputs', () => {
  /** A 20 × 10 image whose pixel (x, y) is R = x, G = y, B = x + y. */
  const ramp = () => {
    const data = new Uint8Array(20 * 10 * 4);
    for (let y = 0; y < 10; y++) for (let x = 0; x < 20; x++) data.set([x, y, x + y, 255], (y * 20 + x) * 4);
    return { width: 20, height: 10, data };
  };

  test('an axis-aligned crop is the sub-image', () => {
    const c = cropBox(ramp(), [
      [3, 2],
      [11, 2],
      [11, 6],
      [3, 6],
    ]);
    expect([c.width, c.height]).toEqual([8, 4]);
    for (let y = 0; y < 4; y++)
      for (let x = 0; x < 8; x++)
        expect([...c.data.subarray((y * 8 + x) * 4, (y * 8 + x) * 4 + 3)]).toEqual([x + 3, y + 2, x + y + 5]);
  });

  test('a crop 1.5 times taller than wide is turned a quarter counter-clockwise', () => {
    const c = cropBox(ramp(), [
      [2, 1],
      [4, 1],
      [4, 7],
      [2, 7],
    ]);
    expect([c.width, c.height]).toEqual([6, 2]);
    // np.rot90: out[i][j] = in[j][w − 1 − i], with in[v][u] = ramp(2 + u, 1 + v)
    for (let i = 0; i < 2; i++) for (let j = 0; j < 6; j++) expect(c.data[(i * 6 + j) * 4]).toBe(2 + (2 - 1 - i));
  });

  test('detectionSize keeps the longer side within the limit and both sides multiples of 32', () => {
    expect(detectionSize(1000, 500)).toEqual({ width: 960, height: 480 });
    expect(detectionSize(100, 50)).toEqual({ width: 96, height: 64 });
    expect(detectionSize(10, 10)).toEqual({ width: 32, height: 32 });
  });

  test('a recognition input is 48 high, at least 320 wide, zero-padded, in [−1, 1] with B first', () => {
    const white = { width: 96, height: 24, data: new Uint8Array(96 * 24 * 4).fill(255) };
    const { data, width } = recognitionInput(white);
    expect(width).toBe(320);
    expect(data.length).toBe(3 * 48 * 320);
    expect(data[0]).toBe(1);
    expect(data[191]).toBe(1);
    expect(data[192]).toBe(0);
    const wide = recognitionInput({ width: 400, height: 20, data: new Uint8Array(400 * 20 * 4) });
    expect(wide.width).toBe(960);
  });

  test('malformed images are typed errors', () => {
    expect(() => checkImage({ width: 2, height: 2, data: new Uint8Array(15) })).toThrow(ShapeMismatchError);
    expect(() => checkImage({ width: 0, height: 2, data: new Uint8Array(0) })).toThrow(InvalidArgumentError);
    expect(() => checkImage({ width: 1, height: 1, data: [1, 2, 3, 4] as never })).toThrow(InvalidArgumentError);
  });
});
