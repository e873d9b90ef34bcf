/**
 * A dedicated Worker of the demo page: runs the conformance suite on the wasm backend with 2 threads
 * (itself plus one nested Web Worker on the same shared memory; every matmul and elementwise op split
 * between them).
 * A page's main thread may not block in Atomics.wait, so this is where browser code gets threads.
 * Message in: nothing; message out: { device, runtime, passed, failed, failures } or { error }.
 */
import { createWasmBackend } from '@polyhal/backend-wasm';
import { runConformance } from '@polyhal/conformance';

self.onmessage = async () => {
  try {
    const r = await runConformance(() =>
      createWasmBackend({ threads: 2, threadThreshold: 1, elementwiseThreadThreshold: 1 }),
    );
    self.postMessage({
      device: r.deviceName,
      runtime: r.runtime,
      passed: r.passed,
      failed: r.failed,
      failures: r.results.filter((x) => !x.pass).map((x) => `${x.id}: ${x.message}`),
    });
  } catch (e) {
    self.postMessage({ error: String((e as Error)?.message ?? e) });
  }
};
