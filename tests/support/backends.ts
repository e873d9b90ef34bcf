/**
 * The backends this repository contains, and which ones a test run requires. REQUIRE_BACKENDS is a
 * comma list; under CI=true it defaults to every backend in the repo, so a backend that cannot start
 * fails the run instead of being skipped.
 */
import { type ComputeBackend, DEFAULT_BACKENDS } from '@polyhal/hal';

// Loaded here, when this module loads (as static imports did): each package registers its backend.
const entries = await Promise.all(DEFAULT_BACKENDS.map((b) => b.load()));

/** The default set of KNOWN_BACKENDS (cpu, wasm, webgpu), in that order, each created with its defaults. */
export const REPO_BACKENDS: Record<string, () => Promise<ComputeBackend>> = Object.fromEntries(
  entries.map((entry) => [entry.name, () => entry.create()]),
);

export function requiredBackends(env: Record<string, string | undefined> = process.env): string[] {
  const raw = env['REQUIRE_BACKENDS'];
  if (raw !== undefined && raw.trim() !== '')
    return raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  return env['CI'] === 'true' || env['CI'] === '1' ? Object.keys(REPO_BACKENDS) : [];
}
