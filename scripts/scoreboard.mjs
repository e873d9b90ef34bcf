// Generates docs/CONFORMANCE.md — the scoreboard: op × dtype rows, one column per backend × runtime
// (Node, Deno, Bun, headless Chromium), each cell pass/FAIL with the largest ULP error — from fresh
// conformance runs.
//   node scripts/scoreboard.mjs          writes docs/CONFORMANCE.md (and docs/conformance.json)
//   node scripts/scoreboard.mjs --check  exits 1 if the committed file differs from a fresh run
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { matrix, runConformance, runOnnxNodeTests } from '@polyhal/conformance';
import { DEFAULT_BACKENDS } from '@polyhal/hal';

const root = process.cwd();
// The default set of KNOWN_BACKENDS (cpu, wasm, webgpu), each created with its defaults.
const BACKENDS = DEFAULT_BACKENDS.map((b) => b.name);
const factories = Object.fromEntries(DEFAULT_BACKENDS.map((b) => [b.name, async () => (await b.load()).create()]));

const results = [];
for (const b of BACKENDS) results.push({ ...(await runConformance(factories[b])), backend: b, runtime: 'Node' });
const tools = join(root, '.tools', 'node_modules');
const others = {
  Deno: [
    join(tools, '.bin', 'deno'),
    ['run', '-A', '--unstable-webgpu', 'tests/runtimes/conformance.mjs', '--full', ...BACKENDS],
  ],
  Bun: [join(tools, '.bin', 'bun'), ['tests/runtimes/conformance.mjs', '--full', ...BACKENDS]],
};
for (const [runtime, [bin, args]] of Object.entries(others)) {
  if (!existsSync(bin)) {
    console.error(`${runtime} not installed (node scripts/install-runtimes.mjs)`);
    process.exit(2);
  }
  const r = spawnSync(bin, args, {
    cwd: root,
    encoding: 'utf8',
    // One JSON line per backend of every case's result: over 1 MiB in all (spawnSync's default maxBuffer).
    maxBuffer: 256 * 2 ** 20,
    env: { ...process.env, POLYHAL_BUN_WEBGPU: join(tools, 'bun-webgpu', 'index.js') },
  });
  for (const line of r.stdout.split('\n').filter((l) => l.startsWith('{'))) {
    const x = JSON.parse(line);
    if (x.results) results.push({ ...x, runtime });
  }
}

// Headless Chromium (Debian's, through playwright-core) on the demo page.
{
  const { chromium } = await import('playwright-core');
  execFileSync(process.execPath, [join(root, 'demo/build.mjs')], { cwd: root });
  const { serve } = await import(join(root, 'demo/serve.mjs'));
  const server = await serve(0);
  const browser = await chromium.launch({
    executablePath: process.env.POLYHAL_CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--enable-unsafe-webgpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
  try {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    await page.waitForFunction(() => 'polyhalDemo' in window);
    for (const b of BACKENDS) {
      const r = await page.evaluate((name) => window.polyhalDemo.conformance(name), b);
      results.push({
        ...r.result,
        backend: b,
        runtime: `Chromium ${(r.runtime.match(/Chrome\/(\d+)/) ?? [])[1] ?? ''}`.trim(),
      });
    }
  } finally {
    await browser.close();
    server.close();
  }
}

// ONNX's backend node tests (Debian's libonnx-testdata), on every backend in Node.
const ONNX_DIR = '/usr/share/libonnx-testdata/data/node';
if (!existsSync(ONNX_DIR)) {
  console.error(`${ONNX_DIR} missing (Debian's libonnx-testdata: npm test's set-up installs it)`);
  process.exit(2);
}
const onnx = [];
for (const b of BACKENDS) onnx.push({ ...(await runOnnxNodeTests(factories[b], ONNX_DIR)), backend: b });
const onnxOps = [
  ...new Set(onnx.flatMap((r) => r.results.filter((t) => t.status !== 'not-expressible').map((t) => t.op))),
].sort();
const onnxCell = (r, op) => {
  const ts = r.results.filter((t) => t.op === op && t.status !== 'not-expressible');
  const failed = ts.filter((t) => t.status === 'failed').length;
  return failed ? `**FAIL** (${failed}/${ts.length})` : `pass · ${ts.length}`;
};
const onnxLines = [
  `## ONNX node tests (\`${ONNX_DIR}\`, Node)`,
  '',
  'Each single-node test whose op, attributes and dtypes the ONNX op table maps runs through the HAL and',
  "is compared with ONNX's expected outputs (`polyhal-conformance --onnx-node-tests`); the rest are not",
  'expressible yet (missing op, dtype or attribute, or a multi-node graph).',
  '',
  '| backend | tests | expressible | passed | failed | not expressible |',
  '|---|---|---|---|---|---|',
  ...onnx.map(
    (r) =>
      `| ${r.backend} | ${r.results.length} | ${r.passed + r.failed} | ${r.passed} | ${r.failed} | ` +
      `${r.notExpressible} |`,
  ),
  '',
  `| ONNX op | ${onnx.map((r) => r.backend).join(' | ')} |`,
  `|---|${onnx.map(() => '---').join('|')}|`,
  ...onnxOps.map((op) => `| ${op} | ${onnx.map((r) => onnxCell(r, op)).join(' | ')} |`),
  '',
  ...notExpressibleLines(onnx),
];

/**
 * What is not expressible, with the reason: one row per ONNX op and reason (the same on every backend,
 * since a mapping never depends on the backend; a difference is printed).
 */
function notExpressibleLines(runs) {
  const key = (t) => `${t.op}\u0000${t.kind}\u0000${t.reason}`;
  const groups = new Map();
  for (const t of runs[0].results.filter((x) => x.status === 'not-expressible'))
    groups.set(key(t), [...(groups.get(key(t)) ?? []), t.test]);
  const same = runs.every(
    (r) =>
      r.results
        .filter((x) => x.status === 'not-expressible')
        .map(key)
        .join() ===
      runs[0].results
        .filter((x) => x.status === 'not-expressible')
        .map(key)
        .join(),
  );
  const rows = [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
  return [
    '### Not expressible yet, and why',
    '',
    same
      ? `The same ${runs[0].notExpressible} tests on every backend, by ONNX op and reason ` +
        '(`graph`: a multi-node model).'
      : '**The backends differ in what is expressible** (the rows below are the first backend’s).',
    '',
    '| ONNX op | kind | reason | tests |',
    '|---|---|---|---|',
    ...rows.map(([k, tests]) => {
      const [op, kind, reason] = k.split('\u0000');
      return `| ${op || '(graph)'} | ${kind} | ${String(reason).replaceAll('|', '\\|')} | ${tests.length} |`;
    }),
    '',
  ];
}

const columns = results.map((r) => ({
  key: `${r.backend} · ${r.runtime.split(' ')[0]}`,
  cells: new Map(matrix(r).map((c) => [`${c.op}/${c.dtype}`, c])),
  r,
}));
const rows = [...new Set(columns.flatMap((c) => [...c.cells.keys()]))];
const lines = [
  '# Conformance scoreboard',
  '',
  'Generated by `node scripts/scoreboard.mjs` from fresh runs of the conformance suite against the float64',
  'oracle (CI checks that this file is up to date). Each cell: pass or FAIL, and the largest error in',
  "float32 ULPs over the op's cases (error contract rows: typed errors raised, nothing allocated, other",
  'arrays intact). Tolerances and domains: `packages/conformance/src/tolerances.ts`. n/a: a dtype the',
  'backend does not have (float64 on webgpu), refused with UnsupportedOpError as the HAL requires.',
  '',
  '| column | runtime | device | passed | failed |',
  '|---|---|---|---|---|',
  ...columns.map((c) => `| ${c.key} | ${c.r.runtime} | ${c.r.deviceName} | ${c.r.passed} | ${c.r.failed} |`),
  '',
  `| op / dtype | ${columns.map((c) => c.key).join(' | ')} |`,
  `|---|${columns.map(() => '---').join('|')}|`,
  ...rows.map(
    (k) =>
      `| ${k} | ${columns
        .map((c) => {
          const cell = c.cells.get(k);
          return !cell
            ? '—'
            : cell.failed
              ? `**FAIL** (${cell.failed}/${cell.cases})`
              : cell.unsupported === cell.cases
                ? 'n/a (UnsupportedOpError)'
                : `pass · ${cell.maxUlpError} ulp`;
        })
        .join(' | ')} |`,
  ),
  '',
  ...onnxLines,
];
const text = lines.join('\n');
const file = join(root, 'docs', 'CONFORMANCE.md');
if (process.argv.includes('--check')) {
  // Device descriptions (driver and runtime versions) may differ between machines; everything else must match.
  const normalize = (t) => t.replace(/^(\| [^|]+ \| [^|]+ \| )[^|]+( \| \d+ \| \d+ \|)$/gm, '$1DEVICE$2');
  const committed = existsSync(file) ? normalize(readFileSync(file, 'utf8')) : '';
  if (committed !== normalize(text)) {
    console.error('docs/CONFORMANCE.md is out of date: run `node scripts/scoreboard.mjs` and commit it');
    const a = committed.split('\n');
    const b = normalize(text).split('\n');
    for (let i = 0; i < Math.max(a.length, b.length); i++)
      if (a[i] !== b[i]) {
        console.error(`first difference, line ${i + 1}:\n- ${a[i]}\n+ ${b[i]}`);
        break;
      }
    process.exit(1);
  }
  console.log('docs/CONFORMANCE.md is up to date');
} else {
  mkdirSync(join(root, 'docs'), { recursive: true });
  writeFileSync(file, text);
  writeFileSync(
    join(root, 'docs', 'conformance.json'),
    JSON.stringify(
      results.map((r) => ({ backend: r.backend, runtime: r.runtime, deviceName: r.deviceName, results: r.results })),
      null,
      1,
    ),
  );
  console.log(`wrote ${file}`);
}
process.exit(0);
