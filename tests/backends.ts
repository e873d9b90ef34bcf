/**
 * The backends this repository contains, and which ones a test run requires. REQUIRE_BACKENDS is a
 * comma list; under CI=true it defaults to every backend in the repo, so a backend that cannot start
 * fails the run instead of being skipped.
 */
import type { ComputeBackend } from '@polyhal/hal';
import { CpuBackend } from '@polyhal/backend-cpu';
import { createWasmBackend } from '@polyhal/backend-wasm';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';

export const REPO_BACKENDS: Record<string, () => Promise<ComputeBackend>> = {
  cpu: async () => new CpuBackend(),
  wasm: () => createWasmBackend(),
  webgpu: () => createWebGpuBackend(),
};

export function requiredBackends(env: Record<string, string | undefined> = process.env): string[] {
  const raw = env['REQUIRE_BACKENDS'];
  if (raw !== undefined && raw.trim() !== '')
    return raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  return env['CI'] === 'true' || env['CI'] === '1' ? Object.keys(REPO_BACKENDS) : [];
}
