/**
 * Backend options as data: each backend declares the options its factory takes (type, range, the
 * literal values it also accepts), and every way of passing them — a factory call, `createBackend`,
 * `polyhal.config.json` — is checked against that declaration before anything starts. An unknown key
 * or an ill-typed value throws InvalidArgumentError naming the key; it is never ignored or coerced.
 */
import { InvalidArgumentError } from '../core/errors.js';

/** One option: its JSON-level type, an optional range, and literal values accepted besides the type. */
export interface OptionSpec {
  /** 'object' is for values that cannot come from JSON (an injected GPUDevice). */
  type: 'integer' | 'number' | 'boolean' | 'string' | 'string[]' | 'object';
  /** Inclusive bounds for 'integer' and 'number'. */
  min?: number;
  max?: number;
  /** Literal values accepted as well (e.g. 'auto'); for type 'string', the only accepted values. */
  values?: readonly (string | number | boolean)[];
  /** One line for messages and docs, e.g. 'bytes of live buffers'. */
  doc?: string;
}

export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

/** Options every backend takes (BaseBackendOptions). */
export const BASE_OPTION_SPECS: OptionSpecs = {
  memoryLimit: { type: 'number', min: 1, doc: 'upper bound on live buffer bytes' },
};

/** A numeric option's bounds in words: ' in [1, 8]', ' ≥ 1', ' ≤ 4' or '' (docs/reference/OPTIONS.md uses it too). */
export function optionRange(spec: OptionSpec): string {
  if (spec.min !== undefined && spec.max !== undefined) return ` in [${spec.min}, ${spec.max}]`;
  if (spec.min !== undefined) return ` ≥ ${spec.min}`;
  return spec.max !== undefined ? ` ≤ ${spec.max}` : '';
}

function describe(spec: OptionSpec): string {
  const range = optionRange(spec);
  const literals = (spec.values ?? []).map((v) => JSON.stringify(v));
  if (spec.type === 'string' && literals.length) return `one of ${literals.join(', ')}`;
  const base = {
    integer: 'an integer',
    number: 'a finite number',
    boolean: 'true or false',
    string: 'a string',
    'string[]': 'an array of strings',
    object: 'an object',
  }[spec.type];
  return `${base}${range}${literals.length ? ` or ${literals.join(', ')}` : ''}`;
}

function fits(value: unknown, spec: OptionSpec): boolean {
  if (spec.values?.includes(value as string | number | boolean)) return true;
  switch (spec.type) {
    case 'integer':
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return false;
      if (spec.type === 'integer' && !Number.isInteger(value)) return false;
      return (spec.min === undefined || value >= spec.min) && (spec.max === undefined || value <= spec.max);
    }
    case 'boolean':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string' && !spec.values;
    case 'string[]':
      return Array.isArray(value) && value.every((v) => typeof v === 'string');
    case 'object':
      return typeof value === 'object' && value !== null;
  }
}

function shown(value: unknown): string {
  if (typeof value === 'object' && value !== null) return Array.isArray(value) ? 'an array' : 'an object';
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/**
 * Checks `options` against `specs`; throws InvalidArgumentError naming `where` (e.g. "wasm backend")
 * and the key, for an unknown key (the message lists the known ones) or a value of the wrong type or
 * range. Keys whose value is `undefined` count as absent. Only own keys of `specs` are known ones:
 * `constructor`, `__proto__` or `toString` is an unknown key like any other.
 */
export function validateOptions(where: string, options: unknown, specs: OptionSpecs, noun = 'option'): void {
  if (options === undefined || options === null) return;
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidArgumentError(`${where}: options must be an object, got ${shown(options)}`);
  }
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined) continue;
    const spec = Object.hasOwn(specs, key) ? specs[key] : undefined; // never an inherited 'constructor'
    if (!spec)
      throw new InvalidArgumentError(`${where}: unknown ${noun} '${key}' (known: ${Object.keys(specs).join(', ')})`);
    if (!fits(value, spec))
      throw new InvalidArgumentError(`${where}: ${noun} '${key}' must be ${describe(spec)}, got ${shown(value)}`);
  }
}
