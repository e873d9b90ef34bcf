/**
 * Image input (tfjs's `tf.browser.fromPixels` and tfjs-node's `tf.node.decodeImage`): pixels → an int32
 * (or float32) tensor [H, W, C] of values 0–255, rows top to bottom, channels R, G, B, A in that order and the
 * first `numChannels` of them kept (1: R, 3: RGB, 4: RGBA), as tfjs does.
 * `fromPixels` takes what holds pixels already (ImageData or {data, width, height}, and in a browser a canvas,
 * an OffscreenCanvas, an image, an ImageBitmap or a video frame, drawn through a canvas); `decodeImage` decodes
 * PNG or JPEG bytes or a file with the `pngjs` and `jpeg-js` packages, imported only then (install them).
 */
import { type ComputeBackend, describeValue, InvalidArgumentError, PolyHalError } from '@polyhal/hal';
import { nodeBuiltin } from '@polyhal/hal/internal';
import { Tensor } from './tensor.js';
import type { ImageSourceLike } from './dom-types.js';

/** RGBA pixels, 4 bytes each, row by row: the shape of ImageData (which is one). */
export interface PixelData {
  /** width·height·4 bytes (RGBA). */
  data: Uint8ClampedArray | Uint8Array;
  /** Pixels per row. */
  width: number;
  /** Rows. */
  height: number;
}

/** What `fromPixels` takes: ImageData-like data, or a browser image source drawn through a canvas. */
export type PixelSource = PixelData | ImageSourceLike;

/** Options of fromPixels and decodeImage. */
export interface FromPixelsOptions {
  /** 'int32' (default, as tfjs) or 'float32' (the same 0–255 values). */
  dtype?: 'int32' | 'float32';
}

/** A decoder package `decodeImage` needs is not installed; the message names it (`npm install pngjs`). */
export class MissingDecoderError extends PolyHalError {}

function checkChannels(op: string, numChannels: unknown): asserts numChannels is 1 | 3 | 4 {
  if (numChannels !== 1 && numChannels !== 3 && numChannels !== 4)
    throw new InvalidArgumentError(`${op}: numChannels must be 1, 3 or 4, got ${describeValue(numChannels)}`);
}

/** [H, W, numChannels] from RGBA bytes. */
function fromRgba(
  op: string,
  backend: ComputeBackend,
  px: PixelData,
  numChannels: 1 | 3 | 4,
  options: FromPixelsOptions,
): Tensor {
  const { data, width, height } = px;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 0 || height < 0)
    throw new InvalidArgumentError(`${op}: width and height must be integers ≥ 0, got ${width} × ${height}`);
  if (data.length !== width * height * 4)
    throw new InvalidArgumentError(
      `${op}: data has ${data.length} bytes, ${width} × ${height} RGBA pixels need ${width * height * 4}`,
    );
  const dtype = options.dtype ?? 'int32';
  if (dtype !== 'int32' && dtype !== 'float32')
    throw new InvalidArgumentError(`${op}: dtype must be 'int32' or 'float32', got ${describeValue(dtype)}`);
  const n = width * height;
  const out = dtype === 'int32' ? new Int32Array(n * numChannels) : new Float32Array(n * numChannels);
  if (numChannels === 4) out.set(data);
  else for (let i = 0; i < n; i++) for (let c = 0; c < numChannels; c++) out[i * numChannels + c] = data[i * 4 + c]!;
  return Tensor.fromArray(backend, out, [height, width, numChannels], { dtype });
}

const isPixelData = (v: unknown): v is PixelData =>
  v !== null &&
  typeof v === 'object' &&
  ((v as PixelData).data instanceof Uint8ClampedArray || (v as PixelData).data instanceof Uint8Array) &&
  typeof (v as PixelData).width === 'number' &&
  typeof (v as PixelData).height === 'number';

/** The RGBA pixels of a browser image source, drawn on a canvas of its size. */
function draw(op: string, src: object): PixelData {
  const s = src as {
    getContext?: (id: '2d') => CanvasRenderingContext2D | OffscreenCanvasRenderingContext2D | null;
    width?: number;
    height?: number;
    naturalWidth?: number;
    naturalHeight?: number;
    videoWidth?: number;
    videoHeight?: number;
    displayWidth?: number;
    displayHeight?: number;
  };
  const width = s.videoWidth || s.naturalWidth || s.displayWidth || s.width || 0;
  const height = s.videoHeight || s.naturalHeight || s.displayHeight || s.height || 0;
  if (typeof s.getContext === 'function') {
    const ctx = s.getContext('2d');
    if (ctx) return ctx.getImageData(0, 0, width, height);
  }
  const g = globalThis as { OffscreenCanvas?: typeof OffscreenCanvas; document?: Document };
  const canvas: HTMLCanvasElement | OffscreenCanvas | undefined = g.OffscreenCanvas
    ? new g.OffscreenCanvas(width, height)
    : g.document?.createElement('canvas');
  if (!canvas)
    throw new InvalidArgumentError(
      `${op}: ${describeValue(src)} needs a canvas to be read, and this runtime has none; pass ImageData or ` +
        '{data, width, height}, or decode PNG/JPEG bytes with decodeImage',
    );
  canvas.width = width;
  canvas.height = height;
  const ctx = canvas.getContext('2d', { willReadFrequently: true }) as CanvasRenderingContext2D | null;
  if (!ctx) throw new InvalidArgumentError(`${op}: no 2d context to read ${describeValue(src)}`);
  ctx.drawImage(src as CanvasImageSource, 0, 0, width, height);
  return ctx.getImageData(0, 0, width, height);
}

/**
 * Pixels → int32 [H, W, numChannels] (values 0–255; float32 with `options.dtype`) on `backend`, as tfjs's
 * `tf.browser.fromPixels(pixels, numChannels)`: `pixels` is ImageData or any {data: RGBA bytes, width,
 * height}, or in a browser an HTMLCanvasElement, OffscreenCanvas, HTMLImageElement, ImageBitmap,
 * HTMLVideoElement or VideoFrame (read through a 2d canvas: the browser's decoding and colour conversion).
 * numChannels 1 keeps R, 3 RGB (default), 4 RGBA. InvalidArgumentError for another numChannels, a data length
 * other than width·height·4, or an image element in a runtime without a canvas.
 */
export function fromPixels(
  backend: ComputeBackend,
  pixels: PixelSource,
  numChannels: 1 | 3 | 4 = 3,
  options: FromPixelsOptions = {},
): Tensor {
  checkChannels('fromPixels', numChannels);
  if (isPixelData(pixels)) return fromRgba('fromPixels', backend, pixels, numChannels, options);
  if (pixels === null || typeof pixels !== 'object')
    throw new InvalidArgumentError(
      `fromPixels: pixels must be ImageData, a canvas or an image, got ${describeValue(pixels)}`,
    );
  return fromRgba('fromPixels', backend, draw('fromPixels', pixels), numChannels, options);
}

/** The format of image bytes by their signature, or null. */
export function imageFormat(bytes: Uint8Array): 'png' | 'jpeg' | null {
  if (bytes.length >= 8 && [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((b, i) => bytes[i] === b))
    return 'png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  return null;
}

/** Imports a decoder package by name (a variable specifier: bundlers leave it out of a browser bundle). */
async function importDecoder(name: string): Promise<Record<string, unknown>> {
  try {
    const m = (await import(/* webpackIgnore: true */ /* @vite-ignore */ name)) as Record<string, unknown> & {
      default?: Record<string, unknown>;
    };
    return { ...(m.default ?? {}), ...m };
  } catch (e) {
    throw new MissingDecoderError(
      `decodeImage: the ${name} package is needed to decode this image and did not load ` +
        `(npm install ${name}): ${(e as Error).message}`,
    );
  }
}

/** RGBA pixels of PNG or JPEG bytes through pngjs or jpeg-js. */
export async function decodePixels(bytes: Uint8Array): Promise<PixelData> {
  const format = imageFormat(bytes);
  if (format === null)
    throw new InvalidArgumentError(`decodeImage: the bytes are neither PNG nor JPEG (${bytes.length} bytes)`);
  try {
    if (format === 'png') {
      const { PNG } = (await importDecoder('pngjs')) as {
        PNG: { sync: { read(b: Uint8Array): { data: Uint8Array; width: number; height: number } } };
      };
      // pngjs reads a Node Buffer (a view of the same bytes, no copy).
      const { Buffer } = globalThis as { Buffer?: { from(b: ArrayBufferLike, at: number, n: number): Uint8Array } };
      const { data, width, height } = PNG.sync.read(
        Buffer ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) : bytes,
      );
      return { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width, height };
    }
    const { decode } = (await importDecoder('jpeg-js')) as {
      decode(b: Uint8Array, o: { useTArray: true; formatAsRGBA: true }): PixelData;
    };
    return decode(bytes, { useTArray: true, formatAsRGBA: true });
  } catch (e) {
    if (e instanceof PolyHalError) throw e;
    throw new InvalidArgumentError(`decodeImage: the ${format.toUpperCase()} does not decode: ${(e as Error).message}`);
  }
}

/**
 * Decodes a PNG or JPEG (bytes, or a file path in Node) → int32 [H, W, numChannels] on `backend` (tfjs-node's
 * `tf.node.decodeImage`; float32 with `options.dtype`); numChannels as fromPixels (a grey PNG has R = G = B).
 * The format comes from the bytes' signature. The `pngjs` or `jpeg-js` package is imported only here:
 * MissingDecoderError naming it when it is not installed. InvalidArgumentError for bytes that are neither
 * format or do not decode, and for a file that cannot be read.
 */
export async function decodeImage(
  backend: ComputeBackend,
  image: Uint8Array | ArrayBuffer | string,
  numChannels: 1 | 3 | 4 = 3,
  options: FromPixelsOptions = {},
): Promise<Tensor> {
  checkChannels('decodeImage', numChannels);
  let bytes: Uint8Array;
  if (image instanceof Uint8Array) bytes = image;
  else if (image instanceof ArrayBuffer) bytes = new Uint8Array(image);
  else if (typeof image === 'string') {
    const fs = await nodeBuiltin<typeof import('node:fs')>('fs');
    if (!fs)
      throw new InvalidArgumentError(`decodeImage: ${image} is a file path, and this runtime has no file system`);
    try {
      bytes = new Uint8Array(await fs.promises.readFile(image));
    } catch (e) {
      throw new InvalidArgumentError(`decodeImage: cannot read ${image} (${(e as Error).message})`);
    }
  } else throw new InvalidArgumentError(`decodeImage: image must be bytes or a file path, got ${describeValue(image)}`);
  return fromRgba('decodeImage', backend, await decodePixels(bytes), numChannels, options);
}
