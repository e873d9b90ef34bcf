// Files a probe's JSON output (benches/probes/*: `--json out.json`, BENCH_JSON=out.json, or JSON lines) into
// benches/results/<machine>/<suite>.json as rows (lib/results.mjs): a row replaces the row of the same
// configuration, so the file holds each configuration's latest measurement. Then regenerate the pages:
// node scripts/results-docs.mjs.
//   node benches/lib/file-result.mjs out.json --machine h100 --suite webgpu-int8-matmul \
//     [--entry benches/probes/webgpu-int8-matmul.ts] [--card 'NVIDIA H100 80GB HBM3, driver 580.159.04'] \
//     [--set config='robustness off'] [--set date=2026-11-23T19:41:41Z] [--whole]
// Rows come from the output's `rows` or `results` (its other top-level fields copied into each row; `machine`,
// the host's description, as `host`), from its lines (JSON lines), from one object per model (gpu-quantized),
// or, with --whole, the output as one row. --set sets a field of every row (e.g. the configuration a run used
// that its output does not name); a row without a date gets --set date or the time of filing.
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { fileRows, RESULTS_DIR } from './results.mjs';

/** The rows of one probe output; `whole`: the output is one row. */
export function rowsOf(raw, { whole = false } = {}) {
  if (Array.isArray(raw)) return raw;
  if (whole) return [raw];
  const list = raw.rows ?? raw.results;
  if (Array.isArray(list)) {
    const top = Object.entries(raw).filter(([k]) => k !== 'rows' && k !== 'results');
    const shared = Object.fromEntries(top.map(([k, v]) => [k === 'machine' ? 'host' : k, v]));
    return list.map((r) => ({ ...shared, ...r }));
  }
  const values = Object.values(raw);
  if (values.length > 0 && values.every((v) => v !== null && typeof v === 'object' && !Array.isArray(v)))
    return Object.entries(raw).map(([model, r]) => ({ model, ...r }));
  return [raw];
}

/** Parses a probe's output file: one JSON document, or JSON lines. */
export function parseOutput(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l));
  }
}

/** `key=value` → [key, value]; numbers and booleans parsed, the rest kept as strings. */
function setting(s) {
  const at = s.indexOf('=');
  if (at <= 0) throw new Error(`--set takes key=value, not '${s}'`);
  const [key, text] = [s.slice(0, at), s.slice(at + 1)];
  const value = /^-?\d+(\.\d+)?$/.test(text)
    ? Number(text)
    : text === 'true' || text === 'false'
      ? text === 'true'
      : text;
  return [key, value];
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const program = new Command()
    .name('file-result')
    .argument('<output>', "the probe's JSON output")
    .requiredOption('--machine <name>', 'folder under benches/results (node-2core, h100, h200, ...)')
    .requiredOption('--suite <name>', 'the results file, usually the probe name (webgpu-matmul, ...)')
    .option('--entry <path>', 'the probe that measured (needed for a new file)')
    .option('--card <text>', 'the GPU or CPU the figures came from (needed for a new file)')
    .option('--set <key=value>', 'a field added to every row', (v, acc) => [...acc, setting(v)], [])
    .option('--whole', 'the output is one row')
    .option('--dir <path>', 'results root', RESULTS_DIR)
    .exitOverride();
  try {
    program.parse(process.argv.slice(2), { from: 'user' });
  } catch {
    process.exit(2);
  }
  const o = program.opts();
  const set = Object.fromEntries(o.set);
  const now = new Date().toISOString();
  try {
    const raw = parseOutput(readFileSync(program.args[0], 'utf8'));
    const rows = rowsOf(raw, { whole: o.whole }).map((r) => ({ ...r, ...set, date: r.date ?? set.date ?? now }));
    const path = fileRows(o.machine, o.suite, rows, { entry: o.entry, card: o.card }, o.dir);
    console.log(`${path}: ${rows.length} rows filed; now run node scripts/results-docs.mjs`);
  } catch (e) {
    console.error(`file-result: ${e.message}`);
    process.exit(1);
  }
}
