/**
 * `polyhal.config.json`: found by walking up from the working directory to the project root, or at an
 * explicit path; Node-compatible runtimes only (a browser has no working directory).
 *
 * Discovery (no explicit path) looks in the working directory, then in each folder above it up to and
 * including the project root: the nearest folder holding a `package.json` or a `.git`. It never goes
 * past that root, so a stray `/tmp/polyhal.config.json` does not steer every program run below `/tmp`.
 * Outside any project (no such folder up to the file system root) only the working directory is searched.
 *
 * The file must be a regular file of at most CONFIG_MAX_BYTES (1 MiB): a directory, a device such as
 * `/dev/zero`, a FIFO or a larger file is an InvalidArgumentError naming the path, raised before reading.
 * Its keys are checked: an unknown key or an ill-typed value throws InvalidArgumentError naming the key
 * and the file.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { defineOptions, type OptionsOf, validateOptions } from './options.js';
import { nodeBuiltin } from './platform.js';

/** The config file's name, searched for from the working directory up to the project root. */
export const CONFIG_FILE_NAME = 'polyhal.config.json';
/** The largest config file read, in bytes (1 MiB); a larger one is an InvalidArgumentError. */
export const CONFIG_MAX_BYTES = 2 ** 20;

/**
 * The keys of polyhal.config.json, as loadConfig checks them: PolyHalConfig is derived from them, and
 * docs/reference/OPTIONS.md is generated from them. createBackend takes the same four (registry.ts).
 */
export const CONFIG_OPTION_SPECS = defineOptions({
  /** A registered backend name, or 'auto'. */
  backend: { type: 'string', doc: 'a registered backend name or "auto"' },
  /** Order for 'auto'. */
  prefer: { type: 'string[]', doc: 'order for auto' },
  /** Try other backends when the named one fails to start. */
  fallback: { type: 'boolean', doc: 'when the named backend fails to start, try the others by priority' },
  /** Options for the backend factories (e.g. { "memoryLimit": 1073741824, "threads": 2 }). */
  options: { type: 'object', doc: 'options for the backend factories' },
});

/** The shape of polyhal.config.json (from CONFIG_OPTION_SPECS). */
export type PolyHalConfig = OptionsOf<typeof CONFIG_OPTION_SPECS, { options: Record<string, unknown> }>;

interface Stats {
  isFile(): boolean;
  size: number;
}
interface Fs {
  existsSync(p: string): boolean;
  statSync(p: string): Stats;
  openSync(p: string, flags: number): number;
  fstatSync(fd: number): Stats;
  readSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: null): number;
  closeSync(fd: number): void;
  constants: { O_RDONLY: number; O_NONBLOCK?: number };
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
  /** Its contents, checked against CONFIG_OPTION_SPECS. */
  config: PolyHalConfig;
}

/**
 * Finds and reads the config. `path` undefined: search from `cwd` (default process.cwd()) up to the
 * project root (see the module docs) and take the first polyhal.config.json; a string: exactly that file
 * (it must exist); null: no config. Returns undefined when there is none (or outside Node-like runtimes).
 * Throws InvalidArgumentError for a missing explicit file, one that is not a regular file or is over
 * CONFIG_MAX_BYTES, invalid JSON, or a bad key or value.
 */
export async function loadConfig(path?: string | null, cwd?: string): Promise<LoadedConfig | undefined> {
  if (path === null) return undefined;
  const fs = await nodeBuiltin<Fs>('fs');
  const p = await nodeBuiltin<Path>('path');
  if (!fs || !p) return undefined;
  const file = path !== undefined ? p.resolve(cwd ?? workingDirectory(), path) : discover(fs, p, cwd);
  if (file === undefined) return undefined;
  const text = readBounded(fs, file);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new InvalidArgumentError(`${file} is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new InvalidArgumentError(`${file} must hold a JSON object`);
  validateOptions(file, parsed, CONFIG_OPTION_SPECS, 'key');
  return { file, config: parsed as PolyHalConfig };
}

/** The first regular polyhal.config.json from `cwd` up to the project root (only `cwd` outside a project). */
function discover(fs: Fs, p: Path, cwd: string | undefined): string | undefined {
  const start = p.resolve(cwd ?? workingDirectory());
  const dirs: string[] = [];
  let root = false;
  for (let dir = start; ; dir = p.dirname(dir)) {
    dirs.push(dir);
    if (fs.existsSync(p.join(dir, 'package.json')) || fs.existsSync(p.join(dir, '.git'))) {
      root = true;
      break;
    }
    if (p.dirname(dir) === dir) break;
  }
  for (const dir of root ? dirs : [start]) {
    const candidate = p.join(dir, CONFIG_FILE_NAME);
    if (isFile(fs, candidate)) return candidate;
  }
  return undefined;
}

function isFile(fs: Fs, file: string): boolean {
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Checks that `file` is a regular file of at most CONFIG_MAX_BYTES, then reads it as UTF-8. */
function readBounded(fs: Fs, file: string): string {
  const check = (st: Stats): void => {
    if (!st.isFile())
      throw new InvalidArgumentError(
        `config file ${file} is not a regular file (a directory, a device or a FIFO): configPath must name a JSON file`,
      );
    if (st.size > CONFIG_MAX_BYTES)
      throw new InvalidArgumentError(
        `config file ${file} is ${st.size} bytes, over the limit of ${CONFIG_MAX_BYTES} (1 MiB) for a config file`,
      );
  };
  let st: Stats;
  try {
    st = fs.statSync(file);
  } catch (e) {
    const code = (e as { code?: string }).code;
    throw new InvalidArgumentError(
      code === 'ENOENT' || code === 'ENOTDIR'
        ? `config file ${file} does not exist`
        : `config file ${file} cannot be read: ${(e as Error).message}`,
    );
  }
  check(st);
  let fd: number;
  try {
    // Non-blocking: should a FIFO replace the file after the check, opening it must not wait for a writer.
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (e) {
    throw new InvalidArgumentError(`config file ${file} cannot be read: ${(e as Error).message}`);
  }
  try {
    check(fs.fstatSync(fd)); // the file opened is the one checked
    const bytes = new Uint8Array(CONFIG_MAX_BYTES + 1);
    let n = 0;
    for (let r = 1; r > 0 && n < bytes.length; n += r) r = fs.readSync(fd, bytes, n, bytes.length - n, null);
    check({ isFile: () => true, size: n }); // grown since the check
    return new TextDecoder().decode(bytes.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
}

function workingDirectory(): string {
  return (globalThis as unknown as { process: { cwd(): string } }).process.cwd();
}
