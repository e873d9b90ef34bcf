// A CommonJS consumer of the installed tarballs (require resolves the packages' .cjs builds): the
// same checks as esm.mjs. Prints one JSON line.
const { createBackend, registeredBackends } = require('@polyhal/hal');
const { CpuBackend } = require('@polyhal/backend-cpu');
require('@polyhal/backend-wasm');
require('@polyhal/backend-webgpu');
const { runConformance } = require('@polyhal/conformance');
const ag = require('@polyhal/autograd');

(async () => {
  const out = { registered: registeredBackends() };
  for (const name of ['cpu', 'wasm', 'webgpu']) {
    try {
      const { backend } = await createBackend({ backend: name });
      const c = backend.matmul(backend.fromArray([1, 2, 3, 4], [2, 2]), backend.fromArray([5, 6, 7, 8], [2, 2]));
      out[name] = { device: backend.deviceName, values: Array.from(await backend.read(c)) };
      backend.dispose();
    } catch (e) {
      out[name] = { error: `${e.name}: ${e.message}` };
    }
  }
  const conf = await runConformance(() => new CpuBackend(), { filter: 'matmul' });
  out.conformance = { passed: conf.passed, failed: conf.failed };
  const be = new CpuBackend();
  out.grad = await ag.scope(async () => {
    const x = ag.Tensor.fromArray(be, [1, 2, 3], [3], { requiresGrad: true });
    ag.sum(ag.mul(x, x)).backward();
    return Array.from(await x.grad.data());
  });
  console.log(JSON.stringify(out));
})();
