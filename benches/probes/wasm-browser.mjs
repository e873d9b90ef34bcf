// @polyhal/backend-wasm vs @tensorflow/tfjs-backend-wasm 4.22.0 in headless Chromium (Debian's
// /usr/bin/chromium, or POLYHAL_CHROMIUM), one page, same inputs: the cases of benches/probes/wasm-cases.mjs on
// 1 thread, then matmul 1024 on 2 threads (tfjs-wasm's threaded build on the page, PolyHAL inside a
// dedicated Worker). The page is served cross-origin isolated from 127.0.0.1; nothing is downloaded.
//   npm run build && node benches/probes/wasm-browser.mjs      # BENCH_JSON=out.json to also write the rows
//   BENCH_OPTIONS='{"sizes":[256],"elementwise":[1048576]}' node benches/probes/wasm-browser.mjs   # fewer cases
import { build } from 'esbuild';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { machine, versions } from '../lib/harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const out = mkdtempSync(join(tmpdir(), 'polyhal-wasm-bench-'));
const tfjsDist = dirname(
  createRequire(import.meta.url).resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm'),
);
for (const name of ['wasm-page', 'wasm-worker']) {
  await build({
    entryPoints: [join(here, 'browser', `${name}.mjs`)],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    outfile: join(out, `${name.slice(5)}.js`),
    logLevel: 'error',
    external: ['node:*'],
  });
}
for (const f of ['tfjs-backend-wasm.wasm', 'tfjs-backend-wasm-simd.wasm', 'tfjs-backend-wasm-threaded-simd.wasm'])
  copyFileSync(join(tfjsDist, f), join(out, f));
writeFileSync(
  join(out, 'index.html'),
  '<!doctype html><meta charset="utf-8"><title>PolyHAL wasm benchmark</title><script type="module" ' +
    'src="page.js"></script>',
);

const types = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm' };
const server = createServer((req, res) => {
  // setWasmPaths('/tfjs/') in the page: tfjs's files are served from the same folder.
  const path =
    normalize(new URL(req.url ?? '/', 'http://x').pathname)
      .replace(/^\/+/, '')
      .replace(/^tfjs\//, '') || 'index.html';
  try {
    const body = readFileSync(join(out, path));
    res.writeHead(200, {
      'Content-Type': types[extname(path)] ?? 'application/octet-stream',
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Embedder-Policy': 'require-corp',
    });
    res.end(body);
  } catch {
    res.writeHead(404);
    res.end();
  }
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const browser = await chromium.launch({
  executablePath: process.env.POLYHAL_CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
});
const results = [];
let userAgent = '';
try {
  const open = async () => {
    const page = await browser.newPage();
    page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
    page.on('console', (m) => m.type() === 'error' && !m.text().includes('404') && console.error(`page: ${m.text()}`));
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    await page.waitForFunction(() => 'polyhalBench' in window);
    return page;
  };
  let page = await open();
  userAgent = await page.evaluate(() => window.polyhalBench.userAgent);
  console.log(
    `${machine()}; ${userAgent}; cross-origin isolated: ` +
      `${await page.evaluate(() => window.polyhalBench.crossOriginIsolated)}`,
  );
  const single = await page.evaluate(
    (o) => window.polyhalBench.single(o),
    JSON.parse(process.env.BENCH_OPTIONS ?? '{}'),
  );
  for (const [k, d] of Object.entries(single.devices)) console.log(`polyhal-${k}: ${d}`);
  for (const l of single.lines) console.log(l);
  results.push(...single.rows);
  await page.close();
  page = await open(); // a fresh page: tfjs-wasm reads its thread flag once per page
  const t = await page.evaluate(() => window.polyhalBench.threads());
  console.log(
    `matmul ${t.size}, 2 threads: polyhal ${t.polyhalMs.toFixed(2)} ms ` +
      `(${t.polyhalGflops.toFixed(1)} GFLOP/s; ${t.device}), tfjs-wasm threaded (${t.tfjsThreads} ` +
      `threads) ${t.tfjsMs.toFixed(2)} ms (${t.tfjsGflops.toFixed(1)} GFLOP/s), ratio ` +
      `${t.ratio.toFixed(2)}x (median of ${t.rounds} round ratios)`,
  );
  results.push({ suite: 'matmul-2-threads', build: 'auto', ...t });
} finally {
  await browser.close();
  server.close();
  rmSync(out, { recursive: true, force: true });
}
if (process.env.BENCH_JSON)
  writeFileSync(
    process.env.BENCH_JSON,
    JSON.stringify({ machine: machine(), versions: { ...versions(), browser: userAgent }, results }, null, 2),
  );
