import { describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// No source line over 120 characters (the formatter's width; it does not break strings or comments).
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('source lines', () => {
  test('no line of a tracked TypeScript or JavaScript file is over 120 characters', () => {
    const files = execFileSync('git', ['ls-files', '*.ts', '*.mjs', '*.js', '*.cjs'], { cwd: root, encoding: 'utf8' })
      .split('\n')
      .filter((f) => f && !f.includes('/dist/') && !f.includes('/generated/'));
    expect(files.length).toBeGreaterThan(100);
    const long: string[] = [];
    for (const f of files)
      readFileSync(join(root, f), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if ([...line].length > 120) long.push(`${f}:${i + 1} (${[...line].length})`);
        });
    expect(long).toEqual([]);
  });
});
