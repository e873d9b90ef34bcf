// Dataset.mapParallel on a browser's Web Workers (headless Chromium, Debian's /usr/bin/chromium driven by
// playwright-core): @polyhal/autograd bundled from the sources for the browser, served from 127.0.0.1. Results in
// order, a DatasetWorkerError naming the sample, and no worker left after a pass or an early break.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { build } from 'esbuild';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { requiredBackends } from '../support/backends.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CHROMIUM = process.env['POLYHAL_CHROMIUM'] ?? '/usr/bin/chromium';
let server: Server;
let browser: Browser | undefined;

beforeAll(async () => {
  const bundle = await build({
    stdin: { contents: "import * as ag from '@polyhal/autograd'; window.ag = ag;", resolveDir: root },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    conditions: ['polyhal-source'],
    external: ['node:*', 'webgpu'],
    write: false,
    logLevel: 'error',
  });
  const js = bundle.outputFiles[0]!.text;
  server = createServer((req, res) => {
    const script = req.url === '/ag.js';
    res.writeHead(200, { 'Content-Type': script ? 'text/javascript' : 'text/html' });
    res.end(script ? js : '<script type="module" src="/ag.js"></script>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  if (existsSync(CHROMIUM))
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  server?.close();
});

test('mapParallel in Web Workers: ordered results, typed errors, workers ended', async () => {
  // Chromium is part of CI (.ci/run installs it): missing it there is a failure, never a skip.
  expect(browser || !requiredBackends().length ? 'ok' : `${CHROMIUM} not found`).toBe('ok');
  if (!browser) return;
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  await page.waitForFunction(() => 'ag' in window);
  const out = await page.evaluate(async () => {
    const ag = (window as unknown as { ag: typeof import('@polyhal/autograd') }).ag;
    const ds = ag.Dataset.fromArray([0, 1, 2, 3, 4, 5, 6, 7].map((x) => ({ x })));
    const squares = await ds.mapParallel((s: { x: number }) => Float32Array.of(s.x * s.x), { workers: 2 }).toArray();
    const afterPass = ag.liveDatasetWorkers();
    const failing = (s: { x: number }) => {
      if (s.x === 4) throw new TypeError('no');
      return s;
    };
    const error = await ds
      .mapParallel(failing, { workers: 2 })
      .toArray()
      .then(
        () => null,
        (e: { name: string; index: number; causeName: string }) => [e.name, e.index, e.causeName],
      );
    let n = 0;
    for await (const _ of ds.mapParallel((s: { x: number }) => s, { workers: 2 })) if (++n === 2) break;
    return { squares: squares.map((a) => Array.from(a)), afterPass, error, afterBreak: ag.liveDatasetWorkers() };
  });
  expect(out).toEqual({
    squares: [0, 1, 2, 3, 4, 5, 6, 7].map((x) => [x * x]),
    afterPass: 0,
    error: ['DatasetWorkerError', 4, 'TypeError'],
    afterBreak: 0,
  });
  await page.close();
});
