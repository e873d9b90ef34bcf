/**
 * Summaries of conformance results: a per op × dtype matrix (pass/fail, max abs and ULP error) for
 * each backend, and the failed cases, as text or HTML.
 */
import { CASES } from './cases.js';
import type { CaseResult, ConformanceResult } from './runner.js';
import { alignColumns, sci as fmt } from './text-columns.js';

/** One op × dtype cell of a backend's result matrix. */
export interface MatrixCell {
  /** The op's name. */
  op: string;
  /** The cases' dtype. */
  dtype: string;
  /** Cases run for this op and dtype. */
  cases: number;
  /** Cases that failed. */
  failed: number;
  /** Largest absolute error over the cases. */
  maxAbsError: number;
  /** Largest error in float32 ulps over the cases. */
  maxUlpError: number;
  /** Elements not compared (outside the backend's guaranteed domain), over the cases. */
  skipped: number;
  /** Cases needing a dtype the backend lacks, which it refused as required (UnsupportedOpError). */
  unsupported: number;
}

/** Groups case results by op × dtype. */
export function matrix(r: ConformanceResult): MatrixCell[] {
  const cells = new Map<string, MatrixCell>();
  for (const c of r.results) {
    const key = `${c.op}/${c.dtype}`;
    const cell = cells.get(key) ?? {
      op: c.op,
      dtype: c.dtype,
      cases: 0,
      failed: 0,
      maxAbsError: 0,
      maxUlpError: 0,
      skipped: 0,
      unsupported: 0,
    };
    cell.cases++;
    if (c.unsupported) cell.unsupported++;
    if (!c.pass) cell.failed++;
    cell.maxAbsError = Math.max(cell.maxAbsError, c.maxAbsError);
    if (Number.isFinite(c.maxUlpError) && c.maxUlpError < 2 ** 31)
      cell.maxUlpError = Math.max(cell.maxUlpError, c.maxUlpError);
    cell.skipped += c.skipped ?? 0;
    cells.set(key, cell);
  }
  return [...cells.values()];
}

/** FAIL, n/a (a dtype the backend lacks, refused as required: every case of the cell) or pass. */
export const status = (c: MatrixCell): string =>
  c.failed ? 'FAIL' : c.unsupported > 0 && c.unsupported === c.cases ? 'n/a' : 'pass';

/** The tolerance class applied to a backend and where it came from, e.g. "wgsl (declared by the backend; ...)". */
export function toleranceClass(r: ConformanceResult): string {
  const c = r.capabilities;
  if (r.startError) return 'none applied (the backend did not start)';
  if (!c) return 'ieee-correctly-rounded (not recorded)';
  const flags = [c.fusedMultiplyAdd && 'fused multiply-add', c.flushesSubnormals && 'flushes subnormals']
    .filter(Boolean)
    .join(', ');
  return (
    `${c.arithmetic} ` +
    `(${r.capabilitiesDeclared ? 'declared by the backend' : 'default: the backend declares no capabilities'}` +
    `${flags ? `; ${flags}` : ''})`
  );
}

/** Input shapes of each case by id, as its id writes them: `[5,7].permute`, several joined by ', '. */
let caseShapes: Map<string, string> | undefined;
function inputShapes(id: string): string {
  caseShapes ??= new Map(
    CASES.map((c) => [
      c.id,
      c.inputs.map((i) => `[${i.shape.join(',')}]${i.view ? `.${Object.keys(i.view)[0]}` : ''}`).join(', ') || '-',
    ]),
  );
  return caseShapes.get(id) ?? '-';
}

/**
 * A failed case's worst absolute, relative and ULP errors; '-' where none was measured: all three when the
 * case threw, leaked or had a wrong shape, the relative error where every wanted value was 0, the ULP
 * error for outputs other than float32.
 */
function caseErrors(c: CaseResult): string[] {
  const { maxAbsError: abs, maxRelError: rel, maxUlpError: ulp } = c;
  if (abs === 0 && rel === 0 && ulp === 0) return ['-', '-', '-'];
  return [fmt(abs), abs > 0 && rel === 0 ? '-' : fmt(rel), abs > 0 && ulp === 0 ? '-' : String(ulp)];
}

/**
 * The text report of each run: a title line (backend, device, runtime, counts) and the tolerance class;
 * then, when cases failed, one row per failed case — its id, input shapes, worst absolute, relative and
 * ULP errors, and the reason (the first element out of tolerance, or what it threw) — and last the
 * op × dtype matrix, failing cells first. Each table's columns are padded to their widest cell.
 */
export function textTable(results: ConformanceResult[]): string {
  const lines: string[] = [];
  for (const r of results) {
    lines.push(`${r.backend} — ${r.deviceName}, ${r.runtime}: ${r.passed} passed, ${r.failed} failed`);
    lines.push(`  tolerance class: ${toleranceClass(r)}`);
    if (r.startError) {
      // Every case failed for one reason: say it once (the JSON keeps each case's row).
      lines.push(`  FAIL every case (${r.results.length}), not run: the backend did not start: ${r.startError}`);
    } else {
      const failed = r.results.filter((x) => !x.pass);
      if (failed.length) {
        lines.push(
          ...alignColumns([
            ['result', 'case', 'inputs', 'max abs', 'max rel', 'max ulp', 'reason'],
            ...failed.map((c) => ['FAIL', c.id, inputShapes(c.id), ...caseErrors(c), c.message || '-']),
          ]),
        );
      }
    }
    const cells = matrix(r);
    const rows = [...cells.filter((c) => c.failed), ...cells.filter((c) => !c.failed)];
    lines.push(
      ...alignColumns([
        ['op', 'dtype', 'result', 'cases', 'max abs', 'max ulp'],
        ...rows.map((c) => [c.op, c.dtype, status(c), String(c.cases), fmt(c.maxAbsError), String(c.maxUlpError)]),
      ]),
    );
  }
  return lines.join('\n');
}

const esc = (s: string): string =>
  s.replace(/[&<>"]/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[ch]!);

/** A standalone HTML page: each backend's op × dtype matrix and its failed cases (what --html writes). */
export function htmlReport(results: ConformanceResult[]): string {
  const sections = results.map((r) => {
    const rows = matrix(r)
      .map(
        (c) =>
          `<tr class="${c.failed ? 'fail' : 'pass'}"><td>${esc(c.op)}</td><td>${c.dtype}</td>` +
          `<td>${c.failed ? `FAIL (${c.failed})` : status(c)}</td><td>${c.cases}</td><td>${fmt(c.maxAbsError)}</td>` +
          `<td>${c.maxUlpError}</td><td>${c.skipped}</td></tr>`,
      )
      .join('\n');
    const fails = r.startError
      ? `<li>every case, not run: the backend did not start: ${esc(r.startError)}</li>`
      : r.results
          .filter((x) => !x.pass)
          .map((x) => `<li>${esc(x.id)}: ${esc(x.message ?? '')}</li>`)
          .join('');
    return `<h2>${esc(r.backend)} — ${esc(r.deviceName)}, ${esc(r.runtime)}</h2>
    <p>${r.passed} passed, ${r.failed} failed (seed ${r.seed}); tolerance class: ${esc(toleranceClass(r))}</p>
<table><tr><th>op</th><th>dtype</th><th>result</th><th>cases</th>
<th>max abs error</th><th>max ULP error</th><th>elements outside the domain</th></tr>${rows}</table>
${fails ? `<ul>${fails}</ul>` : ''}`;
  });
  return `<!doctype html><meta charset="utf-8"><title>PolyHAL conformance</title>
<style>body{font-family:sans-serif}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:2px 8px}.fail{background:#fdd}.pass td:nth-child(3){color:#070}</style>
<h1>PolyHAL conformance</h1>${sections.join('\n')}`;
}
