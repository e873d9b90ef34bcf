// The accumulation cases (packages/conformance/src/cases-accumulation.ts) catch a backend whose sum adds
// float32 left to right: tests/support/fixtures/naive-sum-backend.mjs, the CPU backend with a naive float32 sum
// (so mean, logsumexp and softmax too) and cumsum, fails every one of them by value, while the CPU and the
// reference backends (float64 accumulation) pass them. Without them the naive backend passed every other
// case and contract case (2,515 when they were added): the other sums are too short or too evenly signed.
import { describe, expect, test } from '@jest/globals';
import { CpuBackend } from '@polyhal/backend-cpu';
import { ReferenceBackend } from '@polyhal/backend-reference';
import { type BackendFactory, runConformance, selectCases } from '@polyhal/conformance';

/** The id fragment of every accumulation case (ACCUMULATION_TAG of cases-accumulation.ts). */
const ACCUMULATION_TAG = '/accumulation/';

const ONLY = { filter: ACCUMULATION_TAG, contract: false } as const;
// a variable specifier: the fixture is plain JavaScript, loaded as a third party's module would be
const FIXTURE = '../support/fixtures/naive-sum-backend.mjs';
const naiveSum = async (): Promise<BackendFactory> => ((await import(FIXTURE)) as { default: BackendFactory }).default;

describe('accumulation cases', () => {
  const ids = selectCases(ACCUMULATION_TAG).map((c) => c.id);

  test('cover sum and mean over every axis form, and the composites built on sum', () => {
    const ops = new Set(selectCases(ACCUMULATION_TAG).map((c) => c.op));
    expect([...ops].sort()).toEqual(['cumsum', 'logsumexp', 'mean', 'softmax', 'sum']);
    for (const form of ['/axes=1/', '/axes=0/', '/axes=0,2/', '/keepdims/', '/[65536]/'])
      expect(ids.filter((id) => id.startsWith('sum/') && id.includes(form))).not.toEqual([]);
  });

  test('a float32 left-to-right sum and cumsum fail every one, each named, by value', async () => {
    expect(ids.length).toBeGreaterThan(0);
    const r = await runConformance(await naiveSum(), ONLY);
    expect(r.results.map((c) => c.id)).toEqual(ids);
    expect(r.results.filter((c) => !c.pass).map((c) => c.id)).toEqual(ids);
    // wrong values, not an exception or a leak
    for (const c of r.results) expect(`${c.id}: ${c.message}`).toMatch(/: output 0\[\d+\]: got -?[\d.e+-]+, want /);
  }, 120_000);

  test('the cpu and reference backends pass every one', async () => {
    expect(ids.length).toBeGreaterThan(0);
    for (const factory of [() => new CpuBackend(), () => new ReferenceBackend()]) {
      const r = await runConformance(factory, ONLY);
      expect(r.results.filter((c) => !c.pass).map((c) => `${c.id}: ${c.message}`)).toEqual([]);
      expect(r.passed).toBe(ids.length);
    }
  }, 120_000);
});
