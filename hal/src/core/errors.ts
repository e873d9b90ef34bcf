/**
 * Typed errors of the HAL. Every error a backend raises on bad input is one of these, with a message
 * that says what was wrong and what to do. Catch the base class `PolyHalError` to catch them all.
 */
export class PolyHalError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** Shapes that cannot be combined: broadcasting, matmul inner dimensions, reshape sizes, data length. */
export class ShapeMismatchError extends PolyHalError {
  constructor(
    message: string,
    /** The shapes involved, in the order the message names them (empty when the message says it all). */
    readonly shapes: readonly (readonly number[])[] = [],
  ) {
    super(message);
  }
}

/** Operands of different dtypes, or a dtype the operation does not take. */
export class DTypeError extends PolyHalError {}

/** An allocation over `memoryAvailable()` or the configured memory limit. Nothing was allocated. */
export class OutOfMemoryError extends PolyHalError {
  /**
   * `detail`, when given, says which limit was hit (a device's maxStorageBufferBindingSize, the engine's
   * largest typed array, ...) in place of the default text, which blames the backend's memoryLimit.
   */
  constructor(
    /** Bytes the failed allocation asked for. */
    readonly requestedBytes: number,
    /** Bytes that could still be allocated when it failed (memoryAvailable()). */
    readonly availableBytes: number,
    backend: string,
    detail?: string,
  ) {
    super(
      detail !== undefined
        ? `${backend}: cannot allocate ${requestedBytes} bytes: ${detail}`
        : `${backend}: cannot allocate ${requestedBytes} bytes, only ${availableBytes} available ` +
            `(free buffers with deallocate()/dispose() or raise the backend's memoryLimit)`,
    );
  }
}

/** A buffer used after `deallocate`, or deallocated twice. */
export class UseAfterFreeError extends PolyHalError {}

/** A backend that cannot run here; `reason` says why (no adapter, no SIMD, ...). */
export class BackendUnavailableError extends PolyHalError {
  constructor(
    /** The registry name of the backend (`webgpu`, `wasm`, ...). */
    readonly backend: string,
    /** Why it cannot run: no adapter, no SIMD, a failed probe's message, ... */
    readonly reason: string,
  ) {
    super(`backend '${backend}' is unavailable: ${reason}`);
  }
}

/**
 * An op that a backend does not implement for a dtype, or an op name the HAL does not know
 * (`binary('pow', ...)`); `hint` lists what is available.
 */
export class UnsupportedOpError extends PolyHalError {
  constructor(
    /** The op's name as called (`matmul`, `pow`, an unknown name as given). */
    readonly op: string,
    /** The dtype it was called with. */
    readonly dtype: string,
    /** The backend's registry name. */
    readonly backend: string,
    hint?: string,
  ) {
    super(`op '${op}' is not supported for dtype ${dtype} on backend '${backend}'${hint ? ` (${hint})` : ''}`);
  }
}

/** A backend name that no registered backend has; `available` lists the registered names. */
export class UnknownBackendError extends PolyHalError {
  constructor(
    /** The name asked for (an option, POLYHAL_BACKEND or polyhal.config.json). */
    readonly requested: string,
    /** The names registered at the time. */
    readonly available: readonly string[],
    hint?: string,
  ) {
    super(
      `unknown backend '${requested}'; available backends: ` +
        `${available.join(', ') || '(none registered)'}${hint ? ` (${hint})` : ''}`,
    );
  }
}

/** Operands that live on different backends (or backend instances); the message names both. */
export class DeviceMismatchError extends PolyHalError {}

/** An argument out of its domain: an axis out of range, a repeated axis, a bad permutation, a negative size. */
export class InvalidArgumentError extends PolyHalError {}

/**
 * A backend class built on BaseBackend that lacks required hooks (hal/src/contract/hooks.ts), thrown by the
 * constructor so it surfaces at once rather than as "this.createStorage is not a function" inside the
 * first op. `missing` lists every missing hook by name; the message gives each one's signature.
 */
export class BackendHookError extends PolyHalError {
  constructor(
    /** The backend class's name. */
    readonly backend: string,
    /** Every required hook the class lacks, by name. */
    readonly missing: readonly string[],
    signatures: readonly string[] = missing,
  ) {
    super(
      `${backend} does not implement ${missing.length} required ` +
        `hook${missing.length === 1 ? '' : 's'} of BaseBackend: ` +
        `${signatures.join('; ')} (define ${missing.length === 1 ? 'it' : 'them'} as methods of the ` +
        `class; see docs/WRITING-A-BACKEND.md)`,
    );
  }
}

/** A short description of a bad value for messages: `null`, `undefined`, `'text'`, `[1, 2]`, `object`. */
export function describeValue(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  if (typeof v === 'string') return `'${v}'`;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v)) return v.length <= 8 ? `[${v.map(describeValue).join(', ')}]` : `an array of ${v.length}`;
  if (ArrayBuffer.isView(v)) return `a ${v.constructor.name}`;
  if (typeof v === 'function') return 'a function';
  return typeof v === 'object' && v.constructor && v.constructor !== Object ? `a ${v.constructor.name}` : 'an object';
}
