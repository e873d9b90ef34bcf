import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { requiredBackends } from '../support/backends.js';
import { createProject, installOffline, PUBLISHED, packAll, type Packed } from './project.js';
import { readmeExamples } from './readme.js';
import { serveDir } from './serve.js';

// The packages as a library author gets them: `npm pack` of every published workspace, installed from
// the tarballs into an empty project in the OS temp folder — offline, nothing downloaded — then used
// from ESM, CommonJS, TypeScript 5.9 and 6 (strict, no skipLibCheck, with and without the DOM lib),
// an esbuild browser bundle and a webpack bundle with no configuration, loaded in headless Chromium.
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CHROMIUM = process.env['POLYHAL_CHROMIUM'] ?? '/usr/bin/chromium';
const BACKENDS = ['cpu', 'wasm', 'webgpu'];
const MATMUL = [19, 22, 43, 50]; // [[1,2],[3,4]]·[[5,6],[7,8]]
const TSC: Record<string, string> = {
  '5.9': join(root, 'tests/packaging/node_modules/typescript/bin/tsc'),
  '6': join(root, 'node_modules/typescript/bin/tsc'),
};

type BackendResult = { device?: string; values?: number[]; error?: string };
type Run = { status: number | null; stdout: string; stderr: string };

describe('packaging: the published tarballs in an empty consumer project', () => {
  let dir = '';
  let packed: Packed[] = [];
  const env = (): NodeJS.ProcessEnv => {
    const e: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_OPTIONS: '',
      NO_COLOR: '1',
      DENO_NO_UPDATE_CHECK: '1',
      npm_config_offline: 'true',
      npm_config_registry: 'http://127.0.0.1:9/',
    };
    delete e['POLYHAL_BACKEND'];
    return e;
  };
  const run = (cmd: string, args: string[], timeout = 120_000): Run => {
    const r = spawnSync(cmd, args, { cwd: dir, env: env(), encoding: 'utf8', timeout });
    return { status: r.status, stdout: r.stdout ?? '', stderr: `${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
  };
  // Every backend computes the matmul, or (only where the run does not require it) reports why it cannot start.
  const expectBackends = (out: Record<string, BackendResult>, where: string): void => {
    const required = requiredBackends();
    for (const name of BACKENDS) {
      const r = out[name]!;
      if (r.values || required.includes(name)) expect({ name, where, ...r }).toMatchObject({ name, values: MATMUL });
      else expect(r.error).toMatch(/BackendUnavailableError/);
    }
  };

  // Each bundler runs once (the browser tests need the bundles too, also when run alone with -t).
  const bundles = new Map<string, Run>();
  const bundle = (bundler: 'esbuild' | 'webpack'): Run => {
    if (!bundles.has(bundler)) {
      bundles.set(
        bundler,
        bundler === 'esbuild'
          ? run(join(root, 'node_modules/.bin/esbuild'), [
              'src/index.js',
              '--bundle',
              '--platform=browser',
              '--outfile=out/esbuild.js',
              '--log-level=warning',
            ])
          : run(process.execPath, [join(root, 'node_modules/webpack-cli/bin/cli.js')]),
      );
    }
    return bundles.get(bundler)!;
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'polyhal-consumer-'));
    packed = packAll(root, join(dir, 'tarballs'));
    createProject(root, dir, packed, ['webgpu']);
    cpSync(join(root, 'tests/packaging/consumer'), dir, { recursive: true });
    installOffline(dir);
  }, 120_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('each tarball holds package.json, README.md, LICENSE and its build only (no sources, no tests)', () => {
    for (const p of packed) {
      const stray = p.files.filter(
        (f) =>
          !['package.json', 'README.md', 'LICENSE'].includes(f) &&
          !f.startsWith('dist/') &&
          !(p.manifest.bin && f.startsWith('bin/')),
      );
      expect({ name: p.name, stray }).toEqual({ name: p.name, stray: [] });
      expect(p.files.filter((f) => /(^|\/)(src|tests?)\/|\.test\.|tsbuildinfo/.test(f))).toEqual([]);
      expect(p.files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'LICENSE']));
      // every file the package points at (exports conditions other than the repository's own source
      // condition, bin) is inside
      const m = JSON.parse(readFileSync(join(root, p.dir, 'package.json'), 'utf8')) as {
        exports?: unknown;
        main?: string;
        module?: string;
        types?: string;
        bin?: Record<string, string>;
      };
      const targets = new Set<string>();
      const walk = (v: unknown, key = ''): void => {
        if (typeof v === 'string') {
          if (key !== 'polyhal-source') targets.add(v.replace(/^\.\//, ''));
        } else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
      };
      walk([m.exports, m.main, m.module, m.types, m.bin]);
      expect([...targets].filter((t) => !p.files.includes(t))).toEqual([]);
    }
  });

  test('manifests are publishable: not private, MIT, caret ranges between the packages, engines, keywords', () => {
    for (const p of packed) {
      const m = JSON.parse(readFileSync(join(dir, 'node_modules', p.name, 'package.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      expect({
        name: p.name,
        private: m['private'],
        license: m['license'],
        node: (m['engines'] as Record<string, string> | undefined)?.['node'],
      }).toEqual({ name: p.name, private: undefined, license: 'MIT', node: '>=20' });
      expect((m['keywords'] as string[]).length).toBeGreaterThan(0);
      for (const field of ['dependencies', 'peerDependencies']) {
        for (const [dep, range] of Object.entries((m[field] ?? {}) as Record<string, string>)) {
          if (dep.startsWith('@polyhal/'))
            expect(`${p.name} ${field} ${dep}@${range}`).toBe(`${p.name} ${field} ${dep}@^${p.version}`);
        }
      }
      expect(readFileSync(join(dir, 'node_modules', p.name, 'LICENSE'), 'utf8')).toContain(
        'Copyright (c) 2026 The PolyHAL authors',
      );
    }
  });

  test('the install took nothing from a registry: npm ci --offline against a closed port, from the lockfile', () => {
    const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { resolved?: string }>;
    };
    for (const p of packed)
      expect(lock.packages[`node_modules/${p.name}`]!.resolved).toBe(`file:tarballs/${p.filename}`);
    expect(existsSync(join(dir, 'node_modules/@polyhal/backend-webgpu/dist/index.js'))).toBe(true);
    expect(existsSync(join(dir, 'node_modules/.bin/polyhal'))).toBe(true);
    expect(existsSync(join(dir, 'node_modules/.bin/polyhal-conformance'))).toBe(true);
  });

  test('the installed commands run: npx polyhal-conformance and npx polyhal (the main job)', () => {
    const conf = run('npx', ['--offline', 'polyhal-conformance', '--backend', 'cpu', '--filter', 'matmul']);
    expect(conf.status === 0 ? 'ok' : conf.stderr).toBe('ok');
    expect(conf.stdout).toMatch(/matmul\s+float32\s+pass/);
    const job = run('npx', [
      '--offline',
      'polyhal',
      '--backend',
      'cpu',
      '--epochs',
      '1',
      '--train',
      '512',
      '--test',
      '256',
    ]);
    expect(job.status === 0 ? 'ok' : job.stderr).toBe('ok');
    expect(job.stdout).toMatch(/test accuracy: 0\.\d+ \(backend: cpu\)/);
  });

  test.each([
    ['ESM', 'esm.mjs'],
    ['CommonJS', 'cjs.cjs'],
  ])('a %s script computes on every backend, runs conformance and a gradient', (_kind, script) => {
    const r = run(process.execPath, [script]);
    expect(r.status === 0 ? 'ok' : r.stderr).toBe('ok');
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    expect([...(out['registered'] as string[])].sort()).toEqual(BACKENDS);
    expectBackends(out as Record<string, BackendResult>, script);
    expect(out['conformance']).toMatchObject({ failed: 0 });
    expect((out['conformance'] as { passed: number }).passed).toBeGreaterThan(5);
    expect(out['grad']).toEqual([2, 4, 6]);
  });

  // Deno and Bun load the same installed packages (Deno through node_modules, next to package.json).
  const TOOLS = join(root, '.tools/node_modules/.bin');
  test.each([
    { label: 'Deno runs esm.mjs', bin: 'deno', args: ['run', '-A', '--unstable-webgpu', 'esm.mjs'] },
    { label: 'Bun runs esm.mjs', bin: 'bun', args: ['esm.mjs'] },
    { label: 'Bun runs cjs.cjs', bin: 'bun', args: ['cjs.cjs'] },
  ])('$label: every backend, conformance, a gradient', ({ bin, args }) => {
    const exe = join(TOOLS, bin);
    // installed by npm test's pretest; in CI a missing runtime is a failure, never a skip
    if (!existsSync(exe) && !requiredBackends().length) return;
    const r = run(exe, args);
    expect(r.status === 0 ? 'ok' : `${r.stdout}${r.stderr}`).toBe('ok');
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, BackendResult> & { grad: number[] };
    expectBackends(out, `${bin} ${args.join(' ')}`);
    expect(out.grad).toEqual([2, 4, 6]);
  });

  const tscCases = Object.keys(TSC).flatMap((ts) =>
    ['nodenext', 'bundler'].flatMap((resolution) =>
      [['es2022'], ['es2022', 'dom']].map((lib) => [ts, resolution, lib.join(',')] as const),
    ),
  );
  test.each(tscCases)(
    'TypeScript %s, moduleResolution %s, lib %s: the declarations compile (strict, no skipLibCheck)',
    (ts, resolution, lib) => {
      const r = run(process.execPath, [TSC[ts]!, '-p', `tsconfig.${resolution}.json`, '--lib', lib]);
      expect(`${r.stdout}${r.stderr}`.trim()).toBe('');
      expect(r.status).toBe(0);
    },
  );

  test('esbuild bundles the packages for the browser with no configuration (--bundle --platform=browser)', () => {
    const r = bundle('esbuild');
    expect(r.stderr.trim()).toBe(''); // no warnings either
    expect(r.status).toBe(0);
  });

  test('webpack 5 bundles the packages with no configuration (./src/index.js → dist/main.js)', () => {
    expect(existsSync(join(dir, 'webpack.config.js'))).toBe(false);
    const r = bundle('webpack');
    const out = `${r.stdout}${r.stderr}`;
    expect(r.status === 0 ? 'ok' : out).toBe('ok');
    // allowed: no `mode` set (there is no configuration at all) and the advisory size hints; never
    // an unresolved module or an expression webpack cannot follow ("Critical dependency")
    const warnings = [...out.matchAll(/^WARNING in (.*)$/gm)].map((m) => m[1]!);
    expect(
      warnings.filter(
        (w) => !/^(configuration|asset size limit|entrypoint size limit|webpack performance recommendations)/.test(w),
      ),
    ).toEqual([]);
    expect(existsSync(join(dir, 'dist/main.js'))).toBe(true);
  }, 120_000);

  describe('the bundles in headless Chromium', () => {
    let server: Server | undefined;
    let browser: Browser | undefined;
    let profile = '';
    beforeAll(async () => {
      if (!existsSync(CHROMIUM)) return;
      server = await serveDir(dir);
      profile = mkdtempSync(join(tmpdir(), 'polyhal-chromium-'));
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: [
          '--no-sandbox',
          '--enable-unsafe-webgpu',
          '--disable-gpu-sandbox',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
          '--no-first-run',
          '--disable-quic',
        ],
        env: { ...process.env, XDG_CONFIG_HOME: profile, XDG_CACHE_HOME: profile },
      });
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
      server?.close();
      if (profile) rmSync(profile, { recursive: true, force: true });
    });

    test.each([
      ['webpack', 'webpack.html'],
      ['esbuild', 'esbuild.html'],
    ])(
      'the %s bundle runs one op on every backend (webgpu: SwiftShader)',
      async (bundler, html) => {
        // Chromium is part of CI: missing it there is a failure, never a skip.
        if (!browser && !requiredBackends().length) return;
        expect(browser ? 'ok' : `Chromium unavailable: ${CHROMIUM} not found`).toBe('ok');
        expect(bundle(bundler as 'esbuild' | 'webpack').status).toBe(0);
        const page = await browser!.newPage();
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(e.message));
        await page.goto(`http://127.0.0.1:${(server!.address() as AddressInfo).port}/${html}`);
        await page.waitForFunction(() => 'polyhalResult' in window, undefined, { timeout: 30_000 });
        const out = (await page.evaluate(
          () => (window as unknown as { polyhalResult: Promise<unknown> }).polyhalResult,
        )) as Record<string, BackendResult> & { registered: string[] };
        await page.close();
        if (process.env['POLYHAL_PACKAGING_VERBOSE']) console.log(html, JSON.stringify(out));
        expect(errors).toEqual([]);
        expect([...out.registered].sort()).toEqual(BACKENDS);
        expectBackends(out, html);
        expect(out['webgpu']!.values ? out['webgpu']!.device : 'SwiftShader').toMatch(/SwiftShader/i);
      },
      60_000,
    );
  });

  test.each(PUBLISHED)(
    'the README of %s (as installed) has an example, and it runs',
    (pkgDir) => {
      const name = (JSON.parse(readFileSync(join(root, pkgDir, 'package.json'), 'utf8')) as { name: string }).name;
      const examples = readmeExamples(readFileSync(join(dir, 'node_modules', name, 'README.md'), 'utf8'));
      expect(examples.length).toBeGreaterThan(0);
      examples.forEach((ex, i) => {
        let r: Run;
        if (ex.kind === 'module') {
          const file = `readme-${name.replace(/\W/g, '-')}-${i}.mjs`;
          writeFileSync(join(dir, file), ex.code);
          r = run(process.execPath, [file]);
        } else r = run('sh', ['-c', ex.code]);
        if (process.env['POLYHAL_PACKAGING_VERBOSE']) console.log(`${name} example ${i + 1}:\n${r.stdout}${r.stderr}`);
        // the webgpu example needs an adapter: where the run does not require one, its absence is reported
        const unavailable =
          name === '@polyhal/backend-webgpu' &&
          !requiredBackends().includes('webgpu') &&
          /BackendUnavailableError/.test(r.stderr);
        expect(
          r.status === 0 || unavailable
            ? 'ok'
            : `${name} README example ${i + 1} failed:\n${ex.code}\n${r.stdout}\n${r.stderr}`,
        ).toBe('ok');
      });
    },
    180_000,
  );
});
