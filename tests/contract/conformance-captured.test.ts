// The conformance suite in captured mode (issue #38, item 2): on webgpu, the backend that captures, every case is
// captured and replayed with new inputs (judged against the float64 oracle) and with its own (bit for bit against
// the eager run). The whole suite takes about 20 s on lavapipe, so CI runs all of it. cpu and wasm compute as
// called: their captured mode is their eager mode, and the run says so.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  type CapturedCaseResult,
  capturedTextReport,
  capturedVerdict,
  defineCapturedConformanceTests,
  gatherView,
  inputChangeCounts,
  replayInputs,
  runCapturedCase,
  runCapturedConformance,
  selectCases,
} from '@polyhal/conformance';
import type { CapturedWork, ComputeBackend, DeviceBuffer, HostArray, NDArray } from '@polyhal/hal';
import { REPO_BACKENDS } from '../support/backends.js';

const jestGlobals = { describe, test, expect: expect as never, beforeAll, afterAll };

// No case's capture breaks on webgpu (none of its ops reads a value on the host): the list is empty.
defineCapturedConformanceTests('webgpu', REPO_BACKENDS['webgpu']!, jestGlobals, { expectBroken: [] });

const only = (id: string) => selectCases().find((c) => c.id === id)!;

/** `be` with its capture's CapturedWork replaced by `wrap(work)`; every other member as it is. */
function withWork(be: ComputeBackend, wrap: (work: CapturedWork) => CapturedWork): ComputeBackend {
  return new Proxy(be, {
    get(target, prop) {
      if (prop === 'endCapture')
        return (outputs: readonly DeviceBuffer[]) => {
          const r = target.endCapture!(outputs);
          return 'work' in r ? { work: wrap(r.work) } : r;
        };
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** The recording's members, with `replay` replaced. */
const replacing = (work: CapturedWork, replay: CapturedWork['replay']): CapturedWork => ({
  kernels: work.kernels,
  copies: work.copies,
  reservedBytes: work.reservedBytes,
  replay,
  read: (i) => work.read(i),
  copyOutput: (i, s) => work.copyOutput(i, s),
  release: () => work.release(),
});

describe('captured mode: what the runner catches (webgpu)', () => {
  let be: ComputeBackend;
  beforeAll(async () => {
    be = await REPO_BACKENDS['webgpu']!();
  });
  afterAll(() => be?.dispose());
  const matmul = only('matmul/float32/[3,5,7]x[3,7,4]');

  test('a faithful recording passes: new inputs near the oracle, its own inputs the eager bits', async () => {
    const r = await runCapturedCase(be, matmul);
    expect(r).toMatchObject({ pass: true, capture: 'replayed', inputs: 2, inputsChanged: 2 });
    expect(r.kernels).toBeGreaterThan(0);
  });

  test('a replay that encodes nothing fails the new-input check: the outputs keep the capture run values', async () => {
    const r = await runCapturedCase(
      withWork(be, (w) => replacing(w, () => undefined)),
      matmul,
    );
    expect(r.pass).toBe(false);
    expect(r.message).toMatch(/^replay with new inputs: output 0\[\d+\]: got .* want /);
  });

  test('a recording that keeps the inputs of its first replay fails the same-input check', async () => {
    let first: readonly (HostArray | NDArray)[] | undefined;
    const r = await runCapturedCase(
      withWork(be, (w) => replacing(w, (data) => w.replay((first ??= data)))),
      matmul,
    );
    expect(r.pass).toBe(false);
    expect(r.message).toMatch(
      /^replay with the same inputs: output 0\[\d+\] is .*, the eager run's .* \(bits differ\)/,
    );
  });

  test('a host read breaks the capture: reported with the reason; it fails unless listed', async () => {
    // exp that first reads its input: the read makes endCapture report the capture broken
    const reading = new Proxy(be, {
      get(target, prop) {
        if (prop === 'unary')
          return (op: never, x: NDArray) => {
            void target.read(x);
            return target.unary(op, x);
          };
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const exp = only('exp/float32/[17]');
    const r = await runCapturedCase(reading, exp);
    expect(r).toMatchObject({ pass: true, capture: 'broken' });
    expect(r.broken).toMatch(/a read of buffer #\d+ during the capture/);
    expect(capturedVerdict(r, new Set())).toMatch(/^FAIL exp\/float32\/\[17\]: the capture is broken/);
    expect(capturedVerdict(r, new Set([exp.id]))).toBe('pass');
    const replayed = await runCapturedCase(be, exp);
    expect(capturedVerdict(replayed, new Set([exp.id]))).toMatch(/listed in expectBroken, but it replays/);
    expect(capturedTextReport([runOf([r])])).toMatch(/broken captures \(the op reads a value on the host\): \n {4}exp/);
  });

  test('random ops have no array input: seed and offset are recorded, a replay gives the eager bits', async () => {
    const c = selectCases().find((x) => x.op === 'randomNormal' && x.params!.shape![0]! > 100)!;
    const r = await runCapturedCase(be, c);
    expect(r).toMatchObject({ pass: true, capture: 'replayed', inputs: 0, inputsChanged: 0 });
  });
});

/** A run result around `results` (for the report). */
function runOf(results: CapturedCaseResult[]) {
  return {
    backend: 'webgpu',
    deviceName: 'test',
    runtime: 'Node',
    captures: true,
    seed: 1,
    replaySeed: 2,
    results,
    passed: results.filter((r) => r.pass).length,
    failed: results.filter((r) => !r.pass).length,
    replayed: results.filter((r) => r.capture === 'replayed').length,
    broken: results.filter((r) => r.capture === 'broken').length,
    unsupported: results.filter((r) => r.capture === 'unsupported').length,
    ms: 1,
  };
}

describe('captured mode on backends that compute as called', () => {
  for (const name of ['cpu', 'wasm']) {
    test(`${name}: no case runs, and the run says the backend computes as called`, async () => {
      const r = await runCapturedConformance(REPO_BACKENDS[name]!);
      expect(r).toMatchObject({ backend: name, captures: false, results: [], failed: 0 });
      expect(r.note).toMatch(/computes as called/);
      expect(capturedTextReport([r])).toMatch(
        new RegExp(`^captured mode on ${name} .*computes as called.*no case run`),
      );
    });
  }
});

describe('captured mode helpers', () => {
  test('new inputs: drawn with the other seed; seed-independent ones rotated; empty ones as they are', () => {
    const special = only('exp/float32/special');
    const host = [[1, 2, 3]];
    expect(
      replayInputs({ ...special, inputs: [{ ...special.inputs[0]!, shape: [3], values: [1, 2, 3] }] }, host, 2),
    ).toEqual([[[2, 3, 1]], 1]);
    const empty = only('exp/float32/[0]');
    expect(replayInputs(empty, [[]], 2)).toEqual([[[]], 0]);
    const [next, changed] = replayInputs(matmulCase(), [[0], [0]], 2);
    expect(changed).toBe(2);
    expect(next[0]!.length).toBe(105);
  });

  test('the report counts cases by how many of their inputs holding elements the new inputs changed', () => {
    const row = (inputs: number, inputsChanged: number, capture: 'replayed' | 'broken' = 'replayed') =>
      ({ id: 'x', op: 'x', dtype: 'float32', kind: 'unary', pass: true, capture, inputs, inputsChanged }) as never;
    const rows = [row(2, 2), row(2, 1), row(1, 0), row(0, 0), row(3, 3), row(1, 1, 'broken')];
    expect(inputChangeCounts(rows)).toEqual({ all: 2, some: 1, none: 1, empty: 1 });
  });

  test('gatherView reads a strided, offset view of a whole buffer row-major', () => {
    const data = Float32Array.from({ length: 12 }, (_, i) => i);
    // a [2, 3] view at offset 1 with strides [4, -1]: rows 1 + 4i, walking backwards from column 2
    expect([...gatherView(data, { shape: [2, 3], strides: [4, -1], offset: 3 })]).toEqual([3, 2, 1, 7, 6, 5]);
    expect([...gatherView(data, { shape: [2, 2], strides: [0, 1], offset: 5 })]).toEqual([5, 6, 5, 6]);
  });
});

function matmulCase() {
  return only('matmul/float32/[3,5,7]x[3,7,4]');
}
