// Formatting and data access for the results pages (scripts/results-docs.mjs): every figure printed comes from a
// results file through these helpers; a figure the page needs but the file lacks is an error, not a blank.
import { readResults } from '../../benches/lib/results.mjs';

/** The mark of a figure copied from a page into a results file (a row with `transcribed`): see `footnote`. */
export const DAGGER = '†';

const group = (s) => s.replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/**
 * A figure: 3 significant digits (integers from 1,000 up, with thousands separators); a [low, high] range as
 * `low–high` (one value when both print alike); a transcribed figure as it was written.
 */
export function num(x, { transcribed = false, digits = 3 } = {}) {
  if (Array.isArray(x)) {
    const [lo, hi] = x.map((v) => num(v, { transcribed, digits }));
    return lo === hi ? lo : `${lo}–${hi}`;
  }
  if (typeof x !== 'number' || !Number.isFinite(x)) throw new Error(`not a figure: ${JSON.stringify(x)}`);
  if (transcribed) return group(String(x));
  if (Math.abs(x) >= 10 ** digits) return group(String(Math.round(x)));
  return x.toPrecision(digits);
}

/** A ratio with 2 decimals and ×; ranges and transcribed figures as num. */
export function times(x, { transcribed = false } = {}) {
  if (Array.isArray(x)) {
    const [lo, hi] = x.map((v) => times(v, { transcribed }).slice(0, -1));
    return `${lo === hi ? lo : `${lo}–${hi}`}×`;
  }
  if (typeof x !== 'number' || !Number.isFinite(x)) throw new Error(`not a ratio: ${JSON.stringify(x)}`);
  return `${transcribed ? String(x) : x.toFixed(2)}×`;
}

/** A share in whole percent. */
export const pct = (x) => `${Math.round(x * 100)}%`;

/** [min, max] of figures. */
export const span = (xs) => [Math.min(...xs), Math.max(...xs)];

/** Joins figures with ' / ' (the pages' way of listing sizes or backends in one cell). */
export const slash = (xs) => xs.join(' / ');

/** The relative link of a results file from docs/results/. */
export const fileLink = (machine, suite) =>
  `[${machine}/${suite}.json](../../benches/results/${machine}/${suite}.json)`;

/** A results file; throws when it is missing. */
export function results(machine, suite) {
  const data = readResults(machine, suite);
  if (!data) throw new Error(`benches/results/${machine}/${suite}.json is missing`);
  return data;
}

/** One row of a harness file ({ machine, suite, runs }) with its run: backend, row name and size. */
export function harnessRow(machine, suite, backend, name, size) {
  const file = results(machine, suite);
  const run = file.runs.find((r) => r.backend === backend);
  const row = run?.rows.find((r) => r.name === name && (size === undefined || r.size === size));
  if (!row) throw new Error(`benches/results/${machine}/${suite}.json has no ${backend} row '${name}' ${size ?? ''}`);
  const { transcribed = run.transcribed, date = run.date } = row;
  return { ...row, backend, transcribed, date, device: run.device, host: run.host };
}

/** Rows of a probe file whose fields equal `match` (a field given as undefined must be absent). */
export function probeRows(machine, suite, match) {
  const rows = results(machine, suite).rows.filter((r) =>
    Object.entries(match).every(([k, v]) => JSON.stringify(r[k]) === JSON.stringify(v)),
  );
  if (rows.length === 0)
    throw new Error(`benches/results/${machine}/${suite}.json has no row ${JSON.stringify(match)}`);
  return rows;
}

/** The one probe row that matches. */
export function probeRow(machine, suite, match) {
  const rows = probeRows(machine, suite, match);
  if (rows.length > 1) throw new Error(`benches/results/${machine}/${suite}.json: ${rows.length} rows match`);
  return rows[0];
}

/** The day of an ISO date. */
export const day = (iso) => String(iso).slice(0, 10);

/** A Markdown table (cells escaped for '|'). */
export function table(header, rows) {
  const cell = (s) => String(s).replaceAll('|', '\\|').replaceAll('\n', ' ');
  const line = (r) => `| ${r.map(cell).join(' | ')} |`;
  return [line(header), `| ${header.map(() => '---').join(' | ')} |`, ...rows.map(line)].join('\n');
}

/** The footnote of transcribed figures: where each set was copied from (their `transcribed` fields). */
export function footnote(sources) {
  const list = [...new Set(sources.filter(Boolean))];
  if (list.length === 0) return [];
  return [
    '',
    `${DAGGER} Copied into the results file from ${list.join('; ')}: the run behind the figure was not kept as ` +
      'JSON. A new measurement replaces these rows.',
  ];
}
