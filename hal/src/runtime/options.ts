/**
 * Backend options as data: each backend declares the options its factory takes (type, range, the
 * literal values it also accepts) once, as specs, and every way of passing them — a factory call,
 * `createBackend`, `polyhal.config.json` — is checked against that declaration before anything starts.
 * An unknown key or an ill-typed value throws InvalidArgumentError naming the key; it is never ignored or
 * coerced. The TypeScript type of the options is derived from the same specs (`OptionsOf`), and
 * docs/reference/OPTIONS.md is rendered from them (scripts/reference-docs.mjs).
 */
import { InvalidArgumentError } from '../core/errors.js';

/** One option: its JSON-level type, an optional range, and literal values accepted besides the type. */
export interface OptionSpec {
  /** 'object' is for values that cannot come from JSON (an injected GPUDevice). */
  type: 'integer' | 'number' | 'boolean' | 'string' | 'string[]' | 'object';
  /** Inclusive bounds for 'integer' and 'number'. */
  min?: number;
  /** Inclusive upper bound for 'integer' and 'number'. */
  max?: number;
  /** Literal values accepted as well (e.g. 'auto'); for type 'string', the only accepted values. */
  values?: readonly (string | number | boolean)[];
  /** One line for messages and docs, e.g. 'bytes of live buffers'. */
  doc?: string;
}

/** A set of options by key: what a backend declares (BackendEntry.options) and validateOptions checks. */
export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

/** The literal values of spec S (`values`), or never. */
type OptionLiterals<S> = S extends { readonly values: readonly (infer L)[] } ? L : never;

/** The TypeScript type of `type`: number, boolean, string (never when `values` lists the strings), string[], object. */
type OptionBase<S> = S extends { type: 'integer' | 'number' }
  ? number
  : S extends { type: 'boolean' }
    ? boolean
    : S extends { type: 'string' }
      ? [OptionLiterals<S>] extends [never]
        ? string
        : never
      : S extends { type: 'string[]' }
        ? string[]
        : object;

/**
 * The TypeScript type of the values spec S accepts: its `type` (integer and number → number, string[] →
 * string[], object → object) or its literal `values` (`{ type: 'integer', values: ['auto'] }` → number |
 * 'auto'; `{ type: 'string', values: ['op', 'batch'] }` → 'op' | 'batch').
 */
export type OptionValue<S extends OptionSpec> = OptionBase<S> | OptionLiterals<S>;

/**
 * The options object specs S describe: every key optional, of its spec's OptionValue, or of its type in
 * `Refined` where the spec's JSON-level type says too little (an 'object' that is a GPUDevice or a record
 * of strings, a 'string' that may also be null); each key's doc comment is the one written on its spec.
 * `WasmBackendOptions` is `OptionsOf<typeof WASM_OPTION_SPECS>`.
 */
export type OptionsOf<
  S extends OptionSpecs,
  Refined extends { [K in keyof Refined]: K extends keyof S ? unknown : never } = Record<never, never>,
> = {
  -readonly [K in keyof S]?: K extends keyof Refined ? Refined[K] : OptionValue<S[K]>;
};

/**
 * Declares option specs, keeping their literal types (`type`, `values`) so that `OptionsOf<typeof specs>`
 * is the options' TypeScript type: the specs are the one declaration of the options. Returns `specs`.
 */
export function defineOptions<const S extends OptionSpecs>(specs: S): S {
  return specs;
}

/** Options every backend takes (BaseBackendOptions = OptionsOf<typeof BASE_OPTION_SPECS>). */
export const BASE_OPTION_SPECS = defineOptions({
  /** Upper bound on live bytes; allocations past it throw OutOfMemoryError. */
  memoryLimit: { type: 'number', min: 1, doc: 'upper bound on live buffer bytes' },
});

/** The options every backend takes: `memoryLimit` (bytes). */
export type BaseBackendOptions = OptionsOf<typeof BASE_OPTION_SPECS>;

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
