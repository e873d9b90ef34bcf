/**
 * The text report of the conformance suite in captured mode (captured.ts): per backend the counts (replayed,
 * broken, unsupported dtype; passed, failed), what the new-input replays changed, every broken capture with its
 * reason, every failure with its message; a backend without capture is said plainly.
 */
import type { CapturedCaseResult, CapturedConformanceResult } from './captured.js';

/** Replayed cases by how many of their array inputs holding elements the new-input replay changed. */
export interface InputChangeCounts {
  /** Cases whose every such input changed. */
  all: number;
  /** Cases where some did (the others hold one element, or equal ones). */
  some: number;
  /** Cases where none did. */
  none: number;
  /** Cases with no such input (only empty arrays, or none: random ops). */
  empty: number;
}

/** Counts the replayed cases of `results` by how many of their inputs the new-input replay changed. */
export function inputChangeCounts(results: readonly CapturedCaseResult[]): InputChangeCounts {
  const counts: InputChangeCounts = { all: 0, some: 0, none: 0, empty: 0 };
  for (const r of results) {
    if (r.capture !== 'replayed') continue;
    const changed = r.inputsChanged ?? 0;
    if (!r.inputs) counts.empty++;
    else if (changed === r.inputs) counts.all++;
    else if (changed > 0) counts.some++;
    else counts.none++;
  }
  return counts;
}

/** One backend's part of the report. */
function backendReport(r: CapturedConformanceResult): string[] {
  const head = `captured mode on ${r.backend} — ${r.deviceName}, ${r.runtime}`;
  if (!r.captures) return [`${head}: ${r.note}; no case run.`];
  const lacking = [...new Set(r.results.filter((x) => x.capture === 'unsupported').map((x) => x.unsupported ?? '?'))];
  const lines = [
    `${head}: ${r.results.length} cases, ${r.passed} passed, ${r.failed} failed (${(r.ms / 1000).toFixed(1)} s; seed ` +
      `${r.seed}, new inputs seed ${r.replaySeed})`,
    `  ${r.replayed} replayed (twice each: new inputs against the float64 oracle, the case's inputs bit for bit ` +
      `against the eager run), ${r.broken} broken, ${r.unsupported} not run (${lacking.join('; ') || 'none'})`,
  ];
  const c = inputChangeCounts(r.results);
  const kernels = r.results.reduce((s, x) => s + (x.kernels ?? 0), 0);
  const copies = r.results.reduce((s, x) => s + (x.copies ?? 0), 0);
  lines.push(
    `  replays encode ${kernels} kernels and ${copies} copies in all; the new inputs changed every array input ` +
      `holding elements in ${c.all} cases, some in ${c.some} (one element, or equal ones), none in ${c.none}; ` +
      `${c.empty} cases have none holding elements (empty arrays: shapes are checked; random ops: seed and offset ` +
      'are constants of the recording)',
  );
  const broken = r.results.filter((x) => x.capture === 'broken');
  lines.push(`  broken captures (the op reads a value on the host): ${broken.length ? '' : 'none'}`);
  for (const x of broken) lines.push(`    ${x.id}: ${x.broken}`);
  for (const x of r.results.filter((y) => !y.pass)) lines.push(`  FAIL ${x.id}: ${x.message}`);
  if (r.timedOut) lines.push(`  the run stopped at ${r.timedOut}, which timed out`);
  return lines;
}

/** The text report of captured-mode runs, one block per backend. */
export function capturedTextReport(runs: readonly CapturedConformanceResult[]): string {
  return runs.map((r) => backendReport(r).join('\n')).join('\n');
}
