/**
 * A jest adapter for the captured mode (captured.ts): one test per case on a backend that captures. Pass jest's
 * globals explicitly, as for defineConformanceTests:
 *   defineCapturedConformanceTests('webgpu', () => createWebGpuBackend(), { describe, test, expect, beforeAll,
 *   afterAll });
 */
import type { ComputeBackend } from '@polyhal/hal';
import { type CapturedCaseResult, defaultReplaySeed, runCapturedCase } from './captured.js';
import type { Case } from './cases.js';
import type { JestLike } from './jest.js';
import { type BackendFactory, selectCases } from './runner.js';

/** Options of defineCapturedConformanceTests. */
export interface CapturedTestOptions {
  /** Run seed (default 1). */
  seed?: number;
  /** The new-input replay's seed (default seed + 1). */
  replaySeed?: number;
  /** Only cases whose id contains this string (or matches this RegExp). */
  filter?: string | RegExp;
  /** The cases to define tests for, instead of selecting by `filter`. */
  cases?: readonly Case[];
  /**
   * Ids of cases whose capture is expected to be broken (their op reads a value on the host): their test passes
   * when the capture reports broken and the run made while capturing gave the eager bits. Any other broken
   * capture fails its test, and so does a listed case that replays (update the list).
   */
  expectBroken?: readonly string[];
}

/** Why a captured-mode result fails its test, or 'pass'. */
export function capturedVerdict(r: CapturedCaseResult, expectBroken: ReadonlySet<string>): string {
  if (!r.pass) return `FAIL ${r.id}: ${r.message}`;
  if (r.capture === 'broken' && !expectBroken.has(r.id))
    return `FAIL ${r.id}: the capture is broken (${r.broken}), and the case is not listed in expectBroken`;
  if (r.capture !== 'broken' && expectBroken.has(r.id))
    return `FAIL ${r.id}: listed in expectBroken, but it ${r.capture === 'replayed' ? 'replays' : 'was not captured'}`;
  return 'pass';
}

/**
 * Defines one jest test per case in captured mode on the backend `factory` makes (once, in beforeAll), under
 * `describe('captured conformance: <name>')`. The backend must capture (beginCapture, endCapture): a backend that
 * computes as called has no captured mode, and each test fails saying so.
 */
export function defineCapturedConformanceTests(
  name: string,
  factory: BackendFactory,
  j: JestLike,
  options: CapturedTestOptions = {},
): void {
  const seed = options.seed ?? 1;
  const replaySeed = options.replaySeed ?? defaultReplaySeed(seed);
  const expectBroken = new Set(options.expectBroken ?? []);
  j.describe(`captured conformance: ${name}`, () => {
    let be: ComputeBackend;
    j.beforeAll(async () => {
      be = await factory();
    }, 120_000);
    j.afterAll(() => be?.dispose());
    for (const c of options.cases ?? selectCases(options.filter)) {
      j.test(
        c.id,
        async () =>
          j.expect(capturedVerdict(await runCapturedCase(be, c, seed, replaySeed), expectBroken)).toBe('pass'),
        60_000,
      );
    }
  });
}
