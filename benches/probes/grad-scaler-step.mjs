// GradScaler's share of a mixed-precision training step of the main job's ViT (`buildModel('vit', be, 0)`,
// AdamW, autocast('float16') around the forward, batch 64 of synthetic digits), two ways in one process on the
// same gradients: `fused`, GradScaler as it is (one nonFiniteCheckAndUnscale per backend, then one read), and
// `previous`, the path it replaced (per gradient: mul by 1/scale, isfinite, all, logicalAnd into one flag; then one
// read), written out here. Per way: the kernels the unscale-and-check dispatches (kernelStats().dispatches, webgpu)
// and the milliseconds of the unscale-and-check alone (to the flag on the host) and of the whole GradScaler step
// (unscale, check, read, optimizer.step to its end); the median of `--steps` steps of each after 2 warm-up steps,
// the two ways alternating step by step.
//   node benches/probes/grad-scaler-step.mjs [--backend webgpu|wasm|cpu] [--steps 10] [--json FILE]
import { writeFileSync } from 'node:fs';
import { AdamW, autocast, crossEntropy, GradScaler, keep, noGrad, scope, Tensor } from '@polyhal/autograd';
import { withTemps } from '@polyhal/hal';
import { buildModel } from '@polyhal/models';

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const backend = arg('backend', 'webgpu');
const steps = Number(arg('steps', '10'));
const be =
  backend === 'webgpu'
    ? await (await import('@polyhal/backend-webgpu')).createWebGpuBackend()
    : backend === 'wasm'
      ? await (await import('@polyhal/backend-wasm')).createWasmBackend()
      : new (await import('@polyhal/backend-cpu')).CpuBackend();
const batch = 64;
const xs = Float32Array.from({ length: batch * 784 }, (_, i) => ((i * 7919) % 255) / 255);
const ys = new Float32Array(batch * 10);
for (let i = 0; i < batch; i++) ys[i * 10 + (i % 10)] = 1;
const x = Tensor.fromArray(be, xs, [batch, 784]);
const y = Tensor.fromArray(be, ys, [batch, 10]);
const model = buildModel('vit', be, 0);
const opt = new AdamW(model.parameters(), { lr: 1e-4, weightDecay: 0.05 });
const dispatches = () => (be.kernelStats ? be.kernelStats().dispatches : 0);

/** The unscale-and-check GradScaler ran before nonFiniteCheckAndUnscale: whether a gradient held an Inf or NaN. */
async function previousUnscale(scale) {
  const inv = 1 / scale;
  let flag = null;
  noGrad(() => {
    for (const p of opt.params) {
      const g = p.grad;
      if (!g) continue;
      const unscaled = be.mul(g.value, inv);
      const finite = withTemps(be, (t) => be.all(t(be.isfinite(unscaled))));
      if (flag) {
        const both = be.binary('logicalAnd', flag, finite);
        be.free(flag);
        be.free(finite);
        flag = both;
      } else flag = finite;
      p.grad = keep(new Tensor(be, unscaled));
      g.dispose();
    }
  });
  const found = !(await be.read(flag))[0];
  be.free(flag);
  return found;
}

const scaler = new GradScaler();
const rows = Object.fromEntries(['fused', 'previous'].map((w) => [w, { checkMs: [], stepMs: [], kernels: [] }]));
for (let s = 0; s < 2 * (steps + 2); s++) {
  const way = s % 2 ? 'previous' : 'fused';
  await scope(async () => {
    const loss = autocast('float16', () => crossEntropy(model.forward(x), y));
    opt.zeroGrad();
    scaler.scale(loss).backward();
    await be.synchronize();
    const k0 = dispatches();
    const t0 = performance.now();
    let found;
    if (way === 'fused') {
      await scaler.unscale(opt);
      found = false; // the scaler keeps it; step below skips the optimizer on an overflow
    } else found = await previousUnscale(scaler.getScale());
    const t1 = performance.now();
    const k1 = dispatches();
    if (way === 'fused') await scaler.step(opt);
    else if (!found) opt.step();
    await be.synchronize();
    const t2 = performance.now();
    if (way === 'fused') scaler.update();
    if (s >= 4) {
      rows[way].checkMs.push(t1 - t0);
      rows[way].stepMs.push(t2 - t0);
      rows[way].kernels.push(k1 - k0);
    }
  });
}
const med = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
const row = {
  backend,
  device: be.deviceName,
  model: 'vit',
  parameters: opt.params.length,
  ...Object.fromEntries(
    Object.entries(rows).map(([w, r]) => [
      w,
      {
        unscaleCheckMs: +med(r.checkMs).toFixed(3),
        scalerStepMs: +med(r.stepMs).toFixed(3),
        ...(backend === 'webgpu' ? { unscaleCheckKernels: med(r.kernels) } : {}),
      },
    ]),
  ),
  scale: scaler.getScale(),
};
console.log(JSON.stringify(row));
const json = arg('json', '');
if (json) writeFileSync(json, `${JSON.stringify({ rows: [row] }, null, 2)}\n`);
be.dispose();
process.exit(0);
