// Results as data: one current file per machine and suite, benches/results/<machine>/<suite>.json; earlier
// measurements live in git history, not in folders of runs. Two shapes:
//   harness files (benches/suites/run.mjs): { machine, suite, entry, runs: [{ backend, date, host, device,
//     versions, rows }] }, one run per backend; a new run of a backend replaces its old one (a run of some rows,
//     BENCH_ROWS, is merged into it: rows then carry their own date, or `transcribed`).
//   probe files (benches/probes/*, filed by benches/lib/file-result.mjs): { machine, suite, entry, card, rows },
//     each row carrying its own date; a new row replaces the row of the same configuration (ROW_KEYS).
// Rows without a JSON record of their own carry `transcribed` (where their figures were copied from): a new
// measurement replaces them. docs/results/ is generated from these files by scripts/results-docs.mjs.
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_BACKENDS } from '@polyhal/hal';

/** benches/results of this checkout, or $POLYHAL_RESULTS_DIR (a copy elsewhere, as tests use). */
export const RESULTS_DIR =
  process.env['POLYHAL_RESULTS_DIR'] || join(dirname(fileURLToPath(import.meta.url)), '..', 'results');

/** The fields that tell one configuration's row from another's in a probe file (absent fields match absent). */
export const ROW_KEYS = [
  'config',
  'runtime',
  'model',
  'suite',
  'size',
  'build',
  'tile',
  'variant',
  'kernel',
  'check',
  'toggles',
  'compiled',
  'measure',
  'form',
  'output',
  'product',
  'path',
  'shape',
];

/** Backends in the order a harness file lists its runs. */
const BACKEND_ORDER = DEFAULT_BACKENDS.map((b) => b.name);

/**
 * The folder name of this machine under benches/results: $POLYHAL_BENCH_MACHINE, else `node-<cores>core`
 * (a GPU machine names itself, e.g. `--machine h100`: WebGPU's adapter info names the driver, not the card).
 */
export function machineKey(env = process.env) {
  return env['POLYHAL_BENCH_MACHINE'] || `node-${os.cpus().length}core`;
}

/** A machine or suite name: letters, digits, '.', '_' and '-' only (it becomes a path). */
function checkName(kind, name) {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) throw new Error(`bad ${kind} name '${name}'`);
}

/** The path of one results file. */
export function resultsPath(machine, suite, dir = RESULTS_DIR) {
  checkName('machine', machine);
  checkName('suite', suite);
  return join(dir, machine, `${suite}.json`);
}

/** A results file's contents, or null when there is none. */
export function readResults(machine, suite, dir = RESULTS_DIR) {
  const path = resultsPath(machine, suite, dir);
  return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : null;
}

/** Every results file under `dir`: [{ machine, suite, data }], machines and suites in name order. */
export function listResults(dir = RESULTS_DIR) {
  if (!existsSync(dir)) return [];
  const out = [];
  for (const machine of readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory())) {
    for (const f of readdirSync(join(dir, machine.name))
      .filter((n) => n.endsWith('.json'))
      .sort()) {
      const data = JSON.parse(readFileSync(join(dir, machine.name, f), 'utf8'));
      out.push({ machine: machine.name, suite: f.slice(0, -'.json'.length), data });
    }
  }
  return out.sort((a, b) => a.machine.localeCompare(b.machine) || a.suite.localeCompare(b.suite));
}

function write(path, data) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(data, null, 2)}\n`);
}

/**
 * Records one backend's run of a harness suite, replacing that backend's earlier run; with `merge` (a run of some
 * rows only, BENCH_ROWS) the earlier run's other rows stay, each row then dated. Returns the path.
 */
export function recordHarnessRun(machine, suite, run, { dir = RESULTS_DIR, merge = false } = {}) {
  const path = resultsPath(machine, suite, dir);
  const old = readResults(machine, suite, dir);
  const before = old?.runs?.find((r) => r.backend === run.backend);
  const runs = (old?.runs ?? []).filter((r) => r !== before);
  if (merge && before) {
    const key = (r) => `${r.name}\u0000${r.size}`;
    const fresh = new Map(run.rows.map((r) => [key(r), { ...r, date: run.date }]));
    const kept = (r) => (before.transcribed ? { transcribed: before.transcribed, ...r } : { date: before.date, ...r });
    const rows = before.rows.map((r) => fresh.get(key(r)) ?? kept(r));
    for (const [k, r] of fresh) if (!before.rows.some((o) => key(o) === k)) rows.push(r);
    runs.push({ ...run, rows });
  } else runs.push(run);
  const rank = (b) => (BACKEND_ORDER.includes(b) ? BACKEND_ORDER.indexOf(b) : BACKEND_ORDER.length);
  runs.sort((a, b) => rank(a.backend) - rank(b.backend) || a.backend.localeCompare(b.backend));
  write(path, { machine, suite, entry: 'benches/suites/run.mjs', runs });
  return path;
}

/** The configuration key of a probe row (ROW_KEYS' values). */
export const rowKey = (row) => JSON.stringify(ROW_KEYS.map((k) => row[k] ?? null));

/**
 * Files probe rows: each replaces the row of the same configuration (rowKey) in place, new ones are appended.
 * `meta` gives the file's entry (the probe's path) and card (the GPU or CPU the figures came from).
 */
export function fileRows(machine, suite, rows, meta, dir = RESULTS_DIR) {
  const path = resultsPath(machine, suite, dir);
  const old = readResults(machine, suite, dir);
  const kept = [...(old?.rows ?? [])];
  for (const row of rows) {
    const at = kept.findIndex((r) => rowKey(r) === rowKey(row));
    if (at >= 0) kept[at] = row;
    else kept.push(row);
  }
  const entry = meta.entry ?? old?.entry;
  const card = meta.card ?? old?.card;
  if (!entry || !card) throw new Error(`${path}: a probe file needs its entry and card`);
  write(path, { machine, suite, entry, card, rows: kept });
  return path;
}
