/**
 * A dedicated Worker of the demo page: runs the wasm backend with 2 threads (itself plus one nested
 * Web Worker on the same shared memory; every large matmul and elementwise op split between them).
 * A page's main thread may not block in Atomics.wait, so this is where browser code gets threads.
 * Messages in:
 * - `{ type: 'conformance' }`: runs the conformance suite; out: `{ type: 'conformance', device,
 *   runtime, passed, failed, failures }`.
 * - `{ type: 'vit', data, options }` (`Subset`, `VitTrainOptions` without `onStep`): trains the Vision
 *   Transformer (demo/vit-train.ts); out: `{ type: 'step', step, loss, msPerStep }` after every step,
 *   then `{ type: 'vit', ...VitTrainResult }`.
 * Any failure: `{ type: 'error', error }` (the message).
 */
import { createWasmBackend } from '@polyhal/backend-wasm';
import { runConformance } from '@polyhal/conformance';
import { type Subset, trainVit, type VitTrainOptions } from './vit-train.js';

export type WorkerRequest =
  | { type: 'conformance' }
  | { type: 'vit'; data: Subset; options: Omit<VitTrainOptions, 'onStep'> };

async function conformance(): Promise<void> {
  const r = await runConformance(() =>
    createWasmBackend({ threads: 2, threadThreshold: 1, elementwiseThreadThreshold: 1 }),
  );
  self.postMessage({
    type: 'conformance',
    device: r.deviceName,
    runtime: r.runtime,
    passed: r.passed,
    failed: r.failed,
    failures: r.results.filter((x) => !x.pass).map((x) => `${x.id}: ${x.message}`),
  });
}

async function vit(data: Subset, options: Omit<VitTrainOptions, 'onStep'>): Promise<void> {
  const backend = await createWasmBackend({ threads: 2 });
  try {
    const r = await trainVit(backend, data, {
      ...options,
      onStep: (step, loss, msPerStep) => self.postMessage({ type: 'step', step, loss, msPerStep }),
    });
    self.postMessage({ type: 'vit', ...r });
  } finally {
    backend.dispose();
  }
}

self.onmessage = async (e: MessageEvent<WorkerRequest>) => {
  try {
    if (e.data.type === 'vit') await vit(e.data.data, e.data.options);
    else await conformance();
  } catch (err) {
    self.postMessage({ type: 'error', error: String((err as Error)?.message ?? err) });
  }
};
