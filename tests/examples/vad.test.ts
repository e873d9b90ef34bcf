/**
 * @jest-environment ./tests/examples/native-arrays-environment.cjs
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { InvalidArgumentError, ShapeMismatchError } from '@polyhal/hal';
import { fromPolyhal } from '../../examples/engine.js';
import {
  detectSpeech,
  SileroVad,
  speechFrames,
  speechLike,
  speechSegments,
  type VadResult,
} from '../../examples/vad/index.js';
import { sileroV5 } from '../../examples/vad/models.js';
import { onnxRuntimeInChild } from '../support/ort-remote.js';

// The VAD example (examples/vad): Silero VAD v5 over a synthesized 16 kHz signal of vowel-like bursts and
// silence whose speech regions are known, 512-sample frames with the recurrent state carried.
// onnxruntime-node, the peer, runs in a child process (tests/support/ort-server.mjs)
const ortChild = onnxRuntimeInChild();
afterAll(() => ortChild.close());

const FRAME = 512;
let model: Uint8Array;
/** onnxruntime-node's result on each signal length, the peer PolyHAL's decisions are compared with. */
const peer = new Map<number, VadResult>();
beforeAll(async () => {
  model = await sileroV5();
  const vad = await SileroVad.create(ortChild.create, model);
  for (const seconds of [8, 4]) peer.set(seconds, await detectSpeech(vad, speechLike(seconds, 1).samples));
  await vad.release();
});

describe('speech segments (hysteresis)', () => {
  test('speech starts at ≥ 0.5, ends after 3 frames under 0.35, at the last frame ≥ 0.35; short runs drop', () => {
    const p = [0.1, 0.6, 0.9, 0.4, 0.2, 0.2, 0.7, 0.3, 0.1, 0.1, 0.1, 0.6, 0.1, 0.1, 0.1, 0.8, 0.9, 0.9, 0.9];
    const s = speechSegments(p, { redemptionFrames: 3, minSpeechFrames: 2 });
    // frames 1…6 (0.2, 0.2 do not reach 3; 0.7 resets), then 7, 8, 9 under 0.35 end it after frame 6;
    // frame 11 alone is 1 frame (dropped); 15… runs to the end
    expect(s).toEqual([
      { start: 1, end: 7 },
      { start: 15, end: 19 },
    ]);
    expect(speechFrames(s, 8)).toEqual([false, true, true, true, true, true, true, false]);
  });

  test('bad options are InvalidArgumentError', () => {
    expect(() => speechSegments([0.5], { positiveThreshold: 0.3, negativeThreshold: 0.4 })).toThrow(
      InvalidArgumentError,
    );
    expect(() => speechSegments([0.5], { redemptionFrames: 1.5 })).toThrow(InvalidArgumentError);
  });
});

describe('VAD example with onnxruntime-node (cpu)', () => {
  test('finds every synthesized utterance: starts within 2 frames, ends within the redemption tail', async () => {
    const signal = speechLike(8, 1);
    const r = peer.get(8) as VadResult;
    expect(r.probabilities.length).toBe(Math.floor(signal.samples.length / FRAME));
    expect(r.segments.length).toBe(signal.speech.length);
    r.segments.forEach((s, i) => {
      const truth = signal.speech[i] as { start: number; end: number };
      expect(Math.abs(s.start - truth.start)).toBeLessThanOrEqual(2 * FRAME);
      expect(s.end - truth.end).toBeGreaterThanOrEqual(-2 * FRAME);
      expect(s.end - truth.end).toBeLessThanOrEqual(10 * FRAME);
    });
    // silence between utterances (away from their edges) is never speech
    const inSpeech = (f: number) => r.segments.some((s) => f * FRAME < s.end && (f + 1) * FRAME > s.start);
    for (let f = 0; f < 12; f++) expect(inSpeech(f)).toBe(false);
  });

  test('the recurrent state matters: frames run from a fresh state each give other probabilities', async () => {
    const signal = speechLike(2, 1);
    const vad = await SileroVad.create(ortChild.create, model);
    const carried = (await detectSpeech(vad, signal.samples)).probabilities;
    const fresh: number[] = [];
    for (let f = 0; f < carried.length; f++) {
      vad.reset();
      fresh.push(await vad.process(signal.samples.subarray(f * FRAME, (f + 1) * FRAME)));
    }
    await vad.release();
    expect(Math.max(...fresh.map((p, f) => Math.abs(p - (carried[f] as number))))).toBeGreaterThan(0.1);
  });

  test('bad input is a typed error', async () => {
    const vad = await SileroVad.create(ortChild.create, model);
    await expect(vad.process(new Float32Array(500))).rejects.toThrow(ShapeMismatchError);
    await vad.release();
    await expect(SileroVad.create(ortChild.create, model, 44100 as never)).rejects.toThrow(InvalidArgumentError);
  });
});

// PolyHAL: the same per-frame decisions as onnxruntime-node, probabilities within 1e-4 (webgpu on 4 s: lavapipe
// is slow).
describe.each([
  ['cpu', 8],
  ['wasm', 8],
  ['webgpu', 4],
])('VAD example with PolyHAL %s', (backend, seconds) => {
  test(`the same speech/non-speech decisions as onnxruntime-node over ${seconds} s`, async () => {
    const vad = await SileroVad.create(fromPolyhal(backend), model);
    const r = await detectSpeech(vad, speechLike(seconds, 1).samples);
    await vad.release();
    const ref = peer.get(seconds) as VadResult;
    expect(r.speech).toEqual(ref.speech);
    expect(r.segments).toEqual(ref.segments);
    let diff = 0;
    r.probabilities.forEach((p, i) => {
      diff = Math.max(diff, Math.abs(p - (ref.probabilities[i] as number)));
    });
    expect(diff).toBeLessThan(1e-4);
  });
});
