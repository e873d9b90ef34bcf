/**
 * A jest adapter: one test per case per backend. Pass jest's globals explicitly so this package does
 * not depend on jest:
 *   defineConformanceTests('cpu', () => new CpuBackend(), { describe, test, expect, beforeAll, afterAll });
 */
import type { ComputeBackend } from '@polyhal/hal';
import { type BackendFactory, type CaseResult, runCase, selectCases, selectContractCases } from './runner.js';

/** The jest globals the adapter uses (jest's own, or any runner with the same shape: vitest's, ...). */
export interface JestLike {
  /** jest's `describe`. */
  describe: (name: string, fn: () => void) => void;
  /** jest's `test`, with a timeout in ms. */
  test: (name: string, fn: () => Promise<void>, timeout?: number) => void;
  /** jest's `expect`; only `toBe` is used. */
  expect: (v: unknown) => { toBe: (w: unknown) => void };
  /** jest's `beforeAll`, with a timeout in ms. */
  beforeAll: (fn: () => Promise<void>, timeout?: number) => void;
  /** jest's `afterAll`. */
  afterAll: (fn: () => void | Promise<void>) => void;
}

/**
 * Defines one jest test per conformance case and per error-contract case on the backend `factory` makes
 * (once, in beforeAll), under `describe('conformance: <name>')`; `filter` keeps cases whose id contains it.
 */
export function defineConformanceTests(
  name: string,
  factory: BackendFactory,
  j: JestLike,
  options: { seed?: number; filter?: string | RegExp } = {},
): void {
  j.describe(`conformance: ${name}`, () => {
    let be: ComputeBackend;
    j.beforeAll(async () => {
      be = await factory();
    }, 120_000);
    j.afterAll(() => be?.dispose());
    const check = (r: CaseResult): void => {
      // The message is part of the assertion so a failure says what went wrong.
      j.expect(r.pass ? 'pass' : `FAIL ${r.id}: ${r.message}`).toBe('pass');
    };
    for (const c of selectCases(options.filter)) {
      j.test(c.id, async () => check(await runCase(be, c, options.seed)), 60_000);
    }
    for (const c of selectContractCases(options.filter)) {
      j.test(c.id, async () => check(await c.run(be, factory)), 60_000);
    }
  });
}
