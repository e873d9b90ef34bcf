// node benches/onnx/models.mjs [--models det,rec,silero] [--engines all|name,...] [--rounds 3] [--scale 1]
//   [--machine <folder name>] [--out <file>] [--no-memory]
// PolyHAL's ONNX runtime beside its peers, in one process, on the same inputs (benches/onnx/inputs.mjs):
// PP-OCRv4 det (1×3×640×640), rec (1×3×48×320) and Silero VAD v5 (512-sample frames, state carried).
// Per model and engine: session-creation time, the first run, then timed runs in rounds whose engine order
// rotates (machine drift hits every engine alike); each engine's outputs are checked against onnxruntime-node's
// CPU provider on the same inputs. Each engine's block of timed runs starts with one untimed run: the engine
// that ran before may leave its threads spinning, and an engine's own threads may have gone to sleep (PP-OCRv4
// rec on wasm, 2 cores: the first run of a block took 35-66 ms where the others took 27-35). Peak memory comes
// from one child process per engine and model (the process's peak resident set, above its peak before the
// session was created: a whole process cannot tell two engines' allocations apart). Files one row per model
// and engine (each dated) into benches/results/<machine>/onnx-models.json (benches/lib/results.mjs: a row
// replaces the row of the same model and engine), or writes the whole run to --out; prints a table. Then:
// node scripts/results-docs.mjs.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { fileRows, machineKey } from '../lib/results.mjs';
import { ENGINES, WASM_THREADS } from './engines.mjs';
import { MODELS } from './inputs.mjs';

const REFERENCE = 'ort-node-cpu';
/** An engine agrees with the reference when no output differs by more than this anywhere. */
const AGREE = 1e-3;
/** Timed runs per engine per round, and outputs checked against the reference (Silero: frames in a row). */
const PLAN = {
  det: { iterations: 3, check: 1 },
  rec: { iterations: 10, check: 1 },
  silero: { iterations: 100, check: 64 },
};

const program = new Command()
  .name('onnx-models')
  .option('--models <names>', `comma list of ${Object.keys(MODELS).join(', ')}`, Object.keys(MODELS).join(','))
  .option('--engines <names>', `comma list of ${Object.keys(ENGINES).join(', ')}, or all`, 'all')
  .option('--rounds <n>', 'timing rounds (engine order rotates each round)', '3')
  .option('--scale <x>', 'multiplies the timed runs per round', '1')
  .option('--machine <name>', 'results folder under benches/results', machineKey())
  .option('--out <file>', 'write the whole run there instead of filing rows under benches/results')
  .option('--no-memory', 'skip the per-engine peak-memory child processes')
  .option('--probe <engine:model>', 'internal: one child process measuring peak memory')
  .exitOverride();
try {
  program.parse(process.argv.slice(2), { from: 'user' });
} catch {
  process.exit(2);
}
const o = program.opts();

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { median: q(0.5), p25: q(0.25), p75: q(0.75), min: s[0], n: s.length };
};
const mib = (kib) => Math.round((kib / 1024) * 10) / 10;
const round = (x, d = 2) => (x === null || x === undefined ? x : Math.round(x * 10 ** d) / 10 ** d);

/**
 * The process's peak resident set in KiB: Linux's VmHWM (getrusage's maxRSS carries the parent's peak across
 * exec, so a child would report its parent's), elsewhere maxRSS.
 */
function peakRss() {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]);
  } catch {
    /* not Linux */
  }
  return process.resourceUsage().maxRSS;
}

/** Child mode: load one engine, create one session, run 3 steps; print the peak RSS before and after. */
async function probe(spec) {
  const [engineName, modelName] = spec.split(':');
  const model = MODELS[modelName];
  const engine = await ENGINES[engineName].load();
  const bytes = readFileSync(model.file);
  const before = peakRss();
  const session = await engine.create(bytes);
  let previous;
  for (let step = 0; step < 3; step++) previous = await session.run(model.feeds(step, previous));
  const after = peakRss();
  await session.release();
  console.log(JSON.stringify({ peakBeforeMiB: mib(before), peakMiB: mib(after), sessionMiB: mib(after - before) }));
}

function memoryOf(engine, model) {
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--probe', `${engine}:${model}`], {
    encoding: 'utf8',
    timeout: 600_000,
  });
  const line = (r.stdout ?? '')
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .pop();
  if (r.status !== 0 || !line) return { error: (r.stderr || `exit ${r.status}`).trim().split('\n').pop() };
  return JSON.parse(line);
}

/** Per output: the largest and mean absolute difference from the reference over the checked steps. */
function compare(outs, ref) {
  const res = {};
  for (const name of Object.keys(ref[0])) {
    let max = 0;
    let sum = 0;
    let n = 0;
    for (let s = 0; s < ref.length; s++) {
      const a = outs[s][name]?.data;
      const r = ref[s][name].data;
      if (!a || a.length !== r.length) return { error: `output ${name}: missing or of another length` };
      for (let i = 0; i < a.length; i++) {
        const d = Math.abs(Number(a[i]) - Number(r[i]));
        if (!(d <= max)) max = Number.isNaN(d) ? Number.POSITIVE_INFINITY : d;
        sum += d;
        n++;
      }
    }
    res[name] = { maxAbsDiff: max, meanAbsDiff: sum / n };
  }
  return res;
}

async function bench() {
  const names = o.engines === 'all' ? Object.keys(ENGINES) : o.engines.split(',');
  const models = o.models.split(',');
  for (const n of names) if (!ENGINES[n]) throw new Error(`unknown engine '${n}' (known: ${Object.keys(ENGINES)})`);
  for (const m of models) if (!MODELS[m]) throw new Error(`unknown model '${m}' (known: ${Object.keys(MODELS)})`);
  const engines = {};
  const unavailable = {};
  for (const n of names) {
    try {
      engines[n] = await ENGINES[n].load();
    } catch (e) {
      unavailable[n] = String(e?.message ?? e).split('\n')[0];
      console.log(`${n}: unavailable: ${unavailable[n]}`);
    }
  }
  const out = {
    what: 'ONNX models: PolyHAL InferenceSession beside onnxruntime-web wasm and onnxruntime-node cpu/webgpu',
    date: new Date().toISOString(),
    machine: `${os.cpus()[0]?.model ?? 'cpu'} ×${os.cpus().length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`,
    node: process.versions.node,
    wasmThreads: WASM_THREADS,
    engines: Object.fromEntries(
      names.map((n) => [n, engines[n] ? { detail: engines[n].detail } : { unavailable: unavailable[n] }]),
    ),
    reference: REFERENCE,
    rounds: Number(o.rounds),
    models: {},
  };
  for (const m of models) {
    const model = MODELS[m];
    const plan = PLAN[m];
    const bytes = readFileSync(model.file);
    const rows = {};
    const live = {};
    const checked = {};
    for (const n of Object.keys(engines)) {
      try {
        const t0 = performance.now();
        const session = await engines[n].create(bytes);
        const createMs = performance.now() - t0;
        const outs = [];
        let previous;
        let firstRunMs = 0;
        for (let step = 0; step < plan.check; step++) {
          const t1 = performance.now();
          previous = await session.run(model.feeds(step, previous));
          if (step === 0) firstRunMs = performance.now() - t1;
          outs.push(previous);
        }
        live[n] = { session, step: plan.check, previous, times: [] };
        checked[n] = outs;
        rows[n] = { createMs: round(createMs), firstRunMs: round(firstRunMs) };
        console.log(`${m} ${n}: created in ${createMs.toFixed(0)} ms, first run ${firstRunMs.toFixed(1)} ms`);
      } catch (e) {
        rows[n] = { error: String(e?.message ?? e).split('\n')[0] };
        console.log(`${m} ${n}: ${rows[n].error}`);
      }
    }
    for (const n of Object.keys(live)) {
      rows[n].outputs = checked[REFERENCE] ? compare(checked[n], checked[REFERENCE]) : { error: 'no reference' };
      if (!rows[n].outputs.error) rows[n].agrees = Object.values(rows[n].outputs).every((c) => c.maxAbsDiff <= AGREE);
    }
    const order = Object.keys(live);
    const iterations = Math.max(1, Math.round(plan.iterations * Number(o.scale)));
    for (let r = 0; r < Number(o.rounds); r++)
      for (let k = 0; k < order.length; k++) {
        const n = order[(k + r) % order.length];
        const e = live[n];
        if (rows[n].error) continue;
        try {
          e.previous = await e.session.run(model.feeds(e.step++, e.previous)); // untimed: see the top comment
          for (let i = 0; i < iterations; i++) {
            const t = performance.now();
            e.previous = await e.session.run(model.feeds(e.step++, e.previous));
            e.times.push(performance.now() - t);
          }
        } catch (err) {
          rows[n].error = String(err?.message ?? err).split('\n')[0];
        }
      }
    for (const n of order) {
      if (!rows[n].error) {
        const s = stats(live[n].times);
        Object.assign(rows[n], { medianMs: round(s.median, 3), p25Ms: round(s.p25, 3), p75Ms: round(s.p75, 3) });
        Object.assign(rows[n], { minMs: round(s.min, 3), runs: s.n });
      }
      await live[n].session.release();
    }
    // ratio: the peer's median over PolyHAL's (above 1: PolyHAL is faster)
    for (const n of order) {
      const ours = ENGINES[n].peerOf;
      if (ours && rows[ours]?.medianMs && rows[n].medianMs)
        Object.assign(rows[ours], {
          peer: n,
          peerMedianMs: rows[n].medianMs,
          ratio: round(rows[n].medianMs / rows[ours].medianMs, 3),
        });
    }
    if (o.memory)
      for (const n of order) {
        rows[n].memory = memoryOf(n, m);
        console.log(`${m} ${n}: memory ${JSON.stringify(rows[n].memory)}`);
      }
    out.models[m] = { what: model.what, rows };
  }
  console.log(`\n${table(out)}`);
  if (o.out) {
    mkdirSync(dirname(o.out), { recursive: true });
    writeFileSync(o.out, `${JSON.stringify(out, null, 2)}\n`);
    console.log(`wrote ${o.out}`);
    return;
  }
  const rows = [];
  for (const [model, m] of Object.entries(out.models))
    for (const [config, r] of Object.entries(m.rows))
      rows.push({ model, config, date: out.date, what: m.what, detail: out.engines[config]?.detail, ...r });
  for (const model of Object.keys(out.models))
    for (const [config, e] of Object.entries(out.engines))
      if (e.unavailable) rows.push({ model, config, date: out.date, unavailable: e.unavailable });
  for (const r of rows) Object.assign(r, { node: out.node, wasmThreads: out.wasmThreads, reference: REFERENCE });
  const card = `${out.machine}; WebGPU adapter: ${await webgpuAdapter()}`;
  const file = fileRows(o.machine, 'onnx-models', rows, { entry: 'benches/onnx/models.mjs', card });
  console.log(`filed ${rows.length} rows in ${file}; now run node scripts/results-docs.mjs`);
}

/** The WebGPU adapter this machine gives the webgpu package (Dawn), in words. */
async function webgpuAdapter() {
  try {
    const { create } = await import('webgpu');
    const adapter = await create([]).requestAdapter();
    const i = adapter?.info;
    return i ? [i.vendor, i.architecture, i.device, i.description].filter(Boolean).join(' ') : 'none';
  } catch (e) {
    return `none (${String(e?.message ?? e).split('\n')[0]})`;
  }
}

/** A markdown table of the results: one row per model and engine. */
function table(out) {
  const lines = [
    '| model | engine | create ms | first run ms | median ms (p25–p75) | ratio | max abs diff | peak MiB |',
  ];
  lines.push('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const [m, { rows }] of Object.entries(out.models))
    for (const [n, r] of Object.entries(rows)) {
      if (r.error) {
        lines.push(`| ${m} | ${n} | ${r.error} |  |  |  |  |  |`);
        continue;
      }
      const diff =
        r.outputs?.error ?? Math.max(...Object.values(r.outputs ?? {}).map((c) => c.maxAbsDiff)).toExponential(1);
      const med = r.medianMs === undefined ? '' : `${r.medianMs} (${r.p25Ms}–${r.p75Ms})`;
      const ratio = r.ratio === undefined ? '' : `${r.ratio}× ${r.peer}`;
      const mem = r.memory?.sessionMiB ?? '';
      lines.push(`| ${m} | ${n} | ${r.createMs} | ${r.firstRunMs} | ${med} | ${ratio} | ${diff} | ${mem} |`);
    }
  return lines.join('\n');
}

if (o.probe) await probe(o.probe);
else await bench();
