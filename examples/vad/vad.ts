/** Voice activity detection over a whole recording: Silero VAD frame by frame, then hysteresis into segments. */
import { InvalidArgumentError } from '@polyhal/hal';
import { type FrameSegment, type SegmentOptions, speechFrames, speechSegments } from './segments.js';
import type { SileroVad } from './silero.js';

/** A speech segment in samples: first sample, one past the last. */
export interface SampleSegment {
  readonly start: number;
  readonly end: number;
}

export interface VadResult {
  /** Per whole frame of the recording: the model's speech probability. */
  readonly probabilities: Float32Array;
  /** Per frame: whether it is speech (lies in a segment). */
  readonly speech: boolean[];
  /** The speech segments in frames and in samples. */
  readonly frameSegments: FrameSegment[];
  readonly segments: SampleSegment[];
}

/**
 * Runs `vad` over `samples` (mono, in [−1, 1], at vad.sampleRate) from a fresh state, frame by frame (a last
 * partial frame is left out), and segments the probabilities. Throws InvalidArgumentError when samples is not
 * a Float32Array.
 */
export async function detectSpeech(
  vad: SileroVad,
  samples: Float32Array,
  options: SegmentOptions = {},
): Promise<VadResult> {
  if (!(samples instanceof Float32Array))
    throw new InvalidArgumentError('detectSpeech: samples must be a Float32Array');
  const n = vad.frameSamples;
  const frames = Math.floor(samples.length / n);
  const probabilities = new Float32Array(frames);
  vad.reset();
  for (let f = 0; f < frames; f++) probabilities[f] = await vad.process(samples.subarray(f * n, (f + 1) * n));
  const frameSegments = speechSegments(probabilities, options);
  return {
    probabilities,
    speech: speechFrames(frameSegments, frames),
    frameSegments,
    segments: frameSegments.map((s) => ({ start: s.start * n, end: s.end * n })),
  };
}
