// The softmax cross-entropy rule of hal/src/ops/index.ts (xlogy: a label-0 term contributes 0 unless its
// log-probability is NaN) holds on every path: each backend's fused kernel, the composite built from
// primitives, and the float64 oracle. The conformance cases softmaxCrossEntropy/.../special and
// .../masked check the fused kernels; here the composite runs the same cases.
import { describe, expect, test } from '@jest/globals';
import { BaseBackend, type ComputeBackend, type NDArray } from '@polyhal/hal';
import { CpuBackend } from '@polyhal/backend-cpu';
import { CASES, oSoftmaxCrossEntropy, ref, runCase } from '@polyhal/conformance';
import { REPO_BACKENDS, requiredBackends } from '../support/backends.js';

/** A CPU backend without the fused kernel: softmaxCrossEntropy is the HAL's composite. */
class CompositeCpu extends CpuBackend {
  override softmaxCrossEntropy(logits: NDArray, labels: NDArray, withGrad = false): { loss: NDArray; grad?: NDArray } {
    return BaseBackend.prototype.softmaxCrossEntropy.call(this, logits, labels, withGrad);
  }
}

const RULE_CASES = CASES.filter((c) => c.op === 'softmaxCrossEntropy' && /special|masked/.test(c.id));

describe('softmax cross-entropy: label-0 terms (xlogy rule)', () => {
  test('the rule cases exist', () => {
    expect(RULE_CASES.map((c) => c.id)).toEqual(
      expect.arrayContaining([
        'softmaxCrossEntropy/float32/[8,4]/special',
        'softmaxCrossEntropy/float32/[16,10]/masked/grad',
      ]),
    );
  });

  test.each(RULE_CASES.map((c) => [c.id, c] as const))('composite matches the oracle: %s', async (_id, c) => {
    const be = new CompositeCpu();
    try {
      const r = await runCase(be, c);
      expect(r.pass ? 'pass' : r.message).toBe('pass');
    } finally {
      be.dispose();
    }
  });

  test(
    'the oracle: masked −Inf logits are finite, −Inf on the label is +Inf, NaN logits are NaN ' +
      'even with zero labels',
    () => {
      const inf = Infinity;
      const logits = ref([5, 3], [2, -inf, 0, -inf, 1, 2, NaN, 1, 2, inf, 0, 1, 1, 2, 3]);
      const labels = ref([5, 3], [1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0]);
      const loss = Array.from(oSoftmaxCrossEntropy(logits, labels).data);
      expect(loss[0]).toBeCloseTo(-(2 - Math.log(Math.exp(2) + 1)), 12);
      expect(loss[1]).toBe(inf);
      expect(loss[2]).toBeNaN();
      expect(loss[3]).toBeNaN();
      expect(loss[4]).toBe(0);
    },
  );

  for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
    test(
      `${name}: the fused kernel and the composite give the same loss and gradient, bit for bit ` +
        `in NaN/Inf pattern`,
      async () => {
        let be: ComputeBackend;
        try {
          be = await factory();
        } catch (e) {
          if (requiredBackends().includes(name)) throw e;
          return;
        }
        try {
          const inf = Infinity;
          const z = be.fromArray([3, -inf, 1, 0, -inf, -inf, 2, -1, NaN, 0, 1, 2, -inf, 4, 0.5, -2], [4, 4]);
          const y = be.fromArray([1, 0, 0, 0, 0, 0, 0.5, 0.5, 0, 0, 0, 0, 0, 1, 0, 0], [4, 4]);
          const fused = be.softmaxCrossEntropy(z, y, true);
          const comp = BaseBackend.prototype.softmaxCrossEntropy.call(be, z, y, true);
          const [lf, lc, gf, gc] = await Promise.all([
            be.read(fused.loss),
            be.read(comp.loss),
            be.read(fused.grad!),
            be.read(comp.grad!),
          ]);
          const want = oSoftmaxCrossEntropy(ref([4, 4], await be.read(z)), ref([4, 4], await be.read(y))).data;
          for (let i = 0; i < 4; i++) {
            if (Number.isNaN(want[i]!)) {
              expect(lf[i]).toBeNaN();
              expect(lc[i]).toBeNaN();
            } else {
              expect(Number.isFinite(lf[i]!)).toBe(true);
              expect(Math.abs(lf[i]! - want[i]!)).toBeLessThan(1e-5 * Math.max(1, Math.abs(want[i]!)));
              expect(Math.abs(lc[i]! - want[i]!)).toBeLessThan(1e-5 * Math.max(1, Math.abs(want[i]!)));
            }
          }
          for (let i = 0; i < 16; i++) {
            if (Number.isNaN(gf[i]!)) expect(gc[i]).toBeNaN();
            else expect(Math.abs(gf[i]! - gc[i]!)).toBeLessThan(1e-6);
          }
          for (const a of [z, y, fused.loss, fused.grad!, comp.loss, comp.grad!]) be.free(a);
          expect(be.liveBufferCount()).toBe(0);
        } finally {
          be.dispose();
        }
      },
    );
  }
});
