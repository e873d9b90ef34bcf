// PERFORMANCE.md's section on ONNX models (benches/onnx/models.mjs; benches/results/<machine>/onnx-models.json):
// PolyHAL's InferenceSession beside onnxruntime in one process on the same inputs, per machine that has a file.
import { listResults } from '../../benches/lib/results.mjs';
import { day, fileLink, num, table, times } from './format.mjs';

/** The goals: PolyHAL wasm ≥ 1.0× onnxruntime-web wasm, PolyHAL webgpu ≥ 1.0× onnxruntime-node WebGPU. */
const GOALS = { 'polyhal-wasm': 'ort-web-wasm', 'polyhal-webgpu': 'ort-node-webgpu' };
const GOAL_MODELS = ['det', 'rec'];

/** The section's lines: one table per machine, then the goals as measured. */
export function onnxSection() {
  const files = listResults()
    .filter((f) => f.suite === 'onnx-models')
    .map((f) => f.data);
  const lines = [
    '## ONNX models (`@polyhal/onnx` beside onnxruntime)',
    '',
    'PP-OCRv4 det (1×3×640×640), rec (1×3×48×320) and Silero VAD v5 (one 512-sample frame, its state carried), run',
    'by `node benches/onnx/models.mjs` in one process, timed runs in rounds whose engine order rotates; every',
    "engine's outputs are checked against onnxruntime-node's CPU provider (agrees: max abs difference ≤ 1e-3).",
    'ratio = peer time / PolyHAL time. First runs include shader compilation and, on wasm, thread start-up.',
    "Each engine's block of timed runs starts with an untimed run (rows from 2026-11-27T10:00Z on).",
    'On webgpu a session replays the run it captured on its second run (graph capture, the session default);',
    'polyhal-webgpu-eager has capture off and lowers every node every run.',
  ];
  const goals = [];
  for (const file of files) {
    const models = [...new Set(file.rows.map((r) => r.model))];
    const rows = file.rows
      .filter((r) => r.medianMs !== undefined)
      .sort((a, b) => models.indexOf(a.model) - models.indexOf(b.model))
      .map((r) => [
        r.model,
        r.config,
        num(r.createMs),
        num(r.firstRunMs),
        num(r.medianMs),
        r.ratio === undefined ? '' : `${times(r.ratio)} ${r.peer}`,
        r.agrees ? 'yes' : 'no',
        day(r.date),
      ]);
    lines.push(
      '',
      `### ${file.machine}: ${file.card} (${fileLink(file.machine, 'onnx-models')})`,
      '',
      table(['model', 'engine', 'create ms', 'first run ms', 'median ms', 'ratio', 'agrees', 'date'], rows),
    );
    // the webgpu goal is set on a real GPU: a software adapter's rows are shown, not scored
    const software = /llvmpipe|software/i.test(file.card);
    for (const [ours, peer] of Object.entries(GOALS))
      for (const model of GOAL_MODELS) {
        if (software && ours === 'polyhal-webgpu') continue;
        const r = file.rows.find((x) => x.model === model && x.config === ours && x.peer === peer);
        if (r?.ratio !== undefined)
          goals.push(
            `- ${ours} ≥ 1.0× ${peer} on ${model} (${file.machine}): ${times(r.ratio)}, ` +
              `${r.ratio >= 1 ? 'met' : 'not met'}.`,
          );
      }
  }
  if (goals.length) lines.push('', 'Goals as measured:', '', ...goals);
  return lines;
}
