// PERFORMANCE.md's section on the 2-core VM (benches/results/node-2core): the harness of `npm run bench`, each
// PolyHAL backend against its TensorFlow.js counterpart (webgpu on lavapipe, a CPU emulating a GPU).
import { DAGGER, fileLink, harnessRow, num, results, slash, table, times } from './format.mjs';

const VM = 'node-2core';
const BACKENDS = ['cpu', 'wasm', 'webgpu'];
const rate = (r, ms) => r.work / (ms / 1000);
const mib = (bytes) => (bytes / 2 ** 20).toFixed(1);

/** Figures of one harness row per backend, a † on the `what` cell when any is transcribed. */
function perBackend(suite, name, size, backends) {
  const rows = backends.map((b) => harnessRow(VM, suite, b, name, size));
  const t = rows.find((r) => r.transcribed)?.transcribed;
  return { rows, transcribed: t, mark: t ? ` ${DAGGER}` : '' };
}

const ms = (r, x) => num(x, { transcribed: Boolean(r.transcribed) });
const ratio = (r) =>
  r.ratio === null || r.ratio === undefined ? '—' : times(r.ratio, { transcribed: Boolean(r.transcribed) });
const peerMs = (r) => (r.peerMedianMs === null ? `cannot run (${r.peer}: ${r.peerError})` : ms(r, r.peerMedianMs));

/** The vocabulary rows (ratios only) of one set of ops: `name: cpu / wasm / webgpu` for each op present. */
function vocabulary(ops) {
  const file = results(VM, 'vocabulary');
  const cells = [];
  const sources = [];
  for (const [label, name] of ops) {
    const figs = [];
    for (const b of BACKENDS) {
      const run = file.runs.find((r) => r.backend === b);
      const row = run?.rows.find((r) => r.name === name);
      if (!row) continue;
      const copied = row.transcribed ?? run.transcribed;
      if (copied) sources.push(copied);
      figs.push(`${b} ${times(row.ratio, { transcribed: Boolean(copied) })}`);
    }
    if (figs.length === 0) throw new Error(`benches/results/${VM}/vocabulary.json has no row '${name}'`);
    cells.push(`${label} ${figs.join(', ')}`);
  }
  return { cell: cells.join('; '), sources };
}

export function vmSection() {
  const sources = [];
  const out = [];
  const add = (what, g, ours, theirs, r) => {
    if (g.transcribed) sources.push(g.transcribed);
    out.push([`${what}${g.mark}`, ours, theirs, r]);
  };
  {
    const g = perBackend('matmul', 'matmul', 512, ['cpu']);
    const [r] = g.rows;
    add(
      `matmul 512, cpu (GFLOP/s; ${fileLink(VM, 'matmul')})`,
      g,
      num(rate(r, r.medianMs)),
      `${num(rate(r, r.peerMedianMs))} (tfjs-cpu)`,
      ratio(r),
    );
  }
  for (const b of ['cpu', 'wasm']) {
    const g = perBackend('mlpStep', 'MLP 784-256-10 train step (batch 128, Adam)', 128, [b]);
    const [r] = g.rows;
    add(
      `MLP 784-256-10 train step, batch 128, ${b} (ms; ${fileLink(VM, 'mlpStep')})`,
      g,
      ms(r, r.medianMs),
      ms(r, r.peerMedianMs),
      ratio(r),
    );
  }
  {
    const g = perBackend('epoch', 'MNIST epoch (MLP, 8000 digits, batch 64)', 8000, ['cpu', 'wasm']);
    add(
      `one MNIST epoch (MLP, 8000 digits, batch 64), cpu / wasm (s; ${fileLink(VM, 'epoch')})`,
      g,
      slash(g.rows.map((r) => num(r.medianMs / 1000))),
      slash(g.rows.map((r) => num(r.peerMedianMs / 1000))),
      slash(g.rows.map(ratio)),
    );
  }
  {
    const g = perBackend('conv', 'Conv2d 5×5/2 fwd+bwd [32,1,28,28]→16', 32, BACKENDS);
    add(
      'Conv2d 5×5/2 fwd+bwd [32,1,28,28]→16 on the general `conv` composite (dx by `convTranspose`), cpu / wasm / ' +
        `webgpu on lavapipe (ms; \`--suite conv\`, ${fileLink(VM, 'conv')})`,
      g,
      slash(g.rows.map((r) => ms(r, r.medianMs))),
      slash(g.rows.map(peerMs)),
      slash(g.rows.map(ratio)),
    );
  }
  {
    const g = perBackend('vit', 'ViT train step (batch 64, 4 blocks × width 64, AdamW)', 64, BACKENDS);
    add(
      "ViT train step (the main job's `--model vit`: 4 blocks × width 64, batch 64, AdamW), cpu / wasm / webgpu on " +
        `lavapipe (ms; \`--suite vit\`, ${fileLink(VM, 'vit')})`,
      g,
      slash(g.rows.map((r) => ms(r, r.medianMs))),
      slash(g.rows.map((r) => ms(r, r.peerMedianMs))),
      slash(g.rows.map(ratio)),
    );
  }
  {
    const sizes = [256, 512, 1024];
    const g = { rows: sizes.map((n) => harnessRow(VM, 'matmul', 'wasm', 'matmul', n)), mark: '' };
    add(
      `matmul ${slash(sizes)}, wasm, 1 thread, plain SIMD (GFLOP/s; the harness on Node 20, ${fileLink(VM, 'matmul')})`,
      g,
      slash(g.rows.map((r) => num(rate(r, r.medianMs)))),
      slash(g.rows.map((r) => num(rate(r, r.peerMedianMs)))),
      slash(g.rows.map(ratio)),
    );
  }
  const vocab = (what, ops) => {
    const v = vocabulary(ops);
    sources.push(...v.sources);
    const mark = v.sources.length ? ` ${DAGGER}` : '';
    out.push([`${what} (\`--suite vocabulary\`, ${fileLink(VM, 'vocabulary')})${mark}`, 'ratios only', '—', v.cell]);
  };
  vocab('argmax along axis 1 of [1024, 1024], topk k = 8 along axis 1 of [256, 256] and of 65536 elements', [
    ['argmax', 'argmax (axis 1)'],
    ['topk [256, 256]', 'topk k = 8 [256, 256]'],
    ['topk of 65536', 'topk k = 8 of 65536'],
  ]);
  vocab('oneHot 65536 × 16, gatherND of 65536 pairs from [1024, 1024], scatterND add of 64 rows into [256, 256]', [
    ['oneHot', 'oneHot 65536 × 16'],
    ['gatherND pairs', 'gatherND 65536 pairs'],
    [
      'scatterND add (noisy: a call is well under a millisecond)',
      'scatterND add, 64 rows onto zeros [256, 256] (tf.scatterND)',
    ],
  ]);
  vocab('transcendentals on 1M float32, cumsum, floorDiv, any/all of all-false/all-true rows', [
    ...['log1p', 'expm1', 'softplus', 'sinh', 'cosh', 'asinh', 'acosh'].map((op) => [op, op]),
    ['cumsum [256, 256] along axis 1', 'cumsum [256, 256] (axis 1)'],
    ['cumsum of 65536', 'cumsum 65536'],
    ['floorDiv float32', 'floorDiv'],
    ['floorDiv int32', 'floorDiv int32'],
    ['any, all false', 'any (axis 1), all false'],
    ['all, all true', 'all (axis 1), all true'],
  ]);
  const epoch = BACKENDS.map((b) => harnessRow(VM, 'epoch', b, 'MNIST epoch (MLP, 8000 digits, batch 64)', 8000));
  const ours = [...new Set(epoch.map((r) => mib(r.peakBytes)))];
  const theirs = [...new Set(epoch.map((r) => mib(r.peerPeakBytes)))];
  const { host } = harnessRow(VM, 'matmul', 'cpu', 'matmul', 512);
  return {
    sources,
    lines: [
      `## This 2-core VM: cpu, wasm, and webgpu on lavapipe (\`benches/results/${VM}/\`)`,
      '',
      `${host}. \`npm run bench\` (\`benches/suites/run.mjs\`): each PolyHAL backend against its TensorFlow.js 4.22`,
      "counterpart in one process on the same inputs. Ratio = peer time / PolyHAL time. This VM's speed drifts",
      'from minute to minute, so the harness interleaves rounds and the ratios are the figures to read.',
      '',
      table(['what', 'PolyHAL', 'TensorFlow.js', 'ratio'], out),
      '',
      "Peak live device memory during that epoch (sampled between steps), above the model's own buffers: " +
        `${ours.join(' / ')} MiB on ${ours.length === 1 ? 'every backend' : 'cpu / wasm / webgpu'}, ` +
        `${theirs.join(' / ')} MiB for TensorFlow.js.`,
    ],
  };
}
