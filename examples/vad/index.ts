export { type FrameSegment, type SegmentOptions, speechFrames, speechSegments } from './segments.js';
export { FRAME_SAMPLES, type SampleRate, SileroVad } from './silero.js';
export { type SpeechLike, speechLike } from './synth.js';
export { detectSpeech, type SampleSegment, type VadResult } from './vad.js';
