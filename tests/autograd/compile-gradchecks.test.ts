// The gradient checks in compiled mode (issue #38, item 2). On webgpu, the backend that captures: for every entry of
// the ops' and the losses' gradient checks, compile() records the forward and backward of the checked objective
// (sum(f(xs) · w), the inputs as leaves that the recording reads in place, the weighting w as its input) and the
// gradients it leaves must equal the eager ones bit for bit: at the trace, at a replay with the same values, and
// at a replay after new values are written into the leaves and a new weighting is passed. On cpu and wasm, which
// compute as called, compile runs the function as is (every call eager) and the same checks hold trivially. The
// eager gradients meet central differences (autograd.test.ts, autograd-losses.test.ts), so the compiled ones do too.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { compile, type GradCheckInput, mul, noGrad, scope, sum, Tensor } from '@polyhal/autograd';
import { type ComputeBackend, type HostArray, mulberry32 } from '@polyhal/hal';
import { REPO_BACKENDS } from '../support/backends.js';
import { CHECKS } from './gradcheck-ops.js';
import { LOSS_CHECKS } from './gradcheck-losses.js';
import type { Check } from './gradchecks.js';

/** The first element whose bits differ between the two gradient sets, as a line, or '' when none does. */
function bitDifference(got: readonly HostArray[], want: readonly HostArray[]): string {
  for (let k = 0; k < want.length; k++) {
    const a = new Uint8Array(got[k]!.buffer, got[k]!.byteOffset, got[k]!.byteLength);
    const b = new Uint8Array(want[k]!.buffer, want[k]!.byteOffset, want[k]!.byteLength);
    if (a.length !== b.length) return `input ${k}: ${got[k]!.length} gradient elements, eager ${want[k]!.length}`;
    for (let i = 0; i < a.length; i++)
      if (a[i] !== b[i]) {
        const e = Math.floor(i / 4);
        return `input ${k}[${e}]: compiled ${got[k]![e]}, eager ${want[k]![e]}`;
      }
  }
  return '';
}

/** Each input's values rotated by one element: other values from the same domain (kinks avoided, spacing kept). */
const rotate = (inputs: readonly GradCheckInput[]): number[][] =>
  inputs.map(({ values }) => [...values.slice(1), ...values.slice(0, 1)]);

const checks: Check[] = [...CHECKS, ...LOSS_CHECKS];

for (const [backend, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`gradient checks compiled on ${backend}: compiled gradients are the eager bits`, () => {
    let be: ComputeBackend;
    beforeAll(async () => {
      be = await factory();
    });
    afterAll(() => be?.dispose());

    for (const [name, f, inputs] of checks) {
      test(`compiled gradient: ${name}`, async () => {
        const base = be.liveBufferCount();
        const outShape = scope(() =>
          noGrad(() => f(inputs.map((i) => Tensor.fromArray(be, i.values, i.shape))).shape.slice()),
        );
        const size = outShape.reduce((p, d) => p * d, 1);
        const rng = mulberry32(7);
        const weighting = () => Array.from({ length: size }, () => rng() * 2 - 1);
        /** The eager gradients of sum(f(xs) · w) at `values`. */
        const eager = (values: number[][], w: number[]): Promise<HostArray[]> =>
          scope(async () => {
            const xs = inputs.map((inp, k) => Tensor.fromArray(be, values[k]!, inp.shape, { requiresGrad: true }));
            sum(mul(f(xs), Tensor.fromArray(be, w, outShape))).backward();
            return Promise.all(xs.map((x) => x.grad!.data()));
          });
        const leaves = inputs.map((inp) => Tensor.fromArray(be, inp.values, inp.shape, { requiresGrad: true }));
        const step = compile((w: Tensor) => {
          const y = sum(mul(f(leaves), w));
          y.backward();
          return y;
        });
        /** One compiled call with weighting `w`: the gradients it left on the leaves (then zeroed). */
        const compiled = async (w: number[]): Promise<HostArray[]> => {
          const wT = Tensor.fromArray(be, w, outShape);
          const y = step(wT);
          const grads = await Promise.all(leaves.map((l) => l.grad!.data()));
          for (const t of [y, wT, ...leaves.map((l) => l.grad!)]) t.dispose();
          for (const l of leaves) l.grad = null;
          return grads;
        };
        try {
          const w0 = weighting();
          const want = await eager(
            inputs.map((i) => i.values),
            w0,
          );
          expect(bitDifference(await compiled(w0), want)).toBe(''); // the trace
          expect(bitDifference(await compiled(w0), want)).toBe(''); // a replay, the same values
          const next = rotate(inputs);
          const w1 = weighting();
          leaves.forEach((l, k) => be.write(l.value.buffer, Float32Array.from(next[k]!)));
          const got = await compiled(w1); // a replay, new leaf values and a new weighting
          expect(bitDifference(got, await eager(next, w1))).toBe('');
          expect(bitDifference(got, want)).not.toBe(''); // the new values changed the gradients
          // a backend that captures records once and replays twice; one that computes as called runs fn each time
          const recorded = typeof be.beginCapture === 'function';
          expect(step.stats).toMatchObject(
            recorded
              ? { traces: 1, replays: 2, eager: 0, refused: [] }
              : { traces: 0, replays: 0, eager: 3, refused: [] },
          );
        } finally {
          step.release();
          for (const l of leaves) l.dispose();
        }
        expect(be.liveBufferCount()).toBe(base);
      });
    }
  });
}
