/**
 * Silero VAD v5 (github.com/snakers4/silero-vad) frame by frame on any ONNX runtime behind `CreateSession`:
 * each 512-sample frame at 16 kHz (256 at 8 kHz) gives the probability that it holds speech; the model's
 * recurrent state (2 × 1 × 128 float32) is carried from one frame to the next.
 */
import { InvalidArgumentError, ShapeMismatchError } from '@polyhal/hal';
import { float32, floatOutput, type CreateSession, type Session, type Tensor } from '../engine.js';

/** Samples per frame at each sample rate the model takes. */
export const FRAME_SAMPLES = { 16000: 512, 8000: 256 } as const;
export type SampleRate = keyof typeof FRAME_SAMPLES;
const STATE_DIMS = [2, 1, 128];

export class SileroVad {
  private state = new Float32Array(256);
  private readonly sr: Tensor;

  private constructor(
    private readonly session: Session,
    readonly sampleRate: SampleRate,
  ) {
    this.sr = { type: 'int64', dims: [], data: BigInt64Array.from([BigInt(sampleRate)]) };
  }

  /**
   * Loads the model (Silero VAD v5's ONNX bytes); sampleRate 16000 (default) or 8000, else InvalidArgumentError.
   * Throws InvalidArgumentError when the model lacks the inputs input, state and sr.
   */
  static async create(createSession: CreateSession, model: Uint8Array, sampleRate: SampleRate = 16000) {
    if (!(sampleRate in FRAME_SAMPLES))
      throw new InvalidArgumentError(`SileroVad: sampleRate must be 16000 or 8000, got ${sampleRate}`);
    const session = await createSession(model);
    const missing = ['input', 'state', 'sr'].filter((n) => !session.inputNames.includes(n));
    if (missing.length) {
      await session.release();
      throw new InvalidArgumentError(`SileroVad: the model has no input ${missing.join(', ')} (is it Silero VAD v5?)`);
    }
    return new SileroVad(session, sampleRate);
  }

  /** Samples per frame: 512 at 16 kHz, 256 at 8 kHz. */
  get frameSamples(): number {
    return FRAME_SAMPLES[this.sampleRate];
  }

  /** The probability (0…1) that `frame` (frameSamples samples in [−1, 1]) holds speech; advances the state. */
  async process(frame: Float32Array): Promise<number> {
    if (frame.length !== this.frameSamples)
      throw new ShapeMismatchError(`SileroVad: a frame holds ${this.frameSamples} samples, got ${frame.length}`);
    const out = await this.session.run({
      input: float32([1, frame.length], frame),
      state: float32(STATE_DIMS, this.state),
      sr: this.sr,
    });
    const state = floatOutput(out, 'stateN').data;
    if (state.length !== 256) throw new ShapeMismatchError(`SileroVad: stateN has ${state.length} values, not 256`);
    this.state = Float32Array.from(state);
    return floatOutput(out, 'output').data[0] as number;
  }

  /** Forgets the recurrent state (start of a new, unrelated stream). */
  reset(): void {
    this.state = new Float32Array(256);
  }

  release(): Promise<void> {
    return this.session.release();
  }
}
