/**
 * `.npy` files for `polyhal run`: `--input name=file.npy` read into feeds, `--save DIR` writing each output
 * as `DIR/<name>.npy`. The format itself (NumPy's numpy.lib.format: float32, float64, int32, int64, uint8,
 * int8, bool in C order, typed NpyFormatError for bad headers) is @polyhal/conformance's readNpy/writeNpy,
 * which polyhal-conformance --onnx-model reads its inputs with too.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError } from '@polyhal/hal';
import { modelFeeds, parseInputSpec, writeNpy } from '@polyhal/conformance';
import type { OnnxValueInfo, OutputTensor, TensorData } from '@polyhal/onnx';

/** Where an input's values came from (a file, or the generated values' rule), for the run's header. */
export interface LoadedInput {
  readonly name: string;
  readonly dtype: string;
  readonly dims: readonly number[];
  readonly from: string;
}

/**
 * The feeds of a run: each `name=file` spec read (a `.npy`, or an ONNX TensorProto `.pb`), every other
 * input generated from `seed` where its dims are fixed. Errors (typed, each naming the input or file):
 * ModelInputError (a spec without `name=`, an unknown input, an unreadable file, symbolic dims and no file),
 * NpyFormatError, OnnxDecodeError.
 */
export function loadInputs(
  specs: readonly string[],
  inputs: readonly OnnxValueInfo[],
  seed: number,
): { feeds: Record<string, TensorData>; loaded: LoadedInput[] } {
  const { feeds, sources } = modelFeeds(specs.map(parseInputSpec), inputs, seed, (p) => readFileSync(p));
  return { feeds, loaded: sources };
}

/** A file name for an output: its name with characters other than letters, digits, '.', '_' and '-' as '_'. */
export const npyFileName = (output: string): string => `${output.replace(/[^A-Za-z0-9._-]/g, '_') || '_'}.npy`;

/** InvalidArgumentError unless `dir` is an existing directory (checked before a run, so nothing is lost). */
export function checkSaveDir(dir: string): void {
  if (!existsSync(dir)) throw new InvalidArgumentError(`--save ${dir}: no such directory`);
  if (!statSync(dir).isDirectory()) throw new InvalidArgumentError(`--save ${dir}: not a directory`);
}

/** Writes each output as `dir/<name>.npy`; returns the paths written. */
export function saveOutputs(dir: string, outputs: Record<string, OutputTensor>): string[] {
  return Object.entries(outputs).map(([name, t]) => {
    const path = join(dir, npyFileName(name));
    writeFileSync(path, writeNpy({ dtype: t.dtype, dims: t.dims, data: t.data }));
    return path;
  });
}
