/**
 * Summaries of ONNX node test runs: counts, the not-expressible reasons grouped by kind and by text
 * (the yardstick for ops to add), every failure by test name, and an op × result table of the ops with
 * expressible tests.
 */
import { alignColumns } from '../text-columns.js';
import type { OnnxNodeTestsResult, OnnxTestResult } from './runner.js';

/** A not-expressible reason with the number of tests it accounts for and some of their ops. */
export interface OnnxReasonCount {
  /** What is missing: an op, a dtype, an attribute, an input form, a multi-node graph (ReasonKind). */
  kind: string;
  /** The reason in words, e.g. "dtype float64". */
  reason: string;
  /** How many tests it accounts for. */
  tests: number;
  /** Some of the ops of those tests. */
  ops: string[];
}

/** Not-expressible reasons, most frequent first. */
export function onnxReasons(results: readonly OnnxTestResult[]): OnnxReasonCount[] {
  const m = new Map<string, OnnxReasonCount>();
  for (const r of results) {
    if (r.status !== 'not-expressible') continue;
    const key = `${r.kind}\u0000${r.reason}`;
    const c = m.get(key) ?? { kind: r.kind ?? '', reason: r.reason ?? '', tests: 0, ops: [] };
    c.tests++;
    if (r.op && !c.ops.includes(r.op)) c.ops.push(r.op);
    m.set(key, c);
  }
  return [...m.values()].sort((a, b) => b.tests - a.tests || a.reason.localeCompare(b.reason));
}

/** Counts of not-expressible tests per kind (op, dtype, attribute, input, graph). */
export function onnxReasonKinds(results: readonly OnnxTestResult[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of results) if (r.status === 'not-expressible') out[r.kind!] = (out[r.kind!] ?? 0) + 1;
  return out;
}

/**
 * Text report of one or more runs: per run a title line and the counts, then every failed test (its name,
 * op and reason, the reasons aligned), the not-expressible reasons (`top` bounds them, default 15) and an
 * op × result table of the ops with expressible tests, failing ops first, its columns padded to their
 * widest cell.
 */
export function onnxTextReport(runs: readonly OnnxNodeTestsResult[], top = 15): string {
  const lines: string[] = [];
  for (const r of runs) {
    const total = r.results.length;
    lines.push(`ONNX node tests (${r.dir}) on ${r.backend} — ${r.deviceName}, ${r.runtime}`);
    lines.push(
      `  ${total} tests: ${r.passed + r.failed} expressible — ${r.passed} passed, ${r.failed} ` +
        `failed; ${r.notExpressible} not expressible`,
    );
    const failed = r.results.filter((x) => x.status === 'failed');
    lines.push(
      ...alignColumns(
        failed.map((t) => [`FAIL ${t.test} (${t.op || '?'}):`, t.reason ?? '-']),
        '  ',
        ' ',
      ),
    );
    const kinds = Object.entries(onnxReasonKinds(r.results)).sort((a, b) => b[1] - a[1]);
    if (kinds.length) lines.push(`  not expressible, by kind: ${kinds.map(([k, n]) => `${k} ${n}`).join(', ')}`);
    const reasons = onnxReasons(r.results);
    if (reasons.length) {
      lines.push(`  top reasons:`);
      for (const c of reasons.slice(0, top)) {
        const ops =
          c.kind === 'op' || c.kind === 'graph'
            ? ''
            : ` (${c.ops.slice(0, 6).join(', ')}${c.ops.length > 6 ? ', ...' : ''})`;
        lines.push(`    ${String(c.tests).padStart(4)}  ${c.kind}: ${c.reason}${ops}`);
      }
      if (reasons.length > top) lines.push(`    ... ${reasons.length - top} more reasons (--json has every test)`);
    }
    const byOp = new Map<string, { passed: number; failed: number; ne: number }>();
    for (const t of r.results) {
      if (!t.op) continue;
      const c = byOp.get(t.op) ?? { passed: 0, failed: 0, ne: 0 };
      if (t.status === 'passed') c.passed++;
      else if (t.status === 'failed') c.failed++;
      else c.ne++;
      byOp.set(t.op, c);
    }
    const expressible = [...byOp].filter(([, c]) => c.passed + c.failed > 0).sort((a, b) => a[0].localeCompare(b[0]));
    const rows = [...expressible.filter(([, c]) => c.failed), ...expressible.filter(([, c]) => !c.failed)];
    lines.push(
      ...alignColumns([
        ['op', 'result', 'passed', 'failed', 'not expr.'],
        ...rows.map(([op, c]) => [op, c.failed ? 'FAIL' : 'pass', String(c.passed), String(c.failed), String(c.ne)]),
      ]),
    );
  }
  return lines.join('\n');
}
