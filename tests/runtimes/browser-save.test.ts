import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { CpuBackend } from '@polyhal/backend-cpu';
import { build } from 'esbuild';
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { requiredBackends } from '../support/backends.js';

// saveModel/loadModel and fromPixels in headless Chromium (Debian's /usr/bin/chromium driven by playwright-core),
// with the browser's real localStorage, IndexedDB, downloads, fetch, canvases and images: tests/runtimes/save-page/
// is bundled from the sources and served from 127.0.0.1 (an origin, so storage works) with a model file that
// Node saved here, which the page fetches.
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CHROMIUM = process.env['POLYHAL_CHROMIUM'] ?? '/usr/bin/chromium';
const out = join(root, 'tests/runtimes/output/save-page');

type SavePage = {
  roundTrip: (target: string, source?: string) => Promise<{ saved: number[]; loaded: number[]; eval: boolean }>;
  localStorageEntry: (name: string) => Promise<{ length: number; afterRemove: string | null }>;
  quota: () => Promise<{ name: string; message: string; stored: boolean }>;
  missing: () => Promise<string>;
  download: (name: string) => Promise<number>;
  fromBlob: (bytes: number[]) => Promise<{ saved: number[]; loaded: number[] }>;
  pixels: () => Promise<Record<string, { shape: number[]; dtype: string; values: number[] }>>;
};
const api = (p: Page) => p.evaluate.bind(p) as <R, A>(fn: (a: A) => R | Promise<R>, arg: A) => Promise<R>;
const call = <K extends keyof SavePage>(p: Page, key: K, ...args: Parameters<SavePage[K]>) =>
  api(p)(
    ([k, a]) =>
      (window as unknown as { polyhalSave: Record<string, (...x: unknown[]) => unknown> }).polyhalSave[k]!(...a),
    [key, args] as [string, unknown[]],
  ) as ReturnType<SavePage[K]>;

describe('saveModel, loadModel and fromPixels in headless Chromium', () => {
  let server: Server;
  let browser: Browser | undefined;
  let page: Page;
  let nodeModel: Uint8Array;
  let nodeOutput: number[];

  beforeAll(async () => {
    mkdirSync(out, { recursive: true });
    await build({
      entryPoints: [join(root, 'tests/runtimes/save-page/page.ts')],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      conditions: ['polyhal-source'],
      outfile: join(out, 'page.js'),
      logLevel: 'error',
      external: ['node:*', 'webgpu'],
    });
    // A model saved in Node, served for the page to fetch, with its output on the page's input.
    const be = new CpuBackend();
    const m = new ag.Sequential(new ag.Linear(4, 5, { backend: be, rng: 7 }), new ag.Tanh());
    nodeModel = await ag.saveModel(m.eval());
    nodeOutput = Array.from(await m.forward(ag.Tensor.fromArray(be, [0.5, -1, 2, 0.25, 1, 1, -0.5, 3], [2, 4])).data());
    const files: Record<string, [string, Uint8Array]> = {
      '/': ['text/html', readFileSync(join(root, 'tests/runtimes/save-page/index.html'))],
      '/page.js': ['text/javascript', readFileSync(join(out, 'page.js'))],
      '/node-model.safetensors': ['application/octet-stream', nodeModel],
    };
    server = createServer((req, res) => {
      const f = files[new URL(req.url ?? '/', 'http://x').pathname];
      res.writeHead(f ? 200 : 404, { 'Content-Type': f?.[0] ?? 'text/plain' });
      res.end(f?.[1] ?? 'not found');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    if (!existsSync(CHROMIUM)) return;
    const profile = mkdtempSync(join(tmpdir(), 'polyhal-chromium-'));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
      env: { ...process.env, XDG_CONFIG_HOME: profile, XDG_CACHE_HOME: profile },
    });
    page = await (await browser.newContext({ acceptDownloads: true })).newPage();
    page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
    await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    await page.waitForFunction(() => 'polyhalSave' in window);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    server?.close();
  });

  // Chromium is part of CI (.ci/run installs it): missing it there is a failure, never a skip.
  const need = (): Page | null => {
    expect(browser || !requiredBackends().length ? 'ok' : `${CHROMIUM} not found`).toBe('ok');
    return browser ? page : null;
  };

  test('localstorage:// and indexeddb://: the loaded model gives the saved one outputs bit for bit', async () => {
    const p = need();
    if (!p) return;
    for (const target of ['localstorage://mlp', 'indexeddb://mlp']) {
      const r = await call(p, 'roundTrip', target);
      expect(r.loaded).toHaveLength(6);
      expect(r.loaded).toEqual(r.saved);
      expect(r.eval).toBe(true);
    }
    // localStorage holds the file as base64 (4/3 of the bytes), under polyhal_models/NAME; removeModel clears it.
    const entry = await call(p, 'localStorageEntry', 'x');
    expect(entry.length % 4).toBe(0);
    expect(entry.length).toBeGreaterThan(4 * 8 * 4);
    expect(entry.afterRemove).toBeNull();
  });

  test('a model saved in Node loads in the page from an http:// URL and a relative path (fetch)', async () => {
    const p = need();
    if (!p) return;
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/node-model.safetensors`;
    // An absolute URL, and a plain path (relative to the page: a browser has no file system).
    for (const source of [url, 'node-model.safetensors']) {
      const r = await call(p, 'roundTrip', 'localstorage://unused', source);
      // The page's own model is different; the fetched one must reproduce Node's output (same JS kernels).
      expect(r.loaded).toHaveLength(nodeOutput.length);
      for (let i = 0; i < nodeOutput.length; i++) expect(Math.abs(r.loaded[i]! - nodeOutput[i]!)).toBeLessThan(1e-6);
    }
  });

  test('localStorage quota exceeded is a StorageQuotaError; a missing IndexedDB entry is named', async () => {
    const p = need();
    if (!p) return;
    const q = await call(p, 'quota');
    expect(q.name).toBe('StorageQuotaError');
    expect(q.message).toMatch(/localStorage's quota does not hold big \(9\d{6} bytes, 12\d{6} as base64\)/);
    expect(q.stored).toBe(false);
    expect(await call(p, 'missing')).toMatch(
      /InvalidArgumentError: loadModel: nothing is stored at indexeddb:\/\/never-saved/,
    );
  });

  test('downloads:// saves NAME.safetensors through the browser; the downloaded file loads from a Blob', async () => {
    const p = need();
    if (!p) return;
    const [dl, length] = await Promise.all([p.waitForEvent('download'), call(p, 'download', 'my-model')]);
    expect(dl.suggestedFilename()).toBe('my-model.safetensors');
    const path = join(out, 'my-model.safetensors');
    await dl.saveAs(path);
    const bytes = readFileSync(path);
    expect(bytes.length).toBe(length);
    const r = await call(p, 'fromBlob', Array.from(bytes));
    expect(r.loaded).toEqual(r.saved);
    // Node reads the downloaded file too: the architecture the page wrote.
    expect((await ag.readModelSpec(new Uint8Array(bytes))).model.children?.map(([, s]) => s.className)).toEqual([
      'Linear',
      'GELU',
      'LayerNorm',
      'Linear',
    ]);
  });

  test('fromPixels reads ImageData, a canvas, an OffscreenCanvas, an image and an ImageBitmap', async () => {
    const p = need();
    if (!p) return;
    const r = await call(p, 'pixels');
    // The pixels the page drew: i·40, 255 − i·30, (i·77) mod 256, 255 for pixel i of a 3 × 2 image.
    const rgba = Array.from({ length: 6 }, (_, i) => [i * 40, 255 - i * 30, (i * 77) % 256, 255]);
    const take = (c: number) => rgba.flatMap((px) => px.slice(0, c));
    expect(r['imageData']).toEqual({ shape: [2, 3, 4], dtype: 'int32', values: take(4) });
    expect(r['canvas']).toEqual({ shape: [2, 3, 3], dtype: 'int32', values: take(3) });
    expect(r['offscreen']).toEqual({ shape: [2, 3, 4], dtype: 'int32', values: take(4) });
    expect(r['image']).toEqual({ shape: [2, 3, 3], dtype: 'int32', values: take(3) });
    expect(r['bitmap']).toEqual({ shape: [2, 3, 1], dtype: 'float32', values: take(1) });
  });
});
