/**
 * OCR end to end with PaddleOCR's PP-OCRv4 models on any ONNX runtime behind `CreateSession`: detection → boxes
 * (DB post-processing) → upright crops → recognition → CTC decoding with the model's dictionary.
 */
import { InvalidArgumentError } from '@polyhal/hal';
import type { CreateSession, Session } from '../engine.js';
import { ctcClasses } from './ctc-decode.js';
import type { TextBox } from './db-postprocess.js';
import { type DetectOptions, detect } from './detect.js';
import type { Quad } from './geometry.js';
import type { RgbaImage } from './image.js';
import { cropBox, recognize } from './recognize.js';

/** The three files of a PaddleOCR model set: detection and recognition ONNX bytes, the dictionary's text. */
export interface OcrModels {
  readonly detection: Uint8Array;
  readonly recognition: Uint8Array;
  readonly dictionary: string;
}

/** Options: detection's, and the recognition score under which a line is dropped (default 0.5). */
export interface OcrOptions extends DetectOptions {
  readonly minScore?: number;
}

/** One line of text read: its text, recognition score, box (tl, tr, br, bl in image pixels), box score. */
export interface OcrLine {
  readonly text: string;
  readonly score: number;
  readonly box: Quad;
  readonly boxScore: number;
}

export class Ocr {
  private constructor(
    private readonly det: Session,
    private readonly rec: Session,
    private readonly classes: readonly string[],
    private readonly options: OcrOptions,
  ) {}

  /** Loads both models with `createSession`; throws InvalidArgumentError for an empty dictionary. */
  static async create(createSession: CreateSession, models: OcrModels, options: OcrOptions = {}): Promise<Ocr> {
    const classes = ctcClasses(models.dictionary);
    const minScore = options.minScore ?? 0.5;
    if (!(minScore >= 0 && minScore <= 1))
      throw new InvalidArgumentError(`Ocr: minScore must lie in [0, 1], got ${options.minScore}`);
    const det = await createSession(models.detection);
    try {
      return new Ocr(det, await createSession(models.recognition), classes, { ...options, minScore });
    } catch (e) {
      await det.release();
      throw e;
    }
  }

  /** The boxes of text in `image`, in reading order (no recognition). */
  detect(image: RgbaImage): Promise<TextBox[]> {
    return detect(this.det, image, this.options);
  }

  /** The lines of text in `image` (RGBA), in reading order, those scoring under minScore left out. */
  async read(image: RgbaImage): Promise<OcrLine[]> {
    const lines: OcrLine[] = [];
    for (const { box, score: boxScore } of await this.detect(image)) {
      const { text, score } = await recognize(this.rec, cropBox(image, box), this.classes);
      if (score >= (this.options.minScore ?? 0.5)) lines.push({ text, score, box, boxScore });
    }
    return lines;
  }

  async release(): Promise<void> {
    await this.det.release();
    await this.rec.release();
  }
}
