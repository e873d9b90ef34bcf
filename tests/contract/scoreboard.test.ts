import { expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// docs/CONFORMANCE.md is generated from the result matrix; a fresh run must reproduce it.
test('the conformance scoreboard (docs/CONFORMANCE.md) is up to date', () => {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const r = spawnSync(process.execPath, ['scripts/scoreboard.mjs', '--check'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 400_000,
  });
  expect(r.status === 0 ? 'up to date' : `${r.stdout}\n${r.stderr}`.trim()).toBe('up to date');
}, 420_000);
