/**
 * Images as the OCR example takes them (RGBA bytes, as canvas getImageData gives them) and the two pixel
 * operations it needs: bilinear sampling with replicated borders, and resizing.
 */
import { InvalidArgumentError, ShapeMismatchError } from '@polyhal/hal';

/** An RGBA image: `data` holds width × height × 4 bytes, row-major (canvas ImageData's layout). */
export interface RgbaImage {
  readonly width: number;
  readonly height: number;
  readonly data: Uint8Array | Uint8ClampedArray;
}

/** Checks an image's fields; throws InvalidArgumentError or ShapeMismatchError naming what is wrong. */
export function checkImage(image: RgbaImage, what = 'image'): void {
  const { width, height, data } = image ?? {};
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1)
    throw new InvalidArgumentError(`${what}: width and height must be positive integers, got ${width}×${height}`);
  if (!(data instanceof Uint8Array || data instanceof Uint8ClampedArray))
    throw new InvalidArgumentError(`${what}: data must be a Uint8Array or Uint8ClampedArray of RGBA bytes`);
  if (data.length !== width * height * 4)
    throw new ShapeMismatchError(
      `${what}: ${width}×${height} RGBA needs ${width * height * 4} bytes, got ${data.length}`,
    );
}

/**
 * Channel c (0 R, 1 G, 2 B) of `image` at (x, y) in pixel-index coordinates (pixel i's centre is at i),
 * bilinearly interpolated; outside the image the border pixels repeat.
 */
export function sample(image: RgbaImage, x: number, y: number, c: number): number {
  const { width, height, data } = image;
  const cx = Math.min(Math.max(x, 0), width - 1);
  const cy = Math.min(Math.max(y, 0), height - 1);
  const x0 = Math.floor(cx);
  const y0 = Math.floor(cy);
  const x1 = Math.min(x0 + 1, width - 1);
  const y1 = Math.min(y0 + 1, height - 1);
  const fx = cx - x0;
  const fy = cy - y0;
  const at = (xx: number, yy: number): number => data[(yy * width + xx) * 4 + c] as number;
  const top = at(x0, y0) * (1 - fx) + at(x1, y0) * fx;
  const bottom = at(x0, y1) * (1 - fx) + at(x1, y1) * fx;
  return top * (1 - fy) + bottom * fy;
}

/** `image` resized to width × height, bilinear with half-pixel centres (OpenCV's INTER_LINEAR). */
export function resize(image: RgbaImage, width: number, height: number): RgbaImage {
  const out = new Uint8ClampedArray(width * height * 4);
  const sx = image.width / width;
  const sy = image.height / height;
  for (let y = 0; y < height; y++) {
    const yy = (y + 0.5) * sy - 0.5;
    for (let x = 0; x < width; x++) {
      const xx = (x + 0.5) * sx - 0.5;
      const o = (y * width + x) * 4;
      for (let c = 0; c < 3; c++) out[o + c] = sample(image, xx, yy, c);
      out[o + 3] = 255;
    }
  }
  return { width, height, data: out };
}

/**
 * A planar float32 tensor's data (1 × 3 × height × width) from `image`, channels in PaddleOCR's order (B, G, R:
 * its models were trained on OpenCV's BGR images), each (v / 255 − mean[c]) / std[c]; columns from
 * `image.width` to `width` are zero (right padding).
 */
export function toPlanarBgr(image: RgbaImage, mean: readonly number[], std: readonly number[], width = image.width) {
  const { height } = image;
  const out = new Float32Array(3 * height * width);
  for (let c = 0; c < 3; c++) {
    const src = 2 - c;
    const m = mean[c] as number;
    const s = std[c] as number;
    const plane = c * height * width;
    for (let y = 0; y < height; y++)
      for (let x = 0; x < image.width; x++)
        out[plane + y * width + x] = ((image.data[(y * image.width + x) * 4 + src] as number) / 255 - m) / s;
  }
  return out;
}
