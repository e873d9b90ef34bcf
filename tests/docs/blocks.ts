/**
 * The code blocks of a Markdown page, and how README.md and docs/ run them as written: every fenced ts/js
 * block as an ES module, every sh block line by line, from the repository root. A `// → text` comment after a
 * console.log promises output: the text must appear in stdout. A block right after `<!-- excerpt: FILE -->`
 * is a verbatim piece of FILE (checked against it, not run); one right after `<!-- not run: REASON -->` is
 * not run, and says why.
 */
import { expect } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { transformSync } from 'esbuild';

export interface Block {
  lang: string;
  code: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The file named by an `<!-- excerpt: FILE -->` comment on the line before the fence. */
  excerptOf?: string;
  /** The reason given by a `<!-- not run: REASON -->` comment on the line before the fence. */
  notRun?: string;
}

export const CODE_LANGS = ['ts', 'js', 'typescript', 'javascript'];
export const SHELL_LANGS = ['sh', 'bash'];

/** Every fenced block of `text`, with the marker comment on the line before it, if any. */
export function blocksOf(text: string): Block[] {
  const blocks: Block[] = [];
  for (const m of text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)) {
    const before = text.slice(0, m.index);
    const previous = before.replace(/\n$/, '').split('\n').pop() ?? '';
    const excerpt = /^<!-- excerpt: (\S+) -->$/.exec(previous);
    const notRun = /^<!-- not run: (.*) -->$/.exec(previous);
    blocks.push({
      lang: m[1]!,
      code: m[2]!,
      line: before.split('\n').length,
      ...(excerpt && { excerptOf: excerpt[1]! }),
      ...(notRun && { notRun: notRun[1]!.trim() }),
    });
  }
  return blocks;
}

export const run = (root: string, cmd: string, args: string[]) =>
  spawnSync(cmd, args, { cwd: root, encoding: 'utf8', timeout: 300_000, env: { ...process.env, POLYHAL_BACKEND: '' } });

/** Runs a ts/js block as an ES module from `root` and checks its promised output. */
export function runCodeBlock(root: string, block: Block): void {
  const js = transformSync(block.code, { loader: block.lang.startsWith('t') ? 'ts' : 'js', format: 'esm' }).code;
  const r = run(root, process.execPath, ['--input-type=module', '-e', js]);
  expect(r.stderr).not.toMatch(/Error/);
  expect(r.status).toBe(0);
  for (const m of block.code.matchAll(/console\.log\(.*\/\/ → (.+)$/gm)) expect(r.stdout).toContain(m[1]!.trim());
}

/** The commands of the sh blocks as [line, command]: one per line, blank lines and comments left out. */
export function commandsOf(blocks: Block[]): [number, string][] {
  return blocks
    .filter((b) => SHELL_LANGS.includes(b.lang) && !b.notRun)
    .flatMap((b) => b.code.split('\n').map((c, i) => [b.line + 1 + i, c.trim()] as [number, string]))
    .filter(([, c]) => c && !c.startsWith('#'));
}

/**
 * Runs one command line from `root`, each `&&` part in turn (parts in `skip` are left to others), expecting
 * exit 0, and returns each part's stdout; files a part wrote into the repository's top folder (e.g. a --json
 * report) are removed afterwards.
 */
export function runCommand(root: string, command: string, skip: ReadonlySet<string> = new Set()): Map<string, string> {
  const before = new Set(readdirSync(root));
  const outputs = new Map<string, string>();
  try {
    for (const part of command.split('&&').map((p) => p.trim())) {
      if (skip.has(part)) continue;
      const r = run(root, 'sh', ['-c', part]);
      expect({ command: part, status: r.status, stderr: r.status === 0 ? '' : r.stderr.slice(-2000) }).toEqual({
        command: part,
        status: 0,
        stderr: '',
      });
      outputs.set(part, r.stdout);
    }
  } finally {
    for (const f of readdirSync(root)) if (!before.has(f)) rmSync(join(root, f), { recursive: true, force: true });
  }
  return outputs;
}
