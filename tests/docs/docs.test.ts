import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';
import { blocksOf, CODE_LANGS, commandsOf, run, runCodeBlock, runCommand } from './blocks.js';

// README.md is the front door (at most 12 KB); docs/ holds the rest. Every ts/js/sh block of docs/**/*.md runs
// as README's do (tests/docs/blocks.ts), every relative link resolves, the generated main job table is in
// sync with its records, and the install the guide describes (npm pack tarballs) works.
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');
const pagesUnder = (dir: string): string[] =>
  readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? pagesUnder(`${dir}/${e.name}`) : e.name.endsWith('.md') ? [`${dir}/${e.name}`] : [],
  );
const pages = pagesUnder('docs').sort();
// README's two set-up commands run in readme.test.ts (and CI); the guide that explains them does not rerun them.
const README_SETUP = new Set(['npm ci && npm start', 'npm test']);

test('README.md is a front door: at most 12 KB, the two set-up commands and an example of at most 20 lines', () => {
  expect(statSync(join(root, 'README.md')).size).toBeLessThanOrEqual(12 * 1024);
  const blocks = blocksOf(read('README.md'));
  expect(blocks.filter((b) => b.lang === 'sh').map((b) => b.code.trim())).toEqual([...README_SETUP]);
  const examples = blocks.filter((b) => CODE_LANGS.includes(b.lang));
  expect(examples.length).toBeGreaterThanOrEqual(1);
  expect(examples[0]!.code.trimEnd().split('\n').length).toBeLessThanOrEqual(20);
});

describe.each(pages.map((p) => [p]))('%s: code blocks run as written', (page) => {
  const blocks = blocksOf(read(page));
  const code = blocks.filter((b) => CODE_LANGS.includes(b.lang) && !b.excerptOf && !b.notRun);
  const excerpts = blocks.filter((b) => b.excerptOf);
  const commands = commandsOf(blocks).filter(([, c]) => !README_SETUP.has(c));

  test('blocks left out say why: an excerpt is verbatim in the file it names, a block not run gives a reason', () => {
    for (const b of excerpts)
      expect({ line: b.line, verbatim: read(b.excerptOf!).includes(b.code) }).toEqual({
        line: b.line,
        verbatim: true,
      });
    for (const b of blocks.filter((x) => x.notRun !== undefined)) expect(b.notRun!.length).toBeGreaterThan(5);
  });
  if (code.length)
    test.each(code.map((b) => [b.line, b] as const))(`code block at ${page}:%i`, (_line, block) =>
      runCodeBlock(root, block),
    );
  if (commands.length)
    test.each(commands)(`command at ${page}:%i: %s`, (_line, command) => void runCommand(root, command), 300_000);
});

// GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens.
const anchors = (text: string) =>
  new Set(
    [...text.matchAll(/^#+ (.+)$/gm)].map((m) =>
      m[1]!
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-'),
    ),
  );

test('every relative link of README.md and docs/ leads to an existing file (and heading)', () => {
  const broken: string[] = [];
  let links = 0;
  for (const file of ['README.md', ...pages]) {
    const text = read(file).replace(/^```[\s\S]*?^```$/gm, '');
    for (const m of text.matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/i.test(target)) continue;
      links++;
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const resolved = path ? relative(root, join(root, dirname(file), path)) : file;
      if (!existsSync(join(root, resolved))) broken.push(`${file}: ${target} (no ${resolved})`);
      else if (anchor && resolved.endsWith('.md') && !anchors(read(resolved)).has(anchor))
        broken.push(`${file}: ${target} (no heading #${anchor} in ${resolved})`);
    }
  }
  expect(broken).toEqual([]);
  expect(links).toBeGreaterThan(10);
});

// The main job's figures come from recorded runs (benches/results/<machine>/main-job-*.json, written by
// `polyhal --json`), through scripts/main-job-figures.mjs into docs/guide/getting-started.md: a hand-edited figure
// fails here.
test("the getting-started guide's main job figures are generated from the recorded runs", () => {
  const r = run(root, process.execPath, ['scripts/main-job-figures.mjs', '--check']);
  expect(r.status === 0 ? 'up to date' : `${r.stdout}\n${r.stderr}`.trim()).toBe('up to date');
  const page = read('docs/guide/getting-started.md');
  const records = readdirSync(join(root, 'benches/results'), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) =>
      readdirSync(join(root, 'benches/results', d.name))
        .filter((n) => n.startsWith('main-job-') && n.endsWith('.json'))
        .map((n) => `${d.name}/${n}`),
    );
  expect(records.length).toBeGreaterThan(0);
  for (const f of records) {
    const { runs } = JSON.parse(read(`benches/results/${f}`));
    for (const rec of runs) expect(page).toMatch(new RegExp(`\\| +${rec.testAccuracy.toFixed(4)} \\|`));
    expect(page).toContain(`](../../benches/results/${f})`);
  }
});

// The install the getting-started guide describes: `npm pack` tarballs, installed by path into a project. The
// packages without third-party dependencies install offline here (tests/packaging/packaging.test.ts installs all
// of them from a lockfile), and README's example runs from them.
describe('installing from npm pack tarballs, as the getting-started guide says', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'polyhal-docs-install-'));
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("hal, backend-cpu, backend-wasm and autograd install offline by path; README's example runs", () => {
    const guide = read('docs/guide/getting-started.md');
    expect(guide).toContain('npm pack --ignore-scripts --pack-destination tarballs --workspace hal');
    expect(guide).toContain('npm install /path/to/polyhal/tarballs/polyhal-hal-0.1.0.tgz');
    const env = { ...process.env, npm_config_offline: 'true', npm_config_registry: 'http://127.0.0.1:9/' };
    const npm = (args: string[], cwd: string) =>
      execFileSync('npm', args, { cwd, env, encoding: 'utf8', stdio: 'pipe' });
    const workspaces = ['hal', 'backends/cpu', 'backends/wasm', 'packages/autograd'];
    mkdirSync(join(dir, 'tarballs'));
    const packed = JSON.parse(
      npm(
        ['pack', '--json', '--ignore-scripts', '--pack-destination', join(dir, 'tarballs')].concat(
          workspaces.flatMap((w) => ['--workspace', w]),
        ),
        root,
      ),
    ) as { filename: string }[];
    expect(packed.map((p) => p.filename).sort()).toEqual(
      ['autograd', 'backend-cpu', 'backend-wasm', 'hal'].map((n) => `polyhal-${n}-0.1.0.tgz`),
    );
    const app = join(dir, 'app');
    mkdirSync(app);
    writeFileSync(
      join(app, 'package.json'),
      '{ "name": "app", "version": "1.0.0", "private": true, "type": "module" }',
    );
    npm(['install', '--no-audit', '--no-fund', ...packed.map((p) => join(dir, 'tarballs', p.filename))], app);
    const deps = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')).dependencies as Record<string, string>;
    expect(deps['@polyhal/hal']).toBe('file:../tarballs/polyhal-hal-0.1.0.tgz');
    const example = blocksOf(read('README.md')).find((b) => CODE_LANGS.includes(b.lang))!;
    writeFileSync(join(app, 'example.mjs'), transformSync(example.code, { loader: 'ts', format: 'esm' }).code);
    const r = run(app, process.execPath, ['example.mjs']);
    expect(r.status === 0 ? 'ok' : r.stderr).toBe('ok');
    expect(r.stdout).toContain('tensor([0, 1, 1, 0]');
  }, 120_000);
});
