/**
 * A speech-like test signal with known speech regions: "utterances" of vowel-like syllables (a glottal pulse
 * train at 100–180 Hz with a 3 Hz vibrato, through three formant resonators of /a/, /i/, /e/, /o/ or /u/,
 * under a sine envelope), separated by silence, over faint white noise. Deterministic for a seed.
 */

/** Mulberry32: a small seeded generator. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** F1, F2, F3 in Hz of five vowels (Peterson and Barney's adult means). */
const VOWELS = [
  [730, 1090, 2440],
  [270, 2290, 3010],
  [530, 1840, 2480],
  [570, 840, 2410],
  [300, 870, 2240],
] as const;
const BANDWIDTHS = [80, 100, 120];

/** n samples of one vowel at fundamental f0, peak-normalized to 1. */
function vowel(n: number, f0: number, formants: readonly number[], sr: number, next: () => number): Float32Array {
  const out = new Float32Array(n);
  const res = formants.map((f, k) => {
    const r = Math.exp((-Math.PI * (BANDWIDTHS[k] as number)) / sr);
    return { a1: 2 * r * Math.cos((2 * Math.PI * f) / sr), a2: -r * r, y1: 0, y2: 0 };
  });
  let phase = 0;
  let peak = 1e-9;
  for (let i = 0; i < n; i++) {
    phase += (f0 * (1 + 0.05 * Math.sin((2 * Math.PI * 3 * i) / sr))) / sr;
    let src = (next() - 0.5) * 0.02;
    if (phase >= 1) {
      phase -= 1;
      src += 1;
    }
    let y = 0;
    for (const r of res) {
      const v = src + r.a1 * r.y1 + r.a2 * r.y2;
      r.y2 = r.y1;
      r.y1 = v;
      y += v;
    }
    out[i] = y;
    peak = Math.max(peak, Math.abs(y));
  }
  for (let i = 0; i < n; i++) out[i] = (out[i] as number) / peak;
  return out;
}

/** The signal and its speech regions in samples ([start, end) each). */
export interface SpeechLike {
  readonly samples: Float32Array;
  readonly sampleRate: number;
  readonly speech: { start: number; end: number }[];
}

/** `seconds` of speech-like signal at sampleRate (default 16 kHz): 0.5 s of silence first, ≥ 0.5 s last. */
export function speechLike(seconds: number, seed = 1, sampleRate = 16000): SpeechLike {
  const next = rng(seed);
  const x = new Float32Array(Math.round(seconds * sampleRate));
  const speech: { start: number; end: number }[] = [];
  let t = Math.round(0.5 * sampleRate);
  while (t + sampleRate < x.length) {
    const len = Math.min(Math.round((0.5 + next() * 0.7) * sampleRate), x.length - t - sampleRate / 2);
    for (let u = 0; u < len; ) {
      const syl = Math.min(Math.round((0.12 + next() * 0.12) * sampleRate), len - u);
      const formants = VOWELS[Math.floor(next() * VOWELS.length)] as readonly number[];
      const v = vowel(syl, 100 + next() * 80, formants, sampleRate, next);
      for (let i = 0; i < syl; i++) x[t + u + i] = 0.5 * Math.sin((Math.PI * i) / syl) * (v[i] as number);
      u += syl + Math.round(next() * 0.04 * sampleRate);
    }
    speech.push({ start: t, end: t + len });
    t += len + Math.round((0.4 + next() * 0.6) * sampleRate);
  }
  for (let i = 0; i < x.length; i++) x[i] = (x[i] as number) + (next() - 0.5) * 0.004;
  return { samples: x, sampleRate, speech };
}
