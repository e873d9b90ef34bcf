/**
 * The backends this project ships, in one list: the conformance CLI, the scoreboard, the test suites
 * and the registry's "import X" hints all derive their backend names from it. Loading is lazy: nothing
 * here imports a backend package until `load()` is called, so @polyhal/hal depends on none of them.
 */
import { BackendUnavailableError } from '../core/errors.js';
import type { BackendEntry } from './registry.js';

/** One backend of this project. */
export interface KnownBackend<N extends string = string> {
  /** Its registry name (`createBackend({ backend: name })`, POLYHAL_BACKEND, `--backend name`). */
  readonly name: N;
  /** The npm package that registers it when imported. */
  readonly package: string;
  /**
   * Part of the default set (cpu, wasm, webgpu) that `--backend all`, the scoreboard and the test suites
   * cover; reference, the worked example of a backend, is not.
   */
  readonly inDefaultSet: boolean;
  /** The package's export that holds its registry entry (e.g. `cpuBackendEntry`). */
  readonly entryExport: string;
  /**
   * Imports the package (which registers the backend) and returns its registry entry. Rejects with the
   * runtime's module error when the package is not installed, and with BackendUnavailableError when it
   * does not export this backend's entry.
   */
  load(): Promise<BackendEntry>;
}

/**
 * Imports a package by a name held in a variable, so that tsc and bundlers leave the specifier to run
 * time (hal declares no dependency on the backend packages).
 */
const importPackage = (pkg: string): Promise<Record<string, unknown>> =>
  import(/* webpackIgnore: true */ /* @vite-ignore */ pkg);

function known<const N extends string>(
  name: N,
  pkg: string,
  inDefaultSet: boolean,
  entryExport: string,
): KnownBackend<N> {
  return Object.freeze({
    name,
    package: pkg,
    inDefaultSet,
    entryExport,
    load: async () => {
      const entry = (await importPackage(pkg))[entryExport] as Partial<BackendEntry> | undefined;
      if (entry?.name !== name || typeof entry.create !== 'function')
        throw new BackendUnavailableError(name, `${pkg} does not export its registry entry as ${entryExport}`);
      return entry as BackendEntry;
    },
  });
}

/** This project's backends, in the order the default set runs them (cpu, wasm, webgpu), then reference. */
export const KNOWN_BACKENDS = Object.freeze([
  known('cpu', '@polyhal/backend-cpu', true, 'cpuBackendEntry'),
  known('wasm', '@polyhal/backend-wasm', true, 'wasmBackendEntry'),
  known('webgpu', '@polyhal/backend-webgpu', true, 'webgpuBackendEntry'),
  known('reference', '@polyhal/backend-reference', false, 'referenceBackendEntry'),
] as const);

/** The name of one of this project's backends: 'cpu' | 'wasm' | 'webgpu' | 'reference'. */
export type KnownBackendName = (typeof KNOWN_BACKENDS)[number]['name'];

/** The default set (`inDefaultSet`), in order: what `--backend all`, the scoreboard and the tests run. */
export const DEFAULT_BACKENDS: readonly KnownBackend<KnownBackendName>[] = Object.freeze(
  KNOWN_BACKENDS.filter((b) => b.inDefaultSet),
);
