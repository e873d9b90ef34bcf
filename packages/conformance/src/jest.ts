/**
 * A jest adapter: one test per case per backend. Pass jest's globals explicitly so this package does
 * not depend on jest:
 *   defineConformanceTests('cpu', () => new CpuBackend(), { describe, test, expect, beforeAll, afterAll });
 */
import type { ComputeBackend } from '@polyhal/hal';
import { type BackendFactory, type CaseResult, runCase, selectCases, selectContractCases } from './runner.js';

export interface JestLike {
  describe: (name: string, fn: () => void) => void;
  test: (name: string, fn: () => Promise<void>, timeout?: number) => void;
  expect: (v: unknown) => { toBe: (w: unknown) => void };
  beforeAll: (fn: () => Promise<void>, timeout?: number) => void;
  afterAll: (fn: () => void | Promise<void>) => void;
}

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
