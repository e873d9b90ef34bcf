/**
 * Summaries of conformance results: a per op × dtype matrix (pass/fail, max abs and ULP error) for
 * each backend, as a text table, markdown or HTML.
 */
import type { ConformanceResult } from './runner.js';

export interface MatrixCell {
  op: string;
  dtype: string;
  cases: number;
  failed: number;
  maxAbsError: number;
  maxUlpError: number;
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

const fmt = (x: number): string => (x === 0 ? '0' : x.toExponential(1));
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

export function textTable(results: ConformanceResult[]): string {
  const lines: string[] = [];
  for (const r of results) {
    lines.push(`${r.backend} — ${r.deviceName}, ${r.runtime}: ${r.passed} passed, ${r.failed} failed`);
    lines.push(`  tolerance class: ${toleranceClass(r)}`);
    lines.push(
      `  ${'op'.padEnd(22)}${'dtype'.padEnd(9)}${'result'.padEnd(8)}` +
        `${'cases'.padStart(6)}${'max abs'.padStart(10)}${'max ulp'.padStart(10)}`,
    );
    for (const c of matrix(r)) {
      lines.push(
        `  ${c.op.padEnd(22)}${c.dtype.padEnd(9)}${status(c).padEnd(8)}` +
          `${String(c.cases).padStart(6)}${fmt(c.maxAbsError).padStart(10)}${String(c.maxUlpError).padStart(10)}`,
      );
    }
    if (r.startError) {
      // Every case failed for one reason: say it once (the JSON keeps each case's row).
      lines.push(`  FAIL every case (${r.results.length}), not run: the backend did not start: ${r.startError}`);
      continue;
    }
    for (const c of r.results.filter((x) => !x.pass)) lines.push(`  FAIL ${c.id}: ${c.message}`);
  }
  return lines.join('\n');
}

const esc = (s: string): string =>
  s.replace(/[&<>"]/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[ch]!);

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
