/** Node: Silero VAD v5's ONNX file from the @ricky0123/vad-web package. */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The path of silero_vad_v5.onnx (inputs input 1 × 512 float32, state 2 × 1 × 128 float32, sr int64). */
export const SILERO_V5_PATH = join(
  dirname(createRequire(import.meta.url).resolve('@ricky0123/vad-web/package.json')),
  'dist',
  'silero_vad_v5.onnx',
);

/** Reads Silero VAD v5's bytes. */
export const sileroV5 = async (path = SILERO_V5_PATH): Promise<Uint8Array> => readFile(path);
