/**
 * Speech segments from per-frame speech probabilities, with hysteresis as @ricky0123/vad-web's frame processor
 * decides: speech starts at a frame of probability ≥ positiveThreshold and ends after redemptionFrames frames
 * below negativeThreshold (a frame ≥ positiveThreshold resets that count); segments shorter than
 * minSpeechFrames are dropped.
 */
import { InvalidArgumentError } from '@polyhal/hal';

export interface SegmentOptions {
  /** A frame at or above this starts speech (default 0.5). */
  readonly positiveThreshold?: number;
  /** Frames below this count towards the end of speech (default 0.35). */
  readonly negativeThreshold?: number;
  /** This many frames below negativeThreshold end speech (default 8: 256 ms at 16 kHz). */
  readonly redemptionFrames?: number;
  /** Segments of fewer frames are dropped (default 3). */
  readonly minSpeechFrames?: number;
}

/** A run of speech frames: first frame, and one past the last. */
export interface FrameSegment {
  readonly start: number;
  readonly end: number;
}

/**
 * The speech segments of `probabilities` (one per frame, in order). A segment ends at its last frame at or above
 * negativeThreshold. Throws InvalidArgumentError for thresholds outside [0, 1], negative above positive, or
 * counts that are not non-negative integers.
 */
export function speechSegments(probabilities: ArrayLike<number>, options: SegmentOptions = {}): FrameSegment[] {
  const { positiveThreshold = 0.5, negativeThreshold = 0.35, redemptionFrames = 8, minSpeechFrames = 3 } = options;
  if (!(positiveThreshold >= 0 && positiveThreshold <= 1 && negativeThreshold >= 0))
    throw new InvalidArgumentError('speechSegments: thresholds must lie in [0, 1]');
  if (negativeThreshold > positiveThreshold)
    throw new InvalidArgumentError('speechSegments: negativeThreshold must not exceed positiveThreshold');
  for (const [k, v] of Object.entries({ redemptionFrames, minSpeechFrames }))
    if (!Number.isInteger(v) || v < 0) throw new InvalidArgumentError(`speechSegments: ${k} must be an integer ≥ 0`);
  const out: FrameSegment[] = [];
  let start = -1;
  let lastVoiced = -1;
  let quiet = 0;
  const close = (): void => {
    if (lastVoiced + 1 - start >= minSpeechFrames) out.push({ start, end: lastVoiced + 1 });
    start = -1;
  };
  for (let i = 0; i < probabilities.length; i++) {
    const p = probabilities[i] as number;
    if (start < 0) {
      if (p >= positiveThreshold) {
        start = i;
        lastVoiced = i;
        quiet = 0;
      }
      continue;
    }
    if (p >= positiveThreshold) quiet = 0;
    if (p >= negativeThreshold) lastVoiced = i;
    else if (++quiet >= redemptionFrames) close();
  }
  if (start >= 0) close();
  return out;
}

/** Per frame: whether it lies in one of `segments` (frames 0 … frames − 1). */
export function speechFrames(segments: readonly FrameSegment[], frames: number): boolean[] {
  const out = new Array<boolean>(frames).fill(false);
  for (const s of segments) for (let i = s.start; i < Math.min(s.end, frames); i++) out[i] = true;
  return out;
}
