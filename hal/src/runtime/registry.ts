/**
 * Backend registry and runtime selection. Backends register a name, a priority and a factory;
 * `createBackend` picks one by explicit name, by the POLYHAL_BACKEND environment variable, by a
 * `polyhal.config.json` file, or by priority among the available ones (webgpu > wasm > cpu), falling
 * back when one fails to initialize. It always returns a SelectionReport saying what was tried, what
 * was chosen and why every other candidate was rejected.
 */
import type { ComputeBackend } from '../backend.js';
import { CONFIG_OPTION_SPECS, loadConfig, type PolyHalConfig } from './config.js';
import { BackendUnavailableError, InvalidArgumentError, UnknownBackendError } from '../core/errors.js';
import { defineOptions, type OptionSpecs, type OptionsOf, validateOptions } from './options.js';
import { KNOWN_BACKENDS } from './known-backends.js';

export type { PolyHalConfig } from './config.js';

/**
 * The backends of this project and the package that registers each (for "import X" hints), from
 * KNOWN_BACKENDS. A null-prototype object: look names up with Object.hasOwn (`constructor` is no backend).
 */
export const BACKEND_PACKAGES: Readonly<Record<string, string>> = Object.freeze(
  Object.assign(
    Object.create(null) as Record<string, string>,
    Object.fromEntries(KNOWN_BACKENDS.map((b) => [b.name, b.package])),
  ),
);

/** The package of one of this project's backends, or undefined for any other name. */
function packageOf(name: string): string | undefined {
  return Object.hasOwn(BACKEND_PACKAGES, name) ? BACKEND_PACKAGES[name] : undefined;
}

/** What a backend's availability probe found. */
export interface ProbeResult {
  /** Whether the backend can start here. */
  available: boolean;
  /** Why it is unavailable (no adapter, no SIMD, ...), or a remark when available. */
  reason?: string;
  /** A software device (lavapipe, SwiftShader, a fallback adapter): `auto` ranks it below wasm. */
  software?: boolean;
  /** The device found, e.g. an adapter description. */
  device?: string;
}

/** A backend as the registry knows it: how to probe it, create it and rank it (each backend package exports one). */
export interface BackendEntry {
  /** The name createBackend, POLYHAL_BACKEND and polyhal.config.json use (`cpu`, `wasm`, `webgpu`, ...). */
  name: string;
  /** Higher is preferred by `auto`: webgpu 300, wasm 200, cpu 100. */
  priority: number;
  /** A cheap availability check; absent means "available if `create` succeeds". */
  probe?: () => Promise<ProbeResult>;
  /** Creates an instance; throws BackendUnavailableError (with the reason) when it cannot. */
  create: (options?: Record<string, unknown>) => Promise<ComputeBackend>;
  /**
   * The options `create` takes. When present, `createBackend` checks option keys and values against
   * it (InvalidArgumentError naming the key) and passes this backend only the keys it declares.
   */
  options?: OptionSpecs;
}

/** Where the backend choice came from: createBackend's argument, POLYHAL_BACKEND, polyhal.config.json, or auto. */
export type SelectionSource = 'explicit' | 'env' | 'config' | 'auto';

/** One backend considered by createBackend, in the order they were considered. */
export interface SelectionAttempt {
  /** The backend's name. */
  backend: string;
  /** Chosen; rejected (not registered, unavailable or failed to start); or not tried (ranked after the chosen one). */
  outcome: 'chosen' | 'rejected' | 'not tried';
  /** Why, in words: the ranking or request that chose it and its device, or the reason it was rejected. */
  reason: string;
}

/** What createBackend tried and why it chose what it chose; `toString()` prints it. */
export interface SelectionReport {
  /** What asked for the backend and what it asked for. */
  source: SelectionSource;
  /** The name asked for, or 'auto'. */
  requested: string;
  /** The name of the backend returned. */
  chosen: string;
  /** Its device (`deviceName`). */
  deviceName: string;
  /** Every backend considered, in order. */
  attempts: SelectionAttempt[];
  /** The polyhal.config.json that was read (absolute path), if any. */
  configFile?: string;
  /** Multi-line human-readable account. */
  toString(): string;
}

/**
 * createBackend's own options, as it checks them (CreateBackendOptions is derived from them and
 * docs/reference/OPTIONS.md generated from them): the config file's four keys (CONFIG_OPTION_SPECS),
 * then `env` and `configPath`.
 */
export const CREATE_BACKEND_OPTION_SPECS = defineOptions({
  /** A registered name, or 'auto'. Overrides the environment and the config file. */
  backend: CONFIG_OPTION_SPECS.backend,
  /** Order for 'auto' (default: registered priorities). */
  prefer: CONFIG_OPTION_SPECS.prefer,
  /** When an explicitly named backend fails to initialize, try the others by priority instead of throwing. */
  fallback: CONFIG_OPTION_SPECS.fallback,
  /** Options passed to the backend's factory (e.g. { memoryLimit }). */
  options: CONFIG_OPTION_SPECS.options,
  /** Environment to read POLYHAL_BACKEND from (default: process.env where it exists). */
  env: { type: 'object', doc: 'environment to read POLYHAL_BACKEND from' },
  /**
   * Path of the config file. Default: the first polyhal.config.json found walking up from the working
   * directory to the project root, the nearest folder with a package.json or .git (config.ts; Node-compatible
   * runtimes only). A string: exactly that file (it must exist). null: none.
   * The config's `backend` applies only when neither `backend` nor POLYHAL_BACKEND names one; its
   * `options` always apply (these `options` override them key by key).
   */
  configPath: { type: 'string', doc: 'path of polyhal.config.json, or null for none' },
});

/**
 * createBackend's own options (CREATE_BACKEND_OPTION_SPECS). Each is checked (InvalidArgumentError naming
 * it): an unknown key, a value of the wrong type, an empty backend name or an empty `prefer`; `options: null`
 * is not an object.
 */
export type CreateBackendOptions = OptionsOf<
  typeof CREATE_BACKEND_OPTION_SPECS,
  {
    prefer: readonly string[];
    options: Record<string, unknown>;
    env: Record<string, string | undefined>;
    configPath: string | null; // null: no config file (checked by createBackend before the specs)
  }
>;

/** Checks createBackend's options object itself: an object, its keys, and their types. */
function checkCreateOptions(options: unknown): asserts options is CreateBackendOptions {
  const kind = (v: unknown): string => {
    if (v === null || (typeof v !== 'object' && typeof v !== 'function'))
      return typeof v === 'string' ? JSON.stringify(v) : String(v);
    return Array.isArray(v) ? 'an array' : typeof v === 'function' ? 'a function' : 'an object';
  };
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new InvalidArgumentError(`createBackend: options must be an object, got ${kind(options)}`);
  const { configPath, ...rest } = options as Record<string, unknown>;
  if (configPath !== undefined && configPath !== null && typeof configPath !== 'string')
    throw new InvalidArgumentError(
      `createBackend: option 'configPath' must be a path (a string) or null, got ${kind(configPath)}`,
    );
  validateOptions('createBackend', rest, CREATE_BACKEND_OPTION_SPECS);
}

/** An empty backend name is an error (never a silent 'auto'); so is an empty `prefer`. */
function checkNames(where: string, backend: string | undefined, prefer: readonly string[] | undefined): void {
  if (backend === '') throw new InvalidArgumentError(`${where} 'backend' must be a backend name or "auto", got ""`);
  if (prefer?.length === 0) throw new InvalidArgumentError(`${where} 'prefer' must name at least one backend`);
}

/**
 * A `prefer` entry must be registered or one of this project's backends (BACKEND_PACKAGES, tolerated
 * when not imported: a config may serve several programs); anything else is UnknownBackendError.
 */
function checkPrefer(where: string, prefer: readonly string[] | undefined): void {
  for (const name of prefer ?? []) {
    if (!registry().has(name) && packageOf(name) === undefined)
      throw new UnknownBackendError(name, registeredBackends(), `named in ${where} 'prefer'`);
  }
}

// One registry per JS realm, shared even when the ESM and CJS builds of this package both load.
const REGISTRY_KEY = Symbol.for('polyhal.registry');
type Registry = Map<string, BackendEntry>;
function registry(): Registry {
  const g = globalThis as unknown as Record<symbol, Registry | undefined>;
  return (g[REGISTRY_KEY] ??= new Map());
}

/** Registers (or replaces) a backend entry. */
export function registerBackend(entry: BackendEntry): void {
  if (!entry || typeof entry.name !== 'string' || !entry.name || typeof entry.create !== 'function') {
    throw new InvalidArgumentError('registerBackend needs { name, priority, create }');
  }
  registry().set(entry.name, entry);
}

/** Removes backend `name` from the registry; returns whether it was registered. */
export function unregisterBackend(name: string): boolean {
  return registry().delete(name);
}

/** Registered backend names, highest priority first. */
export function registeredBackends(): string[] {
  return [...registry().values()].sort((a, b) => b.priority - a.priority).map((e) => e.name);
}

function defaultEnv(): Record<string, string | undefined> {
  const p = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return p?.env ?? {};
}

class Report implements SelectionReport {
  chosen = '';
  deviceName = '';
  attempts: SelectionAttempt[] = [];
  /** Why auto ranked a candidate where it did (e.g. a software GPU below wasm). */
  readonly rankNotes = new Map<string, string>();
  constructor(
    readonly source: SelectionSource,
    readonly requested: string,
    readonly configFile?: string,
  ) {}
  toString(): string {
    const lines = [`backend selection (${this.source}: ${this.requested}) → ${this.chosen} [${this.deviceName}]`];
    if (this.configFile) lines.push(`  config   ${this.configFile}`);
    for (const a of this.attempts) lines.push(`  ${a.backend.padEnd(8)} ${a.outcome.padEnd(9)} ${a.reason}`);
    return lines.join('\n');
  }
}

/**
 * Creates a backend. Precedence: `options.backend` > POLYHAL_BACKEND > polyhal.config.json > auto.
 * Throws InvalidArgumentError naming the option or config key for a malformed `options` (not an object,
 * an unknown key, an ill-typed value, an empty backend name or `prefer`) or config file, before anything
 * starts; UnknownBackendError (listing the registered names) for an unknown name in `backend`,
 * POLYHAL_BACKEND, the config or `prefer`; BackendUnavailableError when the named backend (or, for auto,
 * every backend) cannot start.
 */
export async function createBackend(
  options: CreateBackendOptions = {},
): Promise<{ backend: ComputeBackend; report: SelectionReport }> {
  checkCreateOptions(options);
  checkNames('createBackend: option', options.backend, options.prefer);
  const env = options.env ?? defaultEnv();
  const loaded = await loadConfig(options.configPath);
  const config: PolyHalConfig | undefined = loaded?.config;
  if (loaded) checkNames(`${loaded.file}: key`, config?.backend, config?.prefer);
  let source: SelectionSource = 'auto';
  let requested = 'auto';
  if (options.backend !== undefined) {
    source = 'explicit';
    requested = options.backend;
  } else if (env['POLYHAL_BACKEND']) {
    source = 'env';
    requested = env['POLYHAL_BACKEND'];
  } else if (config?.backend !== undefined) {
    source = 'config';
    requested = config.backend;
  }
  const reg = registry();
  const available = registeredBackends();
  if (available.length === 0) {
    throw new BackendUnavailableError(
      requested,
      `no backend is registered: import a backend package first (${Object.values(BACKEND_PACKAGES)
        .map((p) => `import '${p}'`)
        .join(', ')}); each registers itself when imported`,
    );
  }
  if (requested !== 'auto' && !reg.has(requested)) {
    const pkg = packageOf(requested);
    throw new UnknownBackendError(
      requested,
      available,
      pkg ? `${requested} is not registered: import '${pkg}' first` : undefined,
    );
  }
  checkPrefer('createBackend option', options.prefer);
  if (loaded) checkPrefer(`${loaded.file} key`, config?.prefer);
  checkOptions(loaded ? `${loaded.file} options` : 'config options', config?.options);
  checkOptions('createBackend options', options.options);
  const report = new Report(source, requested, loaded?.file);
  const factoryOptions = { ...(config?.options ?? {}), ...(options.options ?? {}) };
  const prefer = options.prefer ?? config?.prefer;
  const fallback = options.fallback ?? config?.fallback ?? requested === 'auto';

  // Candidate order: the requested one first; then (auto or fallback) the rest by rank.
  const ranked = await rankCandidates(
    prefer ?? available,
    report,
    requested === 'auto' || fallback,
    prefer !== undefined,
  );
  const order = requested === 'auto' ? ranked : [requested, ...(fallback ? ranked.filter((n) => n !== requested) : [])];
  for (const [i, name] of order.entries()) {
    const entry = reg.get(name);
    if (!entry) {
      report.attempts.push({ backend: name, outcome: 'rejected', reason: 'not registered' });
      continue;
    }
    try {
      const backend = await entry.create(optionsFor(entry, factoryOptions));
      report.chosen = name;
      report.deviceName = backend.deviceName;
      const why =
        requested === 'auto'
          ? (report.rankNotes.get(name) ??
            (prefer ? 'first available in the preference order' : 'highest-priority available'))
          : `requested by ${source}`;
      report.attempts.push({ backend: name, outcome: 'chosen', reason: `${why}; device: ${backend.deviceName}` });
      for (const rest of order.slice(i + 1)) {
        const note = report.rankNotes.get(rest);
        report.attempts.push({
          backend: rest,
          outcome: 'not tried',
          reason: `${name} ranks higher${note ? ` (${note})` : ''}`,
        });
      }
      return { backend, report };
    } catch (e) {
      report.attempts.push({
        backend: name,
        outcome: 'rejected',
        reason: e instanceof BackendUnavailableError ? e.reason : `failed to initialize: ${(e as Error).message}`,
      });
    }
  }
  const reasons = report.attempts.map((a) => `${a.backend}: ${a.reason}`).join('; ');
  throw new BackendUnavailableError(requested, `no backend could be started (${reasons})`);
}

/**
 * Checks option keys and values against the registered backends' declarations: a key no backend
 * declares, or a value that does not fit a declaring backend's spec, throws InvalidArgumentError.
 * Skipped for keys when a registered backend declares no options (it may take any).
 */
function checkOptions(where: string, options: Record<string, unknown> | undefined): void {
  if (options === undefined) return;
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new InvalidArgumentError(`${where} must be an object`);
  const entries = [...registry().values()];
  const open = entries.some((e) => !e.options);
  for (const [key, value] of Object.entries(options)) {
    const declaring = entries.filter((e) => e.options && Object.hasOwn(e.options, key));
    if (!declaring.length && !open) {
      const known = [...new Set(entries.flatMap((e) => Object.keys(e.options ?? {})))].sort();
      throw new InvalidArgumentError(
        `${where}: unknown option '${key}' (options of the registered backends: ${known.join(', ')})`,
      );
    }
    for (const e of declaring) validateOptions(`${where} (${e.name} backend)`, { [key]: value }, e.options!);
  }
}

/** The options a backend declares (all of them when it declares none). */
function optionsFor(entry: BackendEntry, options: Record<string, unknown>): Record<string, unknown> {
  if (!entry.options) return options;
  return Object.fromEntries(Object.entries(options).filter(([k]) => Object.hasOwn(entry.options!, k)));
}

/** Probes candidates and orders them by priority; a software GPU drops below wasm, and the report says so. */
async function rankCandidates(
  names: readonly string[],
  report: Report,
  probe: boolean,
  keepOrder: boolean,
): Promise<string[]> {
  const reg = registry();
  const scored: { name: string; score: number }[] = [];
  for (const name of names) {
    const entry = reg.get(name);
    if (!entry) {
      if (probe)
        report.attempts.push({
          backend: name,
          outcome: 'rejected',
          reason: `not registered (registered: ${registeredBackends().join(', ')})`,
        });
      continue;
    }
    let score = keepOrder ? -names.indexOf(name) : entry.priority;
    if (entry.probe && probe) {
      const found = await entry.probe().catch((e: Error): ProbeResult => ({ available: false, reason: e.message }));
      if (!found.available) {
        report.attempts.push({ backend: name, outcome: 'rejected', reason: found.reason ?? 'unavailable' });
        continue;
      }
      if (found.software) {
        if (!keepOrder) score = 150; // below wasm (200), above cpu (100)
        report.rankNotes.set(name, `ranked below wasm: software device ${found.device ?? ''}`.trim());
      }
    }
    scored.push({ name, score });
  }
  scored.sort((a, b) => b.score - a.score || names.indexOf(a.name) - names.indexOf(b.name));
  return scored.map((s) => s.name);
}
