import { describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { CpuBackend } from '@polyhal/backend-cpu';
import { createWasmBackend } from '@polyhal/backend-wasm';
import { bisect, recording } from '@polyhal/conformance';
import type { NDArray, UnaryOp } from '@polyhal/hal';

/** The CPU backend with a sigmoid that is 0.5% off above 0.55. */
class SloppySigmoid extends CpuBackend {
  override unary(op: UnaryOp, x: NDArray): NDArray {
    const y = super.unary(op, x);
    if (op === 'sigmoid') {
      const d = this.data(y.buffer);
      for (let i = 0; i < d.length; i++) if (d[i]! > 0.55) d[i]! *= 1.005;
    }
    return y;
  }
}

async function recordTrainingStep() {
  const rec = recording(new CpuBackend());
  const be = rec.backend;
  const model = new ag.Sequential(
    new ag.Linear(8, 16, { backend: be, rng: 1 }),
    new ag.Sigmoid(),
    new ag.Linear(16, 4, { backend: be, rng: 2 }),
  );
  const opt = new ag.Adam(model.parameters(), { lr: 0.01 });
  const x = ag.Tensor.fromArray(
    be,
    Array.from({ length: 32 }, (_, i) => Math.sin(i)),
    [4, 8],
  );
  const y = ag.Tensor.fromArray(be, [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1], [4, 4]);
  await ag.scope(async () => {
    const l = ag.crossEntropy(model.forward(x), y);
    opt.zeroGrad();
    l.backward();
    opt.step();
    return l.item();
  });
  // Free everything: frees are part of the recording, and nothing is left for the GC to report.
  opt.zeroGrad();
  opt.dispose();
  model.dispose();
  x.dispose();
  y.dispose();
  expect(be.liveBufferCount()).toBe(0);
  return rec;
}

describe('mismatch bisector', () => {
  test('a training step recorded on cpu replays identically on cpu and within tolerance on wasm', async () => {
    const rec = await recordTrainingStep();
    expect(rec.calls.length).toBeGreaterThan(20);
    expect(rec.calls.some((c) => c.method === 'adamStep')).toBe(true);
    expect(
      await bisect(
        rec,
        () => new CpuBackend(),
        () => new CpuBackend(),
      ),
    ).toBeNull();
    expect(
      await bisect(
        rec,
        () => new CpuBackend(),
        () => createWasmBackend({ threads: 1 }),
      ),
    ).toBeNull();
  });

  test('the first diverging call is named, with a reproduction script', async () => {
    const rec = await recordTrainingStep();
    const d = await bisect(
      rec,
      () => new CpuBackend(),
      () => new SloppySigmoid(),
    );
    expect(d).not.toBeNull();
    expect(d!.method).toBe('unary');
    expect(d!.call.args.some((a) => a.kind === 'value' && a.value === 'sigmoid')).toBe(true);
    expect(d!.message).toMatch(/call \d+ \(unary\) diverges/);
    expect(d!.reproduction).toMatch(/const out = be\.unary\("sigmoid", x1\);/);
    // The reproduction runs on its own and shows the difference.
    const run = async (be: CpuBackend): Promise<Float32Array> => {
      const fn = new Function(
        'be',
        `return (async () => { ${d!.reproduction.replace('console.log(', 'return (')} })();`,
      );
      return (await fn(be)) as Float32Array;
    };
    const [good, bad] = [await run(new CpuBackend()), await run(new SloppySigmoid())];
    expect(Array.from(good)).not.toEqual(Array.from(bad));
  });
});
