/**
 * Aligned text columns for the reports: every column padded to its widest cell, so no two cells run
 * together whatever their widths.
 */

/**
 * `rows` (the header first, if any) as lines: each cell but the last of a row padded to its column's
 * widest cell and followed by `gap`, each line prefixed by `indent`. Cells never hold two spaces in a
 * row, so a line splits back into its cells on /\s{2,}/ (with the default gap).
 */
export function alignColumns(rows: readonly (readonly string[])[], indent = '  ', gap = '  '): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map(
    (row) => indent + row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!) + gap)).join(''),
  );
}

/** A number in 2 significant digits ('0' for zero, 'Infinity' and 'NaN' as such), e.g. 2.2e+2. */
export const sci = (x: number): string => (x === 0 ? '0' : Number.isFinite(x) ? x.toExponential(1) : String(x));
