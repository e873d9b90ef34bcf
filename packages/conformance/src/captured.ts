/**
 * The conformance suite in captured mode (hal/src/capture.ts): on a backend that captures (webgpu), each
 * case is run eagerly; then captured — `beginCapture` over its input buffers, the op (its views included),
 * `endCapture` over its output buffers — and replayed twice:
 * 1. with new input values of the same shapes and dtypes (regenerated with `replaySeed`; inputs the seed does
 *    not change — explicit values, the fixed head of `special` inputs — rotated by one element), judged against
 *    the float64 oracle at those values within the op's tolerance: nothing input-dependent may be baked into
 *    the recording;
 * 2. with the case's own inputs, which must give the eager run's bits exactly (and so must the run made while
 *    capturing). Replay 1 comes first, so replay 2 must recompute what replay 1 overwrote. Replay 1 takes host
 *    data, replay 2 arrays of the backend (copied in on the device): both forms `CapturedWork.replay` takes.
 * A case whose capture is broken (its op reads a value on the host) is counted with the reason; its capture run
 * must still give the eager bits. Random ops and optimizer steps take their seed, offset and hyper-parameters as
 * host numbers: they are constants of the recording, so a replay draws the same numbers (the op is a function of
 * them) and the new-input replay changes only array inputs. The error-contract cases are not run (they check
 * what is thrown, which is not work to record). A backend without capture (cpu, wasm) computes as called: the
 * run says so and runs no case.
 */
import {
  capabilitiesOf,
  type ComputeBackend,
  type HostArray,
  isWholeBuffer,
  type NDArray,
  newHostArray,
} from '@polyhal/hal';
import { compareOutputs } from './case-compare.js';
import { applyViewDevice, caseInputs, describeError, runDevice } from './case-exec.js';
import type { Case } from './cases.js';
import {
  type BackendFactory,
  type CaseResult,
  caseDTypes,
  DEFAULT_TIMEOUT_MS,
  runtimeDescription,
  selectCases,
  unsupportedCase,
  withTimeout,
} from './runner.js';

/** What happened to a case's capture. */
export type CaptureOutcome = 'replayed' | 'broken' | 'unsupported';

/** One case in captured mode: CaseResult's errors are those of the new-input replay against the oracle. */
export interface CapturedCaseResult extends CaseResult {
  /**
   * `replayed`; `broken` (endCapture said why: `broken`); `unsupported`: not run, the backend lacks a dtype of the
   * case (a pass, as in the eager suite) or has no capture (a failure that says the backend computes as called).
   */
  capture: CaptureOutcome;
  /** Why the capture cannot be replayed, as endCapture reported it. */
  broken?: string;
  /** Kernels one replay encodes. */
  kernels?: number;
  /** Buffer copies one replay encodes (uploads made while capturing replay as copies). */
  copies?: number;
  /** Inputs whose values the new-input replay changed (of `inputs`; the others hold one value, or equal ones). */
  inputsChanged?: number;
  /** The case's array inputs that hold elements (an empty one has no value to change). */
  inputs?: number;
}

/** What runCapturedConformance returns. */
export interface CapturedConformanceResult {
  /** The backend's registry name. */
  backend: string;
  /** The backend's device. */
  deviceName: string;
  /** The JavaScript runtime and version (runtimeDescription()). */
  runtime: string;
  /** Whether the backend captures (beginCapture/endCapture); false: no case ran (see `note`). */
  captures: boolean;
  /** Said when the backend does not capture. */
  note?: string;
  /** The run seed the cases' own inputs were drawn with. */
  seed: number;
  /** The seed the new-input replay's inputs were drawn with. */
  replaySeed: number;
  /** One result per case run, in suite order. */
  results: CapturedCaseResult[];
  /** Cases that passed. */
  passed: number;
  /** Cases that failed. */
  failed: number;
  /** Cases whose capture was replayed. */
  replayed: number;
  /** Cases whose capture was broken (listed with the reason). */
  broken: number;
  /** Cases not run: the backend lacks one of their dtypes. */
  unsupported: number;
  /** Milliseconds the cases took. */
  ms: number;
  /** Set when a case timed out and the run stopped there: that case's id. */
  timedOut?: string;
}

/** Options of runCapturedConformance. */
export interface CapturedOptions {
  /** Run seed (default 1), as runConformance's. */
  seed?: number;
  /** Seed of the new-input replay (default seed + 1, modulo 2^32). */
  replaySeed?: number;
  /** Only cases whose id contains this string (or matches this RegExp); or these cases. */
  filter?: string | RegExp;
  /** The cases to run instead of selecting by `filter` (e.g. a stratified subset). */
  cases?: readonly Case[];
  /** Called after each case. */
  onResult?: (r: CapturedCaseResult, done: number, total: number) => void;
  /** Milliseconds the factory and each case may take (default 30 000); past it the run stops. */
  timeoutMs?: number;
}

/** What a backend without capture computes: the eager run is the only run. */
export const NO_CAPTURE_NOTE =
  'computes as called (no beginCapture/endCapture): there is no recording to replay, so its captured mode is its ' +
  'eager mode, which the conformance suite checks';

/** The default seed of the new-input replay for run seed `seed`. */
export const defaultReplaySeed = (seed: number): number => (seed + 1) % 2 ** 32;

/** `values` rotated left by one element (an input whose values a new seed does not change). */
const rotated = (values: readonly number[]): number[] => [...values.slice(1), ...values.slice(0, 1)];

const sameValues = (a: readonly number[], b: readonly number[]): boolean => a.every((v, i) => Object.is(v, b[i]));

/**
 * The inputs of the new-input replay of `c`: drawn with `replaySeed`; an input that this does not change (explicit
 * values, a `special` input within SPECIAL_VALUES' fixed head) rotated by one. Returns them and how many differ
 * from `host` (an input of equal elements stays as it is).
 */
export function replayInputs(c: Case, host: readonly number[][], replaySeed: number): [number[][], number] {
  const drawn = caseInputs(c, replaySeed);
  let changed = 0;
  const out = drawn.map((v, i) => {
    const old = host[i]!;
    const next = sameValues(v, old) ? rotated(old) : v;
    if (!sameValues(next, old)) changed++;
    return next;
  });
  return [out, changed];
}

/** The elements of view `v` of a buffer whose contents are `data`, row-major. */
export function gatherView(data: HostArray, v: Pick<NDArray, 'shape' | 'strides' | 'offset'>): HostArray {
  const n = v.shape.reduce((p, d) => p * d, 1);
  const out = new (data.constructor as new (n: number) => HostArray)(n);
  const idx = v.shape.map(() => 0);
  let pos = v.offset;
  for (let i = 0; i < n; i++) {
    out[i] = data[pos]!;
    for (let d = v.shape.length - 1; d >= 0; d--) {
      pos += v.strides[d]!;
      if (++idx[d]! < v.shape[d]!) break;
      pos -= v.strides[d]! * v.shape[d]!;
      idx[d] = 0;
    }
  }
  return out;
}

/** The first element where `got` and `want` differ in bits (their bytes), or -1. */
export function firstBitDifference(got: HostArray, want: HostArray): number {
  if (got.length !== want.length || got.constructor !== want.constructor) return 0;
  const size = got.BYTES_PER_ELEMENT;
  const a = new Uint8Array(got.buffer, got.byteOffset, got.byteLength);
  const b = new Uint8Array(want.buffer, want.byteOffset, want.byteLength);
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return Math.floor(i / size);
  return -1;
}

/** Why `got` (outputs of `what`) is not the eager run's bits, or undefined when it is. */
function bitMismatch(what: string, got: readonly HostArray[], eager: readonly HostArray[]): string | undefined {
  for (let k = 0; k < eager.length; k++) {
    const i = firstBitDifference(got[k]!, eager[k]!);
    if (i >= 0)
      return got[k]!.length !== eager[k]!.length
        ? `${what}: output ${k} has ${got[k]!.length} elements, eager ${eager[k]!.length}`
        : `${what}: output ${k}[${i}] is ${got[k]![i]}, the eager run's ${eager[k]![i]} (bits differ)`;
  }
  return undefined;
}

/** Host data for input `spec`'s buffer (the input's dtype's host array). */
const hostData = (c: Case, i: number, values: readonly number[]): HostArray => {
  const out = newHostArray(c.inputs[i]!.dtype ?? c.dtype, values.length);
  out.set(values);
  return out;
};

/**
 * Runs one case in captured mode on `be` (which must capture: beginCapture, endCapture). Never throws: failures are
 * results. See the module's comment for what is checked.
 */
export async function runCapturedCase(
  be: ComputeBackend,
  c: Case,
  seed = 1,
  replaySeed = defaultReplaySeed(seed),
): Promise<CapturedCaseResult> {
  const base = { id: c.id, op: c.op, dtype: c.dtype, kind: c.kind, maxAbsError: 0, maxRelError: 0, maxUlpError: 0 };
  const lacking = caseDTypes(c).filter((d) => !(be.supportsDType?.(d) ?? d !== 'float64'));
  if (lacking.length) return { ...unsupportedCase(be, lacking, base), capture: 'unsupported' };
  if (!be.beginCapture || !be.endCapture)
    return { ...base, pass: false, capture: 'unsupported', message: `${be.name} ${NO_CAPTURE_NOTE}` };
  const baseline = be.liveBufferCount();
  const owned = new Set<NDArray['buffer']>();
  const upload = (values: readonly number[][]): NDArray[] =>
    c.inputs.map((spec, i) => {
      const x = be.fromArray(values[i]!, spec.shape, spec.dtype ?? c.dtype);
      owned.add(x.buffer);
      return x;
    });
  let result: CapturedCaseResult;
  try {
    const host = caseInputs(c, seed);
    const filled = host.filter((v) => v.length > 0).length;
    // 1. eager
    const eagerIn = upload(host);
    const eagerOuts = runDevice(
      be,
      c,
      eagerIn.map((x, i) => applyViewDevice(be, x, c.inputs[i]!)),
    );
    for (const o of eagerOuts) owned.add(o.buffer);
    const eager: HostArray[] = [];
    for (const o of eagerOuts) eager.push(await be.read(o));
    // 2. capture
    const ins = upload(host);
    be.beginCapture(ins.map((x) => x.buffer));
    let outs: NDArray[];
    try {
      outs = runDevice(
        be,
        c,
        ins.map((x, i) => applyViewDevice(be, x, c.inputs[i]!)),
      );
      for (const o of outs) owned.add(o.buffer);
    } catch (e) {
      be.abortCapture?.();
      throw e;
    }
    const slots = [...new Set(outs.map((o) => o.buffer))];
    const r = be.endCapture(slots);
    const captured: HostArray[] = [];
    for (const o of outs) captured.push(await be.read(o));
    const captureRun = bitMismatch('the run made while capturing', captured, eager);
    if ('broken' in r) {
      result = { ...base, pass: !captureRun, capture: 'broken', broken: r.broken, inputs: filled };
      if (captureRun) result.message = captureRun;
    } else {
      const work = r.work;
      try {
        const readOuts = async (): Promise<HostArray[]> => {
          const got: HostArray[] = [];
          for (const o of outs) {
            const whole = await work.read(slots.indexOf(o.buffer));
            got.push(isWholeBuffer(o) ? whole : gatherView(whole, o));
          }
          return got;
        };
        // 3. replay with new inputs: the oracle at those inputs
        const [next, changed] = replayInputs(c, host, replaySeed);
        work.replay(next.map((v, i) => hostData(c, i, v)));
        const atNew = compareOutputs(c, capabilitiesOf(be), next, outs, await readOuts(), { ...base, pass: true });
        if (!atNew.pass) atNew.message = `replay with new inputs: ${atNew.message}`;
        // 4. replay with the case's inputs, as arrays of the backend (copied on the device): the eager bits
        work.replay(upload(host));
        const again = bitMismatch('replay with the same inputs', await readOuts(), eager);
        const message = captureRun ?? (atNew.pass ? again : atNew.message);
        result = {
          ...atNew,
          pass: atNew.pass && !captureRun && !again,
          ...(message ? { message } : {}),
          capture: 'replayed',
          kernels: work.kernels,
          copies: work.copies,
          inputsChanged: changed,
          inputs: filled,
        };
      } finally {
        work.release();
      }
    }
  } catch (e) {
    be.abortCapture?.();
    result = { ...base, pass: false, capture: 'replayed', message: `threw ${describeError(e)}` };
  }
  for (const b of owned) {
    try {
      be.deallocate(b);
    } catch {
      /* already reported */
    }
  }
  const live = be.liveBufferCount();
  if (live !== baseline) {
    const leak = `leak: ${live - baseline} buffer(s) still live after the case`;
    return { ...result, pass: false, message: result.message ? `${result.message}; ${leak}` : leak };
  }
  return result;
}

/**
 * Runs every case (or the selected ones) in captured mode on a fresh backend from `factory`, which it disposes at
 * the end. A backend without capture runs no case: `captures` is false and `note` says why.
 */
export async function runCapturedConformance(
  factory: BackendFactory,
  options: CapturedOptions = {},
): Promise<CapturedConformanceResult> {
  const seed = options.seed ?? 1;
  const replaySeed = options.replaySeed ?? defaultReplaySeed(seed);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const be = await withTimeout(Promise.resolve().then(factory), timeoutMs, 'the backend factory');
  const captures = typeof be.beginCapture === 'function' && typeof be.endCapture === 'function';
  const cases = captures ? (options.cases ?? selectCases(options.filter)) : [];
  const results: CapturedCaseResult[] = [];
  let timedOut: string | undefined;
  const t0 = performance.now();
  try {
    for (const c of cases) {
      let r: CapturedCaseResult;
      try {
        r = await withTimeout(runCapturedCase(be, c, seed, replaySeed), timeoutMs, `case ${c.id}`);
      } catch (e) {
        timedOut = c.id;
        const stub = { id: c.id, op: c.op, dtype: c.dtype, kind: c.kind, maxAbsError: 0, maxRelError: 0 };
        const message = `timed out: ${describeError(e)} (the run stops here)`;
        r = { ...stub, pass: false, maxUlpError: 0, capture: 'replayed', message };
      }
      results.push(r);
      options.onResult?.(r, results.length, cases.length);
      if (timedOut) break;
    }
  } finally {
    be.dispose();
  }
  const count = (o: CaptureOutcome) => results.filter((r) => r.capture === o).length;
  const passed = results.filter((r) => r.pass).length;
  return {
    backend: be.name,
    deviceName: be.deviceName,
    runtime: runtimeDescription(),
    captures,
    ...(captures ? {} : { note: `${be.name} ${NO_CAPTURE_NOTE}` }),
    seed,
    replaySeed,
    results,
    passed,
    failed: results.length - passed,
    replayed: count('replayed'),
    broken: count('broken'),
    unsupported: count('unsupported'),
    ms: performance.now() - t0,
    ...(timedOut ? { timedOut } : {}),
  };
}
