/**
 * Runs the conformance cases on a backend, independent of any test runner, and returns a result
 * matrix. For each case: upload seeded inputs (applying the case's strided view on the device), run
 * the op, read the result, compare with the float64 oracle under the tolerance table, free everything
 * and check that the number of live buffers is back to where it was (no leaks).
 */
import {
  type BackendCapabilities,
  capabilitiesOf,
  type ComputeBackend,
  type DType,
  type HostArray,
  type NDArray,
  STRICT_CAPABILITIES,
} from '@polyhal/hal';
import { applyViewDevice, caseInputs, describeError, runDevice } from './case-exec.js';
import { compareOutputs } from './case-compare.js';
import { CASES, type Case } from './cases.js';
import { CONTRACT_CASES, type ContractCase } from './contract.js';

export { caseInputs } from './case-exec.js';

/** Makes a fresh backend (sync or async): the suite creates its own, and disposes it at the end. */
export type BackendFactory = () => ComputeBackend | Promise<ComputeBackend>;

/** The outcome of one case on one backend. */
export interface CaseResult {
  /** The case's id. */
  id: string;
  /** The op it exercised. */
  op: string;
  /** The case's dtype. */
  dtype: string;
  /** The case's kind (CaseKind), or `contract` for an error-contract case. */
  kind: string;
  /** Whether every output met its tolerance (or the expected typed error was thrown), without a leak. */
  pass: boolean;
  /** Largest |got − want| over the outputs. */
  maxAbsError: number;
  /** Largest relative error over the outputs. */
  maxRelError: number;
  /** Largest error in float32 ulps over the outputs. */
  maxUlpError: number;
  /** Elements outside the backend's guaranteed domain for the op (not compared). */
  skipped?: number;
  /**
   * Set when the case needs a dtype the backend does not have (`supportsDType`, e.g. float64 on webgpu):
   * the case passes when creating an array of it throws UnsupportedOpError naming it, as the HAL requires.
   */
  unsupported?: string;
  /** Why it failed (the first failing element, the error thrown, a leak); absent on a pass. */
  message?: string;
}

/** What runConformance returns: one result per case, the counts, and what ran where. */
export interface ConformanceResult {
  /** The backend's registry name. */
  backend: string;
  /** The backend's device. */
  deviceName: string;
  /** The JavaScript runtime and version (runtimeDescription()). */
  runtime: string;
  /** The arithmetic class whose tolerances were applied, from the backend's declared capabilities. */
  capabilities: BackendCapabilities;
  /** False when the backend declares no capabilities (the strict class applies). */
  capabilitiesDeclared: boolean;
  /** The run seed the inputs were drawn with. */
  seed: number;
  /** One result per case run, in suite order. */
  results: CaseResult[];
  /** Cases that passed. */
  passed: number;
  /** Cases that failed. */
  failed: number;
  /** Set when a case timed out and the run stopped there: that case's id. */
  timedOut?: string;
  /**
   * Set when the backend did not start (see `notStartedResult`): why, e.g. "BackendHookError: ...".
   * Every case is then a failed result, not run.
   */
  startError?: string;
}

/** Options of runConformance. */
export interface ConformanceOptions {
  /** Run seed (default 1): inputs are derived from it and the case id. */
  seed?: number;
  /** Only cases whose id contains this string (or matches this RegExp). */
  filter?: string | RegExp;
  /** Include the error-contract cases (default true). */
  contract?: boolean;
  /** Called after each case (progress reporting). */
  onResult?: (r: CaseResult, done: number, total: number) => void;
  /**
   * Milliseconds that the factory, and each case (its ops and reads), may take to settle (default
   * 30 000). The factory past it rejects the run with `ConformanceTimeoutError`; a case past it is a
   * failed result named by its id, and the run stops there (the backend may be wedged), its remaining
   * cases not run and `timedOut` set.
   */
  timeoutMs?: number;
}

/** Default of `ConformanceOptions.timeoutMs`. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** A backend factory or a case that did not settle within `timeoutMs`; `what` names it. */
export class ConformanceTimeoutError extends Error {
  constructor(
    /** What did not settle: "the backend factory" or a case's id. */
    readonly what: string,
    /** The limit it ran past, in ms. */
    readonly timeoutMs: number,
  ) {
    super(`${what} did not settle within ${timeoutMs} ms`);
    this.name = 'ConformanceTimeoutError';
  }
}

/** `p`, or a `ConformanceTimeoutError` after `ms`; the timer keeps the process alive until then. */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ConformanceTimeoutError(what, ms)), ms);
  });
  return Promise.race([p, expired]).finally(() => clearTimeout(timer));
}

/** The runtime this runs in, with its version: `Node 20.20.2`, `Deno 2.9.6`, `Bun 1.4.4` or a browser's user agent. */
export function runtimeDescription(): string {
  const g = globalThis as {
    process?: { versions?: { node?: string; bun?: string } };
    Deno?: { version?: { deno?: string } };
    navigator?: { userAgent?: string };
  };
  if (g.Deno?.version?.deno) return `Deno ${g.Deno.version.deno}`;
  if (g.process?.versions?.bun) return `Bun ${g.process.versions.bun}`;
  if (g.process?.versions?.node) return `Node ${g.process.versions.node}`;
  return g.navigator?.userAgent ?? 'unknown runtime';
}

/** The dtypes a case creates arrays of: its own, its inputs' and a cast's target. */
export function caseDTypes(c: Case): DType[] {
  return [
    ...new Set([c.dtype, ...c.inputs.map((i) => i.dtype ?? c.dtype), ...(c.params?.dtype ? [c.params.dtype] : [])]),
  ];
}

/**
 * A case on a backend without one of its dtypes: passes when creating an array of each such dtype throws
 * UnsupportedOpError naming the dtype and allocates nothing.
 */
export function unsupportedCase(be: ComputeBackend, dtypes: DType[], base: Omit<CaseResult, 'pass'>): CaseResult {
  const live = be.liveBufferCount();
  for (const d of dtypes) {
    let error: unknown;
    try {
      be.free(be.full([1], 0, d));
    } catch (e) {
      error = e;
    }
    const name = (error as Error | undefined)?.name;
    if (name !== 'UnsupportedOpError' || !String((error as Error).message).includes(d) || be.liveBufferCount() !== live)
      return {
        ...base,
        pass: false,
        message: `the backend lacks ${d}, but creating one ${error ? `threw ${describeError(error)}` : 'worked'}`,
      };
  }
  return { ...base, pass: true, unsupported: `${dtypes.join(', ')}: UnsupportedOpError` };
}

/** Runs one case on a backend. Never throws: failures (including exceptions) are results. */
export async function runCase(be: ComputeBackend, c: Case, seed = 1): Promise<CaseResult> {
  const base = { id: c.id, op: c.op, dtype: c.dtype, kind: c.kind, maxAbsError: 0, maxRelError: 0, maxUlpError: 0 };
  const lacking = caseDTypes(c).filter((d) => !(be.supportsDType?.(d) ?? d !== 'float64'));
  if (lacking.length) return unsupportedCase(be, lacking, base);
  const baseline = be.liveBufferCount();
  const owned: NDArray[] = [];
  let failure: string | undefined;
  try {
    const host = caseInputs(c, seed);
    const devIn = c.inputs.map((spec, i) => {
      const x = be.fromArray(host[i]!, spec.shape, spec.dtype ?? c.dtype);
      owned.push(x);
      return applyViewDevice(be, x, spec);
    });
    const outs = runDevice(be, c, devIn);
    for (const o of outs) if (!owned.some((x) => x.buffer === o.buffer)) owned.push(o);
    const got: HostArray[] = [];
    for (const o of outs) got.push(await be.read(o));
    return compareOutputs(c, capabilitiesOf(be), host, outs, got, { ...base, pass: true });
  } catch (e) {
    failure = `threw ${describeError(e)}`;
    return { ...base, pass: false, message: failure };
  } finally {
    for (const x of owned) {
      try {
        be.free(x);
      } catch {
        /* already reported */
      }
    }
    const live = be.liveBufferCount();
    if (live !== baseline) {
      // A leak is a failure of the case even when the values were right; a failure already found stays the reason.
      const leak = `leak: ${live - baseline} buffer(s) still live after the case`;
      // biome-ignore lint/correctness/noUnsafeFinally: a leak turns a passing case into a failing one
      return { ...base, pass: false, message: failure ? `${failure}; ${leak}` : leak };
    }
  }
}

/** The suite's cases whose id contains `filter` (or matches it); all of them without one. */
export function selectCases(filter?: string | RegExp): Case[] {
  if (!filter) return [...CASES];
  return CASES.filter((c) => (typeof filter === 'string' ? c.id.includes(filter) : filter.test(c.id)));
}

/** The error-contract cases whose id contains `filter` (or matches it); all of them without one. */
export function selectContractCases(filter?: string | RegExp): ContractCase[] {
  if (!filter) return [...CONTRACT_CASES];
  return CONTRACT_CASES.filter((c) => (typeof filter === 'string' ? c.id.includes(filter) : filter.test(c.id)));
}

/**
 * Runs every case (or the filtered ones) on a fresh backend from `factory` and returns the result
 * matrix. Independent of any test runner; see `defineConformanceTests` for jest.
 */
export async function runConformance(
  factory: BackendFactory,
  options: ConformanceOptions = {},
): Promise<ConformanceResult> {
  const seed = options.seed ?? 1;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!(timeoutMs > 0)) throw new RangeError(`timeoutMs must be a positive number of milliseconds, got ${timeoutMs}`);
  const made = Promise.resolve().then(factory);
  let be: ComputeBackend;
  try {
    be = await withTimeout(made, timeoutMs, 'the backend factory');
  } catch (e) {
    // A factory that settles after its timeout: dispose of what it made.
    if (e instanceof ConformanceTimeoutError)
      made.then(
        (late) => late?.dispose?.(),
        () => undefined,
      );
    throw e;
  }
  let capabilities: BackendCapabilities;
  try {
    capabilities = capabilitiesOf(be); // an unknown arithmetic class fails the run, never loosens it
  } catch (e) {
    be.dispose();
    throw new Error(`${be.name}: ${(e as Error).message}`);
  }
  const cases = selectCases(options.filter);
  const contract = options.contract === false ? [] : selectContractCases(options.filter);
  const total = cases.length + contract.length;
  const results: CaseResult[] = [];
  let timedOut: string | undefined;
  const timed = async (
    id: string,
    run: () => Promise<CaseResult>,
    stub: Omit<CaseResult, 'pass' | 'maxAbsError' | 'maxRelError' | 'maxUlpError'>,
  ): Promise<CaseResult> => {
    try {
      return await withTimeout(Promise.resolve().then(run), timeoutMs, `case ${id}`);
    } catch (e) {
      // A case that throws (a hook failing outside the case's own checks) is a failed result, and the run goes on.
      if (!(e instanceof ConformanceTimeoutError))
        return {
          ...stub,
          pass: false,
          maxAbsError: 0,
          maxRelError: 0,
          maxUlpError: 0,
          message: `threw ${describeError(e)}`,
        };
      timedOut = id;
      return {
        ...stub,
        pass: false,
        maxAbsError: 0,
        maxRelError: 0,
        maxUlpError: 0,
        message: `timed out: ${e.message} (the run stops here)`,
      };
    }
  };
  try {
    for (const c of cases) {
      const r = await timed(c.id, () => runCase(be, c, seed), { id: c.id, op: c.op, dtype: c.dtype, kind: c.kind });
      results.push(r);
      options.onResult?.(r, results.length, total);
      if (timedOut) break;
    }
    for (const c of timedOut ? [] : contract) {
      const r = await timed(c.id, () => c.run(be, factory), { id: c.id, op: 'contract', dtype: '-', kind: 'contract' });
      results.push(r);
      options.onResult?.(r, results.length, total);
      if (timedOut) break;
    }
  } finally {
    try {
      be.dispose();
    } catch (e) {
      results.push({
        id: 'dispose',
        op: 'dispose',
        dtype: '-',
        kind: 'contract',
        pass: false,
        maxAbsError: 0,
        maxRelError: 0,
        maxUlpError: 0,
        message: `dispose() threw ${describeError(e)}`,
      });
    }
  }
  const passed = results.filter((r) => r.pass).length;
  return {
    backend: be.name,
    deviceName: be.deviceName,
    runtime: runtimeDescription(),
    capabilities,
    capabilitiesDeclared: be.capabilities !== undefined,
    seed,
    results,
    passed,
    failed: results.length - passed,
    ...(timedOut ? { timedOut } : {}),
  };
}

/**
 * The result of a run whose backend did not start — its factory threw, did not settle, or declared
 * an unknown arithmetic class (what `runConformance` rejects with): every case that `options` select
 * is a failed result, not run, with the reason; `startError` says why. So a report always prints.
 */
export function notStartedResult(backend: string, error: unknown, options: ConformanceOptions = {}): ConformanceResult {
  const reason = describeError(error);
  const fail = {
    pass: false,
    maxAbsError: 0,
    maxRelError: 0,
    maxUlpError: 0,
    message: `not run: the backend did not start: ${reason}`,
  };
  const results: CaseResult[] = [
    ...selectCases(options.filter).map((c) => ({ id: c.id, op: c.op, dtype: c.dtype, kind: c.kind, ...fail })),
    ...(options.contract === false ? [] : selectContractCases(options.filter)).map((c) => ({
      id: c.id,
      op: 'contract',
      dtype: '-',
      kind: 'contract',
      ...fail,
    })),
  ];
  return {
    backend,
    deviceName: 'did not start',
    runtime: runtimeDescription(),
    capabilities: STRICT_CAPABILITIES,
    capabilitiesDeclared: false,
    seed: options.seed ?? 1,
    results,
    passed: 0,
    failed: results.length,
    startError: reason,
  };
}
