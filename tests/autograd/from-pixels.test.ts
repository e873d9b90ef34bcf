// fromPixels and decodeImage against pixels built here one by one: RGBA bytes → [H, W, C] with tfjs's channel
// rule (the first numChannels of R, G, B, A), and PNG/JPEG files encoded by the decoder packages' own encoders
// from those pixels (PNG lossless: exact; JPEG at quality 100 on a smooth image: within a few levels).
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { type ComputeBackend, InvalidArgumentError } from '@polyhal/hal';
import jpeg from 'jpeg-js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { REPO_BACKENDS } from '../support/backends.js';

const W = 5;
const H = 3;
/** Pixel (y, x)'s RGBA: every channel a different function of the position, so a swap or transpose shows. */
const rgba = (y: number, x: number): number[] => [(y * 50 + x * 7) % 256, (x * 40 + 3) % 256, 255 - y * 60, 100 + x];
const pixels = (): Uint8ClampedArray => {
  const data = new Uint8ClampedArray(W * H * 4);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) data.set(rgba(y, x), (y * W + x) * 4);
  return data;
};
/** The expected [H, W, C] values, row-major, from rgba() directly. */
const expected = (c: number): number[] => {
  const out: number[] = [];
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) out.push(...rgba(y, x).slice(0, c));
  return out;
};

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`fromPixels and decodeImage on ${name}`, () => {
    let be: ComputeBackend;
    let dir: string;
    beforeAll(async () => {
      be = await factory();
      dir = mkdtempSync(join(tmpdir(), 'polyhal-pixels-'));
    });
    afterAll(() => {
      be.dispose();
      rmSync(dir, { recursive: true, force: true });
    });

    test('ImageData-like {data, width, height}: int32 [H, W, C] for 1, 3 (default) and 4 channels', async () => {
      for (const c of [1, 3, 4] as const) {
        const t =
          c === 3
            ? ag.fromPixels(be, { data: pixels(), width: W, height: H })
            : ag.fromPixels(be, { data: pixels(), width: W, height: H }, c);
        expect(t.dtype).toBe('int32');
        expect(t.shape).toEqual([H, W, c]);
        expect(Array.from(await t.data())).toEqual(expected(c));
        t.dispose();
      }
      const f = ag.fromPixels(be, { data: new Uint8Array(pixels()), width: W, height: H }, 3, { dtype: 'float32' });
      expect(f.dtype).toBe('float32');
      expect(Array.from(await f.data())).toEqual(expected(3));
      f.dispose();
    });

    test('a PNG (RGBA and grey) from bytes and from a file, exact', async () => {
      const png = new PNG({ width: W, height: H });
      png.data.set(pixels());
      const bytes = new Uint8Array(PNG.sync.write(png));
      expect(ag.imageFormat(bytes)).toBe('png');
      const path = join(dir, 'image.png');
      writeFileSync(path, bytes);
      for (const src of [bytes, path]) {
        const t = await ag.decodeImage(be, src, 4);
        expect(t.shape).toEqual([H, W, 4]);
        expect(Array.from(await t.data())).toEqual(expected(4));
        t.dispose();
      }
      // A grey PNG (colour type 0): R = G = B = the grey level.
      const grey = new PNG({ width: W, height: H, colorType: 0, inputColorType: 6 } as never);
      grey.data.set(pixels().map((_, i) => (i % 4 === 3 ? 255 : [10, 20, 30, 40, 50][(i >> 2) % W]!)));
      const gt = await ag.decodeImage(
        be,
        new Uint8Array(PNG.sync.write(grey, { colorType: 0, inputColorType: 6 } as never)),
        1,
      );
      expect(gt.shape).toEqual([H, W, 1]);
      expect(Array.from(await gt.data())).toEqual(Array.from({ length: H * W }, (_, i) => [10, 20, 30, 40, 50][i % W]));
      gt.dispose();
    });

    test('a JPEG at quality 100 of a smooth image: within 4 levels of the pixels it encoded', async () => {
      const [w, h] = [16, 16];
      const data = new Uint8Array(w * h * 4);
      const value = (y: number, x: number, c: number) => [60 + 8 * x, 40 + 6 * y, 128 + 2 * (x - y), 255][c]!;
      for (let y = 0; y < h; y++)
        for (let x = 0; x < w; x++) for (let c = 0; c < 4; c++) data[(y * w + x) * 4 + c] = value(y, x, c);
      const bytes = new Uint8Array(jpeg.encode({ data, width: w, height: h }, 100).data);
      expect(ag.imageFormat(bytes)).toBe('jpeg');
      const t = await ag.decodeImage(be, bytes, 3, { dtype: 'float32' });
      expect(t.shape).toEqual([h, w, 3]);
      const got = await t.data();
      let worst = 0;
      for (let y = 0; y < h; y++)
        for (let x = 0; x < w; x++)
          for (let c = 0; c < 3; c++) worst = Math.max(worst, Math.abs(got[(y * w + x) * 3 + c]! - value(y, x, c)));
      expect(worst).toBeLessThanOrEqual(4);
      t.dispose();
    });
  });
}

describe('fromPixels and decodeImage: typed errors', () => {
  let be: ComputeBackend;
  beforeAll(async () => {
    be = await REPO_BACKENDS['cpu']!();
  });
  afterAll(() => be.dispose());

  test('bad channels, lengths, sizes and dtypes; images without a canvas; bytes that are no image', async () => {
    const px = { data: pixels(), width: W, height: H };
    expect(() => ag.fromPixels(be, px, 2 as never)).toThrow(/numChannels must be 1, 3 or 4, got 2/);
    expect(() => ag.fromPixels(be, { ...px, width: 4 })).toThrow(/data has 60 bytes, 4 × 3 RGBA pixels need 48/);
    expect(() => ag.fromPixels(be, { ...px, width: -1 })).toThrow(InvalidArgumentError);
    expect(() => ag.fromPixels(be, px, 3, { dtype: 'uint8' as never })).toThrow(/dtype must be 'int32' or 'float32'/);
    expect(() => ag.fromPixels(be, { width: 3, height: 3 } as never)).toThrow(/needs a canvas to be read/);
    expect(() => ag.fromPixels(be, null as never)).toThrow(InvalidArgumentError);
    await expect(ag.decodeImage(be, new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]))).rejects.toThrow(/neither PNG nor JPEG/);
    const png = new Uint8Array(PNG.sync.write(Object.assign(new PNG({ width: 2, height: 2 }))));
    await expect(ag.decodeImage(be, png.subarray(0, 30))).rejects.toThrow(/the PNG does not decode/);
    await expect(ag.decodeImage(be, '/nonexistent/x.png')).rejects.toThrow(/cannot read/);
    await expect(ag.decodeImage(be, 3 as never)).rejects.toThrow(InvalidArgumentError);
  });
});
