/**
 * `polyhal.config.json`: found by walking up from the working directory (like `.npmrc` or
 * `tsconfig.json`), or at an explicit path; Node-compatible runtimes only (a browser has no working
 * directory). Its keys are checked: an unknown key or an ill-typed value throws InvalidArgumentError
 * naming the key and the file.
 */
import { InvalidArgumentError } from './errors.js';
import { type OptionSpecs, validateOptions } from './options.js';
import { nodeBuiltin } from './platform.js';

/** The shape of polyhal.config.json. */
export interface PolyHalConfig {
  /** A registered backend name, or 'auto'. */
  backend?: string;
  /** Order for 'auto'. */
  prefer?: string[];
  /** Try other backends when the named one fails to start. */
  fallback?: boolean;
  /** Options for the backend factories (e.g. { "memoryLimit": 1073741824, "threads": 2 }). */
  options?: Record<string, unknown>;
}

export const CONFIG_FILE_NAME = 'polyhal.config.json';

const CONFIG_SPECS: OptionSpecs = {
  backend: { type: 'string' as const, doc: 'a registered backend name or "auto"' },
  prefer: { type: 'string[]' as const, doc: 'order for auto' },
  fallback: { type: 'boolean' as const },
  options: { type: 'object' as const, doc: 'options for the backend factories' },
};

interface Fs {
  existsSync(p: string): boolean;
  readFileSync(p: string, enc: 'utf8'): string;
  statSync(p: string): { isFile(): boolean };
}
interface Path {
  resolve(...p: string[]): string;
  dirname(p: string): string;
  join(...p: string[]): string;
}

/** A config file that was found and read. */
export interface LoadedConfig {
  /** Absolute path of the file. */
  file: string;
  config: PolyHalConfig;
}

/**
 * Finds and reads the config. `path` undefined: walk up from `cwd` (default process.cwd()) to the
 * file system root and take the first polyhal.config.json; a string: exactly that file (it must
 * exist); null: no config. Returns undefined when there is none (or outside Node-like runtimes).
 * Throws InvalidArgumentError for a missing explicit file, invalid JSON, or a bad key or value.
 */
export async function loadConfig(path?: string | null, cwd?: string): Promise<LoadedConfig | undefined> {
  if (path === null) return undefined;
  const fs = await nodeBuiltin<Fs>('fs');
  const p = await nodeBuiltin<Path>('path');
  if (!fs || !p) return undefined;
  let file: string | undefined;
  if (path !== undefined) {
    file = p.resolve(cwd ?? workingDirectory(), path);
    if (!fs.existsSync(file)) throw new InvalidArgumentError(`config file ${file} does not exist`);
  } else {
    for (let dir = p.resolve(cwd ?? workingDirectory()); ; dir = p.dirname(dir)) {
      const candidate = p.join(dir, CONFIG_FILE_NAME);
      if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) {
        file = candidate;
        break;
      }
      if (p.dirname(dir) === dir) break;
    }
    if (!file) return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new InvalidArgumentError(`${file} is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new InvalidArgumentError(`${file} must hold a JSON object`);
  validateOptions(file, parsed, CONFIG_SPECS, 'key');
  return { file, config: parsed as PolyHalConfig };
}

function workingDirectory(): string {
  return (globalThis as unknown as { process: { cwd(): string } }).process.cwd();
}
