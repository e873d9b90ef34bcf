// Dedicated Worker of benches/probes/browser/wasm-page.mjs: PolyHAL wasm with 2 threads (this Worker plus a
// nested one on shared memory). { setup: n } → { device }; { run: k } → { ms } (mean of k matmuls).
import { createWasmBackend } from '@polyhal/backend-wasm';
import { rand } from '../wasm-cases.mjs';

let be, a, b;
self.onmessage = async (e) => {
  try {
    if (e.data.setup) {
      const n = e.data.setup;
      be = await createWasmBackend({ threads: 2 });
      a = be.fromArray(rand(n * n, 1), [n, n]);
      b = be.fromArray(rand(n * n, 2), [n, n]);
      self.postMessage({ device: be.deviceName });
    } else {
      const t0 = performance.now();
      for (let i = 0; i < e.data.run; i++) be.free(be.matmul(a, b));
      self.postMessage({ ms: (performance.now() - t0) / e.data.run });
    }
  } catch (err) {
    self.postMessage({ error: String(err?.message ?? err) });
  }
};
