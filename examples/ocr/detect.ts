/**
 * Text detection with a PaddleOCR DB model (PP-OCRv4 det): the image resized so its longer side is at most
 * limitSideLen and both sides are multiples of 32, normalized with ImageNet's mean and std (B, G, R planes),
 * one run giving a 1 × 1 × H × W text probability map, then DB post-processing into boxes.
 */
import { ShapeMismatchError } from '@polyhal/hal';
import { float32, floatOutput, type Session } from '../engine.js';
import { type DbOptions, dbPostprocess, type TextBox } from './db-postprocess.js';
import { checkImage, type RgbaImage, resize, toPlanarBgr } from './image.js';

/** Detection options: DB post-processing's, and the longest side the model is run at (default 960). */
export interface DetectOptions extends DbOptions {
  readonly limitSideLen?: number;
}

/** The size the detector runs `width × height` at (PaddleOCR's DetResizeForTest, limit type 'max'). */
export function detectionSize(width: number, height: number, limitSideLen = 960): { width: number; height: number } {
  const ratio = Math.max(width, height) > limitSideLen ? limitSideLen / Math.max(width, height) : 1;
  const to32 = (v: number): number => Math.max(Math.round((v * ratio) / 32) * 32, 32);
  return { width: to32(width), height: to32(height) };
}

/**
 * The text boxes of `image` (RGBA) found by the detection model `session`, in image pixels and reading order.
 * Throws InvalidArgumentError/ShapeMismatchError for a malformed image or a model whose output is not
 * 1 × 1 × H × W.
 */
export async function detect(session: Session, image: RgbaImage, options: DetectOptions = {}): Promise<TextBox[]> {
  checkImage(image);
  const size = detectionSize(image.width, image.height, options.limitSideLen);
  const resized = resize(image, size.width, size.height);
  const x = toPlanarBgr(resized, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]);
  const out = await session.run({ [session.inputNames[0] as string]: float32([1, 3, size.height, size.width], x) });
  const prob = floatOutput(out, session.outputNames[0] as string);
  if (prob.data.length !== size.width * size.height)
    throw new ShapeMismatchError(`detect: expected a 1×1×${size.height}×${size.width} map, got ${prob.dims}`);
  return dbPostprocess(prob.data, size.width, size.height, image.width, image.height, options);
}
