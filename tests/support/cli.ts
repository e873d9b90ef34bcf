/** The main job as a user runs it: the built CLI (packages/cli/dist/main.js) in a child process. */
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root folder. */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Runs `polyhal ...args` from the repository root, POLYHAL_BACKEND unset; returns its status and output. */
export const runCli = (...args: string[]): SpawnSyncReturns<string> =>
  spawnSync(process.execPath, [join(REPO_ROOT, 'packages/cli/dist/main.js'), ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: { ...process.env, POLYHAL_BACKEND: '' },
  });
