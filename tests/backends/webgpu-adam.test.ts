// Multi-tensor Adam on webgpu: consecutive adamStep calls with the same hyper-parameters share one
// dispatch of several parameters (four storage bindings each). Every parameter must still get the
// one-parameter update (checked against a float64 oracle within the op table's WGSL bound), whatever
// its size and the group it lands in, and every other op must see the updates in call order.
import { describe, expect, test } from '@jest/globals';
import { createWebGpuBackend, type WebGpuBackend } from '@polyhal/backend-webgpu';
import { type AdamStepParams, type ComputeBackend, type DeviceBuffer, type NDArray, viewOf } from '@polyhal/hal';
import { crossBackends } from '../support/cross-backend.js';

const fixture = crossBackends();
const need = (): WebGpuBackend | undefined => fixture.backends['webgpu'] as WebGpuBackend | undefined;
const rand = (n: number, seed: number, lo: number, hi: number): Float32Array =>
  Float32Array.from({ length: n }, (_, i) => lo + (hi - lo) * (0.5 + 0.5 * Math.sin(i * 12.9898 + seed * 78.233)));

interface Slot {
  p: Float32Array;
  g: Float32Array;
  m: Float32Array;
  v: Float32Array;
}
const slot = (n: number, seed: number): Slot => ({
  p: rand(n, seed, -1, 1),
  g: rand(n, seed + 1, -0.5, 0.5),
  m: rand(n, seed + 2, -0.1, 0.1),
  v: rand(n, seed + 3, 0, 0.01),
});

/** One Adam/AdamW step in float64 from the float32 inputs: the updated param, m and v. */
function oracle(s: Slot, h: AdamStepParams): { p: number[]; m: number[]; v: number[] } {
  const c1 = 1 / (1 - h.beta1 ** h.step);
  const c2 = 1 / (1 - h.beta2 ** h.step);
  const out = { p: [] as number[], m: [] as number[], v: [] as number[] };
  for (let i = 0; i < s.p.length; i++) {
    const g = s.g[i]!;
    const m = h.beta1 * s.m[i]! + (1 - h.beta1) * g;
    const v = h.beta2 * s.v[i]! + (1 - h.beta2) * g * g;
    out.m.push(m);
    out.v.push(v);
    out.p.push(s.p[i]! * (1 - h.lr * h.weightDecay) - (h.lr * m * c1) / (Math.sqrt(v * c2) + h.eps));
  }
  return out;
}

/** Every element within the op table's WGSL bound for adamStep (abs 1e-7 + rel 2e-6). */
function expectClose(got: ArrayLike<number>, want: number[], what: string): void {
  let worst = 0;
  for (let i = 0; i < want.length; i++) {
    const excess = Math.abs(got[i]! - want[i]!) - (1e-7 + 2e-6 * Math.abs(want[i]!));
    if (excess > worst) worst = excess;
  }
  expect({ what, worst }).toEqual({ what, worst: 0 });
}

const H: AdamStepParams = { lr: 0.01, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.05, step: 3 };

/** Buffers of a slot on `be`; the gradient as a view (a transposed [r, c]) when `transposed`. */
function place(be: ComputeBackend, s: Slot, transposed?: [number, number]) {
  const buf = (x: Float32Array): DeviceBuffer => be.fromArray(x, [x.length]).buffer;
  let grad: NDArray = be.fromArray(s.g, [s.g.length]);
  if (transposed) {
    const [r, c] = transposed;
    // g laid out as [c, r] so that its transpose, read row-major, is s.g.
    const t = new Float32Array(r * c);
    for (let i = 0; i < r; i++) for (let j = 0; j < c; j++) t[j * r + i] = s.g[i * c + j]!;
    grad = be.reshape(be.permute(be.fromArray(t, [c, r]), [1, 0]), [r * c]);
  }
  return { param: buf(s.p), grad, m: buf(s.m), v: buf(s.v) };
}

const read = async (be: ComputeBackend, b: DeviceBuffer): Promise<Float32Array> =>
  (await be.read(viewOf(b))) as Float32Array;

describe('webgpu multi-tensor Adam', () => {
  test('parameters of many sizes share dispatches and each gets the one-parameter update', async () => {
    const be = need();
    if (!be) return;
    const sizes = [1, 255, 256, 257, 1000, 3, 4097, 64, 512];
    const slots = sizes.map((n, i) => slot(n, 10 * i));
    const placed = slots.map((s) => place(be, s));
    await be.synchronize();
    const before = be.kernelStats().dispatches;
    for (const b of placed) be.adamStep(b.param, b.grad, b.m, b.v, H);
    await be.synchronize();
    const perDispatch = Math.min(8, Math.floor(be.device.limits.maxStorageBuffersPerShaderStage / 4));
    expect(perDispatch).toBeGreaterThan(1);
    expect(be.kernelStats().dispatches - before).toBe(Math.ceil(sizes.length / perDispatch));
    for (let i = 0; i < sizes.length; i++) {
      const want = oracle(slots[i]!, H);
      const b = placed[i]!;
      expectClose(await read(be, b.param), want.p, `param ${i}`);
      expectClose(await read(be, b.m), want.m, `m ${i}`);
      expectClose(await read(be, b.v), want.v, `v ${i}`);
    }
  });

  /** Steps with other hyper-parameters, a transposed gradient, an op, reads and a write in between. */
  async function callOrder(be: ComputeBackend): Promise<void> {
    const H2: AdamStepParams = { ...H, lr: 0.5, step: 1, weightDecay: 0 };
    const a = slot(300, 1);
    const b = slot(12 * 34, 2);
    const c = slot(70, 3);
    const pa = place(be, a);
    const pb = place(be, b, [12, 34]); // needs a contiguous copy: a temporary freed once encoded
    const pc = place(be, c);
    be.adamStep(pa.param, pa.grad, pa.m, pa.v, H);
    be.adamStep(pb.param, pb.grad, pb.m, pb.v, H2);
    // An op on a held parameter sees the update: held steps are encoded before any other kernel.
    const doubled = be.mul(viewOf(pa.param), 2);
    be.adamStep(pc.param, pc.grad, pc.m, pc.v, H);
    const wa = oracle(a, H);
    expectClose(await read(be, pa.param), wa.p, 'param a');
    expectClose(
      (await be.read(doubled)) as Float32Array,
      wa.p.map((x) => 2 * x),
      'op after the step',
    );
    expectClose(await read(be, pb.param), oracle(b, H2).p, 'param b (transposed gradient, lr 0.5, step 1)');
    expectClose(await read(be, pc.param), oracle(c, H).p, 'param c');
    // A second step on c from its updated state, then a write to the parameter: the write comes last.
    const c1 = oracle(c, H);
    be.adamStep(pc.param, pc.grad, pc.m, pc.v, { ...H, step: 4 });
    const after = Float32Array.from({ length: 70 }, (_, i) => i);
    be.write(pc.param, after);
    expect(await read(be, pc.param)).toEqual(after);
    const s2 = { p: Float32Array.from(c1.p), g: c.g, m: Float32Array.from(c1.m), v: Float32Array.from(c1.v) };
    expectClose(await read(be, pc.m), oracle(s2, { ...H, step: 4 }).m, 'm of c after its second step');
  }

  test('steps with other hyper-parameters, a transposed gradient and reads in between keep call order', async () => {
    const be = need();
    if (be) await callOrder(be);
  });

  test('call order holds when every kernel is its own submission (batchSize 1)', async () => {
    // Held steps are encoded by the next op's dispatch; with batchSize 1 they are submitted from inside it.
    if (!need()) return;
    const be = await createWebGpuBackend({ batchSize: 1 });
    try {
      await callOrder(be);
    } finally {
      be.dispose();
    }
  });
});
