// The gradient-check tests shared by autograd.test.ts and autograd-losses.test.ts: each entry's
// gradient against central differences (gradCheck), with no buffer left behind.
import { expect, test } from '@jest/globals';
import { type GradCheckInput, gradCheck, type Tensor } from '@polyhal/autograd';
import type { ComputeBackend } from '@polyhal/hal';

/** A named objective of some inputs and the inputs' shapes and values. */
export type Check = [string, (xs: Tensor[]) => Tensor, GradCheckInput[]];

/** One test per check, on the backend `be()` returns when the test runs. */
export function gradCheckTests(be: () => ComputeBackend, checks: readonly Check[]): void {
  for (const [op, f, inputs] of checks) {
    test(`gradient check: ${op}`, async () => {
      const base = be().liveBufferCount();
      const r = await gradCheck(be(), f, inputs);
      expect(r.details).toEqual([]);
      expect(r.pass).toBe(true);
      expect(be().liveBufferCount()).toBe(base);
    });
  }
}
