/**
 * The backends this repository contains, and which ones a test run requires. REQUIRE_BACKENDS is a
 * comma list; under CI=true it defaults to every backend in the repo, so a backend that cannot start
 * fails the run instead of being skipped.
 */
import { afterAll, beforeAll } from '@jest/globals';
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

/**
 * Opens the backend `name` before a describe block's tests (`set` receives it) and disposes it after. A backend
 * that cannot start is an error when the run requires it (requiredBackends), else `set` receives undefined.
 */
export function openBackend(
  name: string,
  factory: () => Promise<ComputeBackend>,
  set: (be: ComputeBackend | undefined) => void,
): void {
  let be: ComputeBackend | undefined;
  beforeAll(async () => {
    try {
      be = await factory();
    } catch (e) {
      if (requiredBackends().includes(name) || (e as Error).name !== 'BackendUnavailableError') throw e;
    }
    set(be);
  });
  afterAll(() => be?.dispose());
}
