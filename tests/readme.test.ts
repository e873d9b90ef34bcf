import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';

// The README runs as written: every fenced ts/js block as an ES module, every sh block line by line.
// A `// → text` comment after a console.log promises output: the text must appear in stdout.
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');

interface Block {
  lang: string;
  code: string;
  line: number;
}
const blocks: Block[] = [];
for (const m of readme.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)) {
  blocks.push({ lang: m[1]!, code: m[2]!, line: readme.slice(0, m.index).split('\n').length });
}

// The two set-up commands are what CI itself runs on a fresh clone (`npm ci`, then `npm test`):
// inside the test run, `npm ci` would reinstall the node_modules jest is running from and `npm test`
// would recurse, so those two are checked by CI; every other command runs here exactly as written.
const RUN_BY_CI = new Set(['npm ci', 'npm test']);

const run = (cmd: string, args: string[], cwd = root) =>
  spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 300_000, env: { ...process.env, POLYHAL_BACKEND: '' } });

describe('README code blocks run as written', () => {
  const code = blocks.filter((b) => ['ts', 'js', 'typescript', 'javascript'].includes(b.lang));
  const shell = blocks.filter((b) => b.lang === 'sh' || b.lang === 'bash');

  test('the README has the blocks this test runs (two set-up commands, code examples)', () => {
    expect(code.length).toBeGreaterThanOrEqual(3);
    const setup = shell.flatMap((b) => b.code.split('\n')).filter((l) => l.startsWith('npm '));
    expect(setup).toEqual(['npm ci && npm start', 'npm test']);
  });

  test.each(code.map((b) => [b.line, b] as const))('code block at README.md:%i', (_line, block) => {
    const js = transformSync(block.code, { loader: block.lang.startsWith('t') ? 'ts' : 'js', format: 'esm' }).code;
    const r = run(process.execPath, ['--input-type=module', '-e', js]);
    expect(r.stderr).not.toMatch(/Error/);
    expect(r.status).toBe(0);
    for (const m of block.code.matchAll(/console\.log\(.*\/\/ → (.+)$/gm)) expect(r.stdout).toContain(m[1]!.trim());
  });

  const commands = shell
    .flatMap((b) => b.code.split('\n').map((c, i) => [b.line + 1 + i, c.trim()] as const))
    .filter(([, c]) => c && !c.startsWith('#'));
  test.each(commands)(
    'command at README.md:%i: %s',
    (_line, command) => {
      const before = new Set(readdirSync(root));
      try {
        for (const part of command.split('&&').map((p) => p.trim())) {
          if (RUN_BY_CI.has(part)) continue;
          const r = run('sh', ['-c', part]);
          expect({ command: part, status: r.status, stderr: r.status === 0 ? '' : r.stderr.slice(-2000) }).toEqual({
            command: part,
            status: 0,
            stderr: '',
          });
          if (part === 'npm start') expect(r.stdout).toMatch(/test accuracy: 0\.(8|9)\d+ \(backend: /);
        }
      } finally {
        // Files a command wrote into the repository (e.g. a --json report) are removed.
        for (const f of readdirSync(root)) if (!before.has(f)) rmSync(join(root, f), { recursive: true, force: true });
      }
    },
    300_000,
  );
});

// The main job's figures in the README come from recorded runs (benches/results/main-job/*.json, written by
// `polyhal --json`), through scripts/main-job-figures.mjs: a hand-edited figure fails here.
test("the README's main job figures are generated from the recorded runs", () => {
  const r = run(process.execPath, ['scripts/main-job-figures.mjs', '--check']);
  expect(r.status === 0 ? 'up to date' : `${r.stdout}\n${r.stderr}`.trim()).toBe('up to date');
  for (const f of readdirSync(join(root, 'benches/results/main-job')).filter((n) => n.endsWith('.json'))) {
    const { runs } = JSON.parse(readFileSync(join(root, 'benches/results/main-job', f), 'utf8'));
    for (const rec of runs) expect(readme).toContain(`| ${rec.testAccuracy.toFixed(4)} |`);
  }
});
