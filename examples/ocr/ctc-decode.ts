/**
 * Greedy CTC decoding (Graves et al. 2006) of a text-recognition model's per-step class probabilities, with
 * PaddleOCR's character layout: class 0 is the CTC blank, classes 1…n the dictionary's lines in order, and
 * class n + 1 a space (PaddleOCR's use_space_char).
 */
import { InvalidArgumentError, ShapeMismatchError } from '@polyhal/hal';

/** A decoded line: its text and mean probability of the characters kept (NaN for an empty line). */
export interface Decoded {
  readonly text: string;
  readonly score: number;
}

/**
 * The class table of a PaddleOCR dictionary file (one character per line): blank, the lines, a space.
 * Throws InvalidArgumentError for an empty dictionary.
 */
export function ctcClasses(dictionary: string): string[] {
  const lines = dictionary.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  if (lines.length === 0) throw new InvalidArgumentError('ctcClasses: the dictionary has no characters');
  return ['', ...lines, ' '];
}

/**
 * Decodes probs (steps × classes, row-major: a 1 × T × C model output) against classes (from ctcClasses): per
 * step the most probable class, repeats merged, blanks dropped. Throws ShapeMismatchError when probs'
 * length is not steps × classes.length.
 */
export function ctcGreedyDecode(probs: Float32Array, steps: number, classes: readonly string[]): Decoded {
  const c = classes.length;
  if (probs.length !== steps * c)
    throw new ShapeMismatchError(
      `ctcGreedyDecode: ${steps} steps × ${c} classes need ${steps * c} values, got ${probs.length} ` +
        '(is the dictionary the one the model was trained with?)',
    );
  let text = '';
  let sum = 0;
  let kept = 0;
  let previous = -1;
  for (let t = 0; t < steps; t++) {
    let best = 0;
    let p = probs[t * c] as number;
    for (let k = 1; k < c; k++) {
      const v = probs[t * c + k] as number;
      if (v > p) {
        p = v;
        best = k;
      }
    }
    if (best !== 0 && best !== previous) {
      text += classes[best];
      sum += p;
      kept++;
    }
    previous = best;
  }
  return { text, score: kept ? sum / kept : Number.NaN };
}
