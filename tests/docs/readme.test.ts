import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { blocksOf, CODE_LANGS, commandsOf, runCodeBlock, runCommand, SHELL_LANGS } from './blocks.js';

// The README runs as written: every fenced ts/js block as an ES module, every sh block line by line.
// A `// → text` comment after a console.log promises output: the text must appear in stdout.
// (docs/ pages run by the same rules: tests/docs/docs.test.ts.)
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const blocks = blocksOf(readme);

// The two set-up commands are what CI itself runs on a fresh clone (`npm ci`, then `npm test`):
// inside the test run, `npm ci` would reinstall the node_modules jest is running from and `npm test`
// would recurse, so those two are checked by CI; every other command runs here exactly as written.
const RUN_BY_CI = new Set(['npm ci', 'npm test']);

describe('README code blocks run as written', () => {
  const code = blocks.filter((b) => CODE_LANGS.includes(b.lang));
  const shell = blocks.filter((b) => SHELL_LANGS.includes(b.lang));

  test('the README has the blocks this test runs (two set-up commands, code examples)', () => {
    expect(code.length).toBeGreaterThanOrEqual(1);
    expect(blocks.filter((b) => b.notRun || b.excerptOf)).toEqual([]);
    const setup = shell.flatMap((b) => b.code.split('\n')).filter((l) => l.startsWith('npm '));
    expect(setup).toEqual(['npm ci && npm start', 'npm test']);
  });

  test.each(code.map((b) => [b.line, b] as const))('code block at README.md:%i', (_line, block) => {
    runCodeBlock(root, block);
  });

  test.each(commandsOf(blocks))(
    'command at README.md:%i: %s',
    (_line, command) => {
      const out = runCommand(root, command, RUN_BY_CI);
      if (out.has('npm start')) expect(out.get('npm start')).toMatch(/test accuracy: 0\.(8|9)\d+ \(backend: /);
    },
    300_000,
  );
});
