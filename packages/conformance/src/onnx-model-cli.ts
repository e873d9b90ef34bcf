/**
 * `polyhal-conformance --onnx-model model.onnx [--input name=file]... [--backend ...] [--tolerance X]
 * [--json out.json]`: a whole model on each backend, every node's outputs against the reference
 * (onnx-model.ts). Exit code: 0 every backend within tolerance at every node, 1 a backend beyond it or whose
 * run failed, 2 bad usage or a model or input that cannot run (a one-line typed error naming the file, node
 * or input; nothing is allocated at a size the file only claims).
 */
import * as fs from 'node:fs';
import { readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { decodeModel, externalDataFromDirectory } from '@polyhal/onnx';
import { type ModelBackend, runOnnxModel } from './onnx-model.js';
import { modelFeeds, parseInputSpec } from './onnx-model-inputs.js';
import { oneLineError, onnxModelTextReport } from './onnx-model-report.js';

/** What the command takes from polyhal-conformance's options. */
export interface OnnxModelCommand {
  model: string;
  inputs: readonly string[];
  seed: number;
  tolerance?: number;
  timeoutMs?: number;
  /** Writes the JSON result (the caller checked the path); returns whether it was written. */
  writeJson?: (text: string) => boolean;
}

/** The model's inputs (initializers excluded) as its file declares them, for --input checks and generated feeds. */
function declaredInputs(path: string) {
  const bytes = readFileSync(path);
  const m = decodeModel(bytes, { source: path, externalData: externalDataFromDirectory(dirname(path), fs) });
  const inits = new Set(m.initializers.map((t) => t.name));
  return m.inputs.filter((v) => !inits.has(v.name));
}

/** Runs the command; `backends` are loaded already. Returns the exit code. */
export async function onnxModelCommand(o: OnnxModelCommand, backends: readonly ModelBackend[]): Promise<number> {
  let st: ReturnType<typeof statSync> | undefined;
  try {
    st = statSync(o.model);
  } catch (e) {
    console.error(`error: --onnx-model ${o.model}: cannot be read (${(e as Error).message})`);
    return 2;
  }
  if (!st.isFile()) {
    console.error(`error: --onnx-model ${o.model}: not a file`);
    return 2;
  }
  let prepared: ReturnType<typeof modelFeeds>;
  try {
    const specs = o.inputs.map(parseInputSpec);
    prepared = modelFeeds(specs, declaredInputs(o.model), o.seed, (p) => readFileSync(p));
  } catch (e) {
    console.error(`error: ${oneLineError(o.model, e)}`);
    return 2;
  }
  let result: Awaited<ReturnType<typeof runOnnxModel>>;
  try {
    result = await runOnnxModel(o.model, backends, {
      feeds: prepared.feeds,
      inputSources: prepared.sources,
      tolerance: o.tolerance,
      timeoutMs: o.timeoutMs,
    });
  } catch (e) {
    console.error(`error: ${oneLineError(o.model, e)}`);
    return 2;
  }
  console.log(onnxModelTextReport(result));
  if (o.writeJson && !o.writeJson(JSON.stringify(result, null, 2))) return 2;
  return result.results.every((r) => r.status === 'passed') ? 0 : 1;
}
