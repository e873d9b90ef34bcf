/**
 * The PolyHAL demo page: pick a backend, train a small MLP or a Vision Transformer on embedded MNIST
 * digits (loss curve, predictions on sample digits), and run the conformance suite with its scoreboard.
 * The ViT trains inside a dedicated Worker on wasm (2 threads: worker.ts), on the page's main thread on
 * cpu and webgpu. `window.polyhalDemo` exposes the same actions to the end-to-end browser test.
 */
import type { ComputeBackend } from '@polyhal/hal';
import { CpuBackend } from '@polyhal/backend-cpu';
import { createWasmBackend } from '@polyhal/backend-wasm';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';
import * as ag from '@polyhal/autograd';
import { type ConformanceResult, matrix, runConformance } from '@polyhal/conformance';
import { type Subset, trainVit as trainVitOn, type VitTrainOptions, type VitTrainResult } from './vit-train.js';
import type { WorkerRequest } from './worker.js';

const FACTORIES: Record<string, () => Promise<ComputeBackend>> = {
  cpu: async () => new CpuBackend(),
  wasm: () => createWasmBackend(),
  webgpu: () => createWebGpuBackend(),
};

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const status = (s: string): void => {
  $('status').textContent = s;
};

let data: Promise<Subset> | undefined;
const loadData = (): Promise<Subset> =>
  (data ??= fetch('./mnist-subset.json').then((r) => r.json() as Promise<Subset>));

const oneHot = (labels: number[]): Float32Array => {
  const y = new Float32Array(labels.length * 10);
  labels.forEach((l, i) => (y[i * 10 + l] = 1));
  return y;
};

function drawLoss(losses: number[]): void {
  const c = $<HTMLCanvasElement>('loss');
  const g = c.getContext('2d')!;
  g.clearRect(0, 0, c.width, c.height);
  const max = Math.max(...losses, 1e-6);
  g.strokeStyle = '#d62728';
  g.beginPath();
  losses.forEach((l, i) => {
    const x = (i / Math.max(1, losses.length - 1)) * (c.width - 10) + 5;
    const y = c.height - 5 - (l / max) * (c.height - 20);
    if (i === 0) g.moveTo(x, y);
    else g.lineTo(x, y);
  });
  g.stroke();
  g.fillText(`loss ${losses[losses.length - 1]?.toFixed(3)} (max ${max.toFixed(2)})`, 8, 12);
}

function drawDigits(images: number[][], predicted: number[], labels: number[]): void {
  const box = $('digits');
  box.innerHTML = '';
  images.forEach((img, k) => {
    const fig = document.createElement('figure');
    const c = document.createElement('canvas');
    c.width = c.height = 28;
    c.style.width = c.style.height = '56px';
    const g = c.getContext('2d')!;
    const pixels = g.createImageData(28, 28);
    img.forEach((v, i) => {
      pixels.data.set([255 - v, 255 - v, 255 - v, 255], i * 4);
    });
    g.putImageData(pixels, 0, 0);
    const cap = document.createElement('figcaption');
    cap.textContent = `${predicted[k]}${predicted[k] === labels[k] ? ' ✓' : ` ✗ (${labels[k]})`}`;
    fig.append(c, cap);
    box.append(fig);
  });
}

/** Draws 12 test digits spread over `d.test` with their predicted class (`predicted`: one per test digit). */
function drawPredictions(d: Subset, predicted: number[]): void {
  const n = d.test.y.length;
  const sample = Array.from({ length: 12 }, (_, k) => k * Math.floor(n / 12));
  drawDigits(
    sample.map((i) => d.test.x.slice(i * 784, (i + 1) * 784)),
    sample.map((i) => predicted[i]!),
    sample.map((i) => d.test.y[i]!),
  );
}

/** Trains a 784-64-10 MLP with Adam for `steps` batches of 32; returns losses and test accuracy. */
async function train(backend: string, steps = 300): Promise<{ device: string; losses: number[]; accuracy: number }> {
  status(`training on ${backend}…`);
  const be = await FACTORIES[backend]!();
  const d = await loadData();
  const model = new ag.Sequential(
    new ag.Linear(784, 64, { backend: be, rng: 1 }),
    new ag.ReLU(),
    new ag.Linear(64, 10, { backend: be, rng: 2 }),
  );
  const opt = new ag.Adam(model.parameters(), { lr: 3e-3 });
  const loader = new ag.DataLoader({
    inputs: Float32Array.from(d.train.x, (v) => v / 255),
    labels: oneHot(d.train.y),
    inputShape: [784],
    labelShape: [10],
    batchSize: 32,
    backend: be,
    shuffle: true,
    seed: 1,
    dropLast: true,
  });
  const losses: number[] = [];
  try {
    while (losses.length < steps) {
      for await (const { x, y } of loader) {
        losses.push(
          await ag.scope(async () => {
            const l = ag.crossEntropy(model.forward(x), y);
            opt.zeroGrad();
            l.backward();
            opt.step();
            return l.item();
          }),
        );
        if (losses.length % 20 === 0) drawLoss(losses);
        if (losses.length >= steps) break;
      }
    }
    drawLoss(losses);
    const n = d.test.y.length;
    const logits = await ag.scope(() =>
      ag
        .noGrad(() =>
          model.forward(
            ag.Tensor.fromArray(
              be,
              Float32Array.from(d.test.x, (v) => v / 255),
              [n, 784],
            ),
          ),
        )
        .data(),
    );
    const predicted = d.test.y.map((_, i) => {
      let best = 0;
      for (let c = 1; c < 10; c++) if (logits[i * 10 + c]! > logits[i * 10 + best]!) best = c;
      return best;
    });
    const accuracy = predicted.filter((p, i) => p === d.test.y[i]).length / n;
    drawPredictions(d, predicted);
    status(
      `${backend} (${be.deviceName}): final loss ${losses[losses.length - 1]!.toFixed(3)}, test ` +
        `accuracy ${accuracy.toFixed(3)}`,
    );
    return { device: be.deviceName, losses, accuracy };
  } finally {
    opt.zeroGrad();
    opt.dispose();
    model.dispose();
    be.dispose();
  }
}

/** Runs the whole conformance suite on a backend and shows its op × dtype scoreboard. */
async function conformance(backend: string): Promise<{
  device: string;
  runtime: string;
  passed: number;
  failed: number;
  failures: string[];
  result: ConformanceResult;
}> {
  status(`conformance on ${backend}…`);
  // a case may take 120 s, not 30: on a 2-core machine, webgpu in Chromium runs on lavapipe inside the browser's GPU
  // process, beside whatever else the machine runs (the runtime tests beside this page in CI), and a small conv case
  // once took over 30 s there
  const r = await runConformance(FACTORIES[backend]!, { timeoutMs: 120_000 });
  const rows = matrix(r).map(
    (c) =>
      `<tr class="${c.failed ? 'fail' : ''}"><td>${c.op}</td><td>${c.dtype}</td>
      <td>${c.failed ? `FAIL (${c.failed})` : 'pass'}</td><td>${c.cases}</td>
      <td>${c.maxAbsError.toExponential(1)}</td><td>${c.maxUlpError}</td></tr>`,
  );
  $('scoreboard').innerHTML =
    `<h2>${backend} — ${r.deviceName} (${r.runtime}): ${r.passed} passed, ${r.failed} failed</h2>
    <table><tr><th>op</th><th>dtype</th><th>result</th><th>cases</th>
    <th>max abs</th><th>max ULP</th></tr>${rows.join('')}</table>`;
  status(`conformance on ${backend}: ${r.passed} passed, ${r.failed} failed`);
  return {
    device: r.deviceName,
    runtime: r.runtime,
    passed: r.passed,
    failed: r.failed,
    failures: r.results.filter((x) => !x.pass).map((x) => `${x.id}: ${x.message}`),
    result: r,
  };
}

/**
 * Starts a dedicated Worker (worker.ts) and sends it `request`. The promise resolves to the data of the
 * first message whose `type` is `done`; messages before it go to `onMessage`; a `{ type: 'error' }`
 * message or a Worker error rejects it. The Worker is terminated either way.
 */
function inWorker<T>(request: WorkerRequest, done: string, onMessage?: (data: unknown) => void): Promise<T> {
  const w = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  return new Promise<T>((resolve, reject) => {
    w.onmessage = (e: MessageEvent) => {
      if (e.data.type === 'error') reject(new Error(e.data.error as string));
      else if (e.data.type === done) resolve(e.data as T);
      else onMessage?.(e.data);
    };
    w.onerror = (e) => reject(new Error(e.message));
    w.postMessage(request);
  }).finally(() => w.terminate());
}

/** Runs the conformance suite on wasm with 2 threads inside a dedicated Worker (demo/worker.ts). */
function conformanceInWorker(): Promise<{
  device: string;
  runtime: string;
  passed: number;
  failed: number;
  failures: string[];
}> {
  return inWorker({ type: 'conformance' }, 'conformance');
}

/**
 * Trains the Vision Transformer (demo/vit-train.ts: 4 blocks at width 64, AdamW, batch 32 of the 600
 * training digits by default) for `steps` batches and tests it on the 200 test digits: on wasm inside
 * a dedicated Worker with 2 threads, which posts every step's loss back; on cpu and webgpu on this
 * thread, awaiting every step's loss (so the page stays responsive between steps). The loss curve,
 * step and steps/s update as it trains; the predictions on 12 test digits are drawn at the end.
 * Resolves to the device name, every step's loss, the test accuracy and the mean ms per step after
 * the first; rejects on an unknown backend, bad options or a loss that is not finite.
 */
async function trainVit(
  backend: string,
  steps = 600,
  options: Omit<VitTrainOptions, 'steps' | 'onStep'> = {},
): Promise<{ device: string; losses: number[]; accuracy: number; msPerStep: number }> {
  const factory = FACTORIES[backend];
  if (!factory) throw new Error(`unknown backend ${backend}: use one of ${Object.keys(FACTORIES).join(', ')}`);
  status(`ViT on ${backend}: starting…`);
  const d = await loadData();
  const live: number[] = [];
  const onStep = (step: number, loss: number, msPerStep: number): void => {
    live.push(loss);
    if (step % 10 === 0 || step === steps) drawLoss(live);
    status(
      `ViT on ${backend}: step ${step}/${steps}, loss ${loss.toFixed(3)}, ${(1000 / msPerStep).toFixed(1)} steps/s`,
    );
  };
  let r: VitTrainResult;
  if (backend === 'wasm') {
    r = await inWorker<VitTrainResult>({ type: 'vit', data: d, options: { ...options, steps } }, 'vit', (m) => {
      const { step, loss, msPerStep } = m as { step: number; loss: number; msPerStep: number };
      onStep(step, loss, msPerStep);
    });
  } else {
    const be = await factory();
    try {
      r = await trainVitOn(be, d, { ...options, steps, onStep });
    } finally {
      be.dispose();
    }
  }
  drawLoss(r.losses);
  drawPredictions(d, r.predicted);
  status(
    `ViT on ${backend} (${r.device}): ${steps} steps, final loss ${r.losses[r.losses.length - 1]!.toFixed(3)}, ` +
      `test accuracy ${r.accuracy.toFixed(3)}, ${r.msPerStep.toFixed(0)} ms/step ` +
      `(${(1000 / r.msPerStep).toFixed(1)} steps/s)`,
  );
  return { device: r.device, losses: r.losses, accuracy: r.accuracy, msPerStep: r.msPerStep };
}

$('train').addEventListener(
  'click',
  () => void train($<HTMLSelectElement>('backend').value).catch((e: Error) => status(`error: ${e.message}`)),
);
$('train-vit').addEventListener(
  'click',
  () =>
    void trainVit($<HTMLSelectElement>('backend').value, Number($<HTMLInputElement>('vit-steps').value)).catch(
      (e: Error) => status(`error: ${e.message}`),
    ),
);
$('conformance').addEventListener(
  'click',
  () => void conformance($<HTMLSelectElement>('backend').value).catch((e: Error) => status(`error: ${e.message}`)),
);
/** Sums `values` of `shape` over `axes` on a backend (for checking a backend by hand from the console). */
async function sum(backend: string, values: number[], shape: number[], axes?: number[]): Promise<number[]> {
  const be = await FACTORIES[backend]!();
  try {
    return Array.from(await be.read(be.sum(be.fromArray(values, shape), axes)));
  } finally {
    be.dispose();
  }
}

(window as unknown as { polyhalDemo: unknown }).polyhalDemo = {
  train,
  trainVit,
  conformance,
  conformanceInWorker,
  sum,
  crossOriginIsolated: globalThis.crossOriginIsolated,
};
