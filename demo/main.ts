/**
 * The PolyHAL demo page: pick a backend, train a small MLP on embedded MNIST digits in the page (loss
 * curve, predictions on sample digits), and run the conformance suite with its scoreboard.
 * `window.polyhalDemo` exposes the same actions to the end-to-end browser test.
 */
import type { ComputeBackend } from '@polyhal/hal';
import { CpuBackend } from '@polyhal/backend-cpu';
import { createWasmBackend } from '@polyhal/backend-wasm';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';
import * as ag from '@polyhal/autograd';
import { type ConformanceResult, matrix, runConformance } from '@polyhal/conformance';

interface Subset {
  train: { x: number[]; y: number[] };
  test: { x: number[]; y: number[] };
}

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
    const sample = Array.from({ length: 12 }, (_, k) => k * Math.floor(n / 12));
    drawDigits(
      sample.map((i) => d.test.x.slice(i * 784, (i + 1) * 784)),
      sample.map((i) => predicted[i]!),
      sample.map((i) => d.test.y[i]!),
    );
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
  const r = await runConformance(FACTORIES[backend]!);
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

/** Runs the conformance suite on wasm with 2 threads inside a dedicated Worker (demo/worker.ts). */
function conformanceInWorker(): Promise<{
  device: string;
  runtime: string;
  passed: number;
  failed: number;
  failures: string[];
}> {
  const w = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  return new Promise<{ device: string; runtime: string; passed: number; failed: number; failures: string[] }>(
    (resolve, reject) => {
      w.onmessage = (e: MessageEvent) => (e.data.error ? reject(new Error(e.data.error as string)) : resolve(e.data));
      w.onerror = (e) => reject(new Error(e.message));
      w.postMessage(null);
    },
  ).finally(() => w.terminate());
}

$('train').addEventListener(
  'click',
  () => void train($<HTMLSelectElement>('backend').value).catch((e: Error) => status(`error: ${e.message}`)),
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
  conformance,
  conformanceInWorker,
  sum,
  crossOriginIsolated: globalThis.crossOriginIsolated,
};
