// PERFORMANCE.md's sections on the real GPUs (benches/results/h200, benches/results/h100): the probes of
// benches/probes/ and the harness's webgpu runs, each figure with the card it came from.
import {
  day,
  fileLink,
  harnessRow,
  num,
  pct,
  probeRow,
  probeRows,
  results,
  slash,
  span,
  table,
  times,
} from './format.mjs';

const PACK = 'bundled by `bash ../shared/gpu/pack.sh benches/probes/<probe>.ts` (esbuild, `webgpu` kept external)';
/** The goals these rows are measured against (issue #35's targets). */
const GOALS = { int8Tops: 300, dot4OverFloat32: 1.5, bandwidthShare: 0.7 };

const ms = (x) => num(x);
const MODEL_NAMES = { mlp: 'MLP', cnn: 'CNN', vit: 'ViT' };
const conformance = (machine) =>
  probeRows(machine, 'gpu-conformance', {}).map(
    (r) =>
      `The conformance suite on this card (${r.config ?? 'default device'}; ` +
      `${fileLink(machine, 'gpu-conformance')}): ` +
      `${r.passed} passed, ${r.failed} failed.`,
  );

export function h200Section() {
  const M = 'h200';
  const sizes = [1024, 2048, 4096, 8192];
  const mm = sizes.map((n) =>
    probeRow(M, 'webgpu-matmul', { config: undefined, suite: 'matmul', size: n, tile: 'auto' }),
  );
  const lat = probeRow(M, 'webgpu-matmul', { config: undefined, suite: 'add-latency', size: 1024 });
  const mlp = harnessRow(M, 'mlpStep', 'webgpu', 'MLP 784-256-10 train step (batch 128, Adam)', 128);
  const conv = harnessRow(M, 'conv', 'webgpu', 'Conv2d 5×5/2 fwd+bwd [32,1,28,28]→16', 32);
  const trials = [...new Set(mm.map((r) => r.trials))];
  const rows = [
    [
      `matmul ${slash(sizes)}, webgpu (TFLOP/s; \`webgpu-matmul.ts\`, dispatch to result, ` +
        `median of ${trials.join(', ')} ` +
        `alternating trials; ${fileLink(M, 'webgpu-matmul')})`,
      slash(mm.map((r) => num(r.polyhalTflops))),
      `${slash(mm.map((r) => num(r.tfjsTflops)))} (tfjs-webgpu)`,
      slash(mm.map((r) => times(r.ratio))),
    ],
    ['add of 1K elements, dispatch → result (ms; the same run)', ms(lat.polyhalMs), ms(lat.tfjsMs), times(lat.ratio)],
    [
      `MLP 784-256-10 train step, batch 128 (ms; \`npm run bench\`, ${fileLink(M, 'mlpStep')})`,
      ms(mlp.medianMs),
      ms(mlp.peerMedianMs),
      times(mlp.ratio),
    ],
    [
      `Conv2d 5×5/2 fwd+bwd, batch 32 (ms; ${fileLink(M, 'conv')})`,
      ms(conv.medianMs),
      ms(conv.peerMedianMs),
      times(conv.ratio),
    ],
  ];
  return [
    `## ${results(M, 'webgpu-matmul').card} (\`benches/results/${M}/\`)`,
    '',
    `Probes ${PACK}, run on the GPU machine's Node; the harness as ` +
      `\`npm run bench -- --backend webgpu --machine ${M}\`.`,
    `Measured ${[...new Set([...mm, lat].map((r) => r.date.slice(0, 10)))].join(', ')} (probe), ` +
      `${mlp.date.slice(0, 10)} (harness). Every harness row: [Benchmarks](BENCHMARKS.md).`,
    '',
    table(['what', 'PolyHAL', 'TensorFlow.js', 'ratio'], rows),
    '',
    ...nativeHalfRows(M),
    ...conformance(M),
  ];
}

/** The webgpu-bandwidth rows of native float16 arithmetic (shader-f16) this page reports. */
const NATIVE_F16_CONFIG =
  'toggles allow_unsafe_apis,vulkan_enable_f16_on_nvidia; float16 arithmetic native; per-op slope rows';
const F16_ELEMENTWISE_GOAL = 1.8;

/** float16 elementwise ops on the shader-f16 path against float32: per block of 20 ops and per op (the slope). */
function nativeHalfRows(M) {
  const file = 'webgpu-bandwidth';
  const sizes = [1 << 24, 1 << 26];
  const rows = ['add', 'relu', 'chain'].map((op) => {
    const rs = sizes.map((size) => probeRow(M, file, { config: NATIVE_F16_CONFIG, suite: `${op}/float16`, size }));
    return [
      `${op}, ${slash(sizes.map((n) => `${n >> 20}M`))}`,
      `${slash(rs.map((r) => num(r.float16MsPerOp)))} (per block of 20: ${slash(rs.map((r) => num(r.float16Ms)))})`,
      `${slash(rs.map((r) => num(r.float32MsPerOp)))} (${slash(rs.map((r) => num(r.float32Ms)))})`,
      `${slash(rs.map((r) => times(r.speedupPerOp)))} (${slash(rs.map((r) => times(r.speedupOverFloat32)))})`,
    ];
  });
  const date = probeRow(M, file, { config: NATIVE_F16_CONFIG, suite: 'add/float16', size: sizes[1] }).date;
  return [
    `float16 arithmetic on \`shader-f16\` (\`webgpu-bandwidth.ts --float16-arithmetic native\`, the Dawn toggles ` +
      `\`allow_unsafe_apis,vulkan_enable_f16_on_nvidia\`, ${fileLink(M, file)}, ${day(date)}): ms per op as the ` +
      'slope between blocks of 20 and 100 queued ops (each block ends in a 1-element read, whose round trip the ' +
      'slope drops), in brackets per op of a block of 20. The goal: float16 at ≥ ' +
      `${times(F16_ELEMENTWISE_GOAL)} float32 at 64M elements.`,
    '',
    table(['op, elements', 'float16 ms', 'float32 ms', 'float16 speed-up'], rows),
    '',
  ];
}

function int8Rows(M) {
  const sizes = [4096, 8192];
  const at = (config) => sizes.map((size) => probeRow(M, 'webgpu-int8-matmul', { config, size }));
  const off = at('allow_unsafe_apis,disable_robustness');
  const on = at('allow_unsafe_apis');
  const dot4 = at('none');
  const gemm = (config, variant) => sizes.map((size) => probeRow(M, 'webgpu-int8-sgm-tune', { config, variant, size }));
  const large = gemm('allow_unsafe_apis,disable_robustness', 'f4x4-w2x2-k64-p16-pf-sw8');
  const medium = gemm('allow_unsafe_apis', 'f2x4-w2x2-k64-p16-pf-sw8');
  const f32 = [...off, ...on, ...dot4].map((r) => r.float32Tflops);
  const line = (what, rs) => [
    what,
    slash(rs.map((r) => num(r.int8Tops))),
    `PolyHAL float32 ${slash(rs.map((r) => num(r.float32Tflops)))} TFLOP/s`,
    slash(rs.map((r) => times(r.ratio))),
  ];
  const goalTops = GOALS.int8Tops;
  const metEnd = sizes.filter((_, i) => off[i].int8Tops >= goalTops);
  const metGemm = sizes.filter((_, i) => large[i].tops >= goalTops);
  const metDot4 = sizes.filter((_, i) => dot4[i].ratio >= GOALS.dot4OverFloat32);
  const where = (list) =>
    list.length === 0 ? 'at no size' : list.length === sizes.length ? 'at both sizes' : `at ${list}`;
  return {
    rows: [
      line(
        `int8 matmul (\`matmulInteger\`) ${slash(sizes)}, tensor cores (subgroup matrices), Dawn's robustness off, ` +
          `128×128 tiles (TOPS; \`webgpu-int8-matmul.ts\`, ${fileLink(M, 'webgpu-int8-matmul')})`,
        off,
      ),
      line("the same with Dawn's robustness on (every browser's mode), 64×128 tiles", on),
      line('`dot4I8Packed`, no subgroup matrices (no Dawn toggles: what a browser runs)', dot4),
      [
        `the GEMM kernel alone on raw Dawn devices, packing excluded (TOPS; \`webgpu-int8-sgm-tune.ts\`, ` +
          `${fileLink(M, 'webgpu-int8-sgm-tune')}): 128×128 robustness off / 64×128 robustness on`,
        `${slash(large.map((r) => num(r.tops)))}; ${slash(medium.map((r) => num(r.tops)))}`,
        '—',
        '—',
      ],
    ],
    notes: [
      `int8 goals: ${goalTops} TOPS — met by the GEMM kernel ${where(metGemm)}, end to end through \`matmulInteger\` ` +
        `${where(metEnd)} (the packing passes of the int32-stored operands cost the rest); ` +
        `dot4 at ${times(GOALS.dot4OverFloat32)} float32 — met ${where(metDot4)}. float32 in these runs: ` +
        `${num(span(f32))} TFLOP/s.`,
    ],
  };
}

function bandwidthRows(M) {
  const file = 'webgpu-bandwidth';
  const cfg = '--reps 100';
  const sizes = [1 << 24, 1 << 26];
  const label = (n) => `${n >> 20}M`;
  const ref = sizes.map((size) => probeRow(M, file, { config: cfg, suite: 'reference', size }));
  const peak = ref[0].peakGbps;
  const ops = ['add', 'relu', 'chain'];
  const rows = [];
  const shares = [];
  for (const op of ops) {
    const rs = sizes.map((size) => probeRow(M, file, { config: cfg, suite: op, size }));
    shares.push(...rs.map((r, i) => ({ op, size: sizes[i], share: r.polyhalGbps / peak })));
    rows.push([
      `${op}, ${slash(sizes.map(label))}, float32 (GB/s; share of the card's ${num(peak)} GB/s)`,
      slash(rs.map((r) => `${num(r.polyhalGbps)} (${pct(r.polyhalGbps / peak)})`)),
      `${slash(rs.map((r) => num(r.tfjsGbps)))} (tfjs-webgpu)`,
      slash(rs.map((r) => times(r.ratio))),
    ]);
  }
  const met = (size) => shares.filter((s) => s.size === size && s.share >= GOALS.bandwidthShare).map((s) => s.op);
  const f16cfg = '--reps 20';
  const f16 = [];
  for (const op of ops) {
    const hw = sizes.map((size) => probeRow(M, file, { config: f16cfg, suite: `${op}/float16`, size }));
    const int = sizes.map((size) =>
      probeRow(M, file, { config: `${f16cfg} --float16-conversions integer`, suite: `${op}/float16`, size }),
    );
    f16.push([
      `${op}/float16, ${slash(sizes.map(label))}, 2 bytes per element (ms; ${f16cfg})`,
      `${slash(hw.map((r) => num(r.float16Ms)))} ` +
        `(${slash(hw.map((r) => pct(r.float16Gbps / peak)))} of the card's GB/s)`,
      `PolyHAL float32 ${slash(hw.map((r) => num(r.float32Ms)))} (tfjs has no float16)`,
      `${slash(hw.map((r) => times(r.speedupOverFloat32)))} over float32; with integer conversions ` +
        `${slash(int.map((r) => times(r.speedupOverFloat32)))}`,
    ]);
  }
  const where = (list) => (list.length === 0 ? 'by no op' : list.length === ops.length ? 'by every op' : `by ${list}`);
  return {
    rows: [...rows, ...f16],
    notes: [
      `Elementwise bandwidth (\`webgpu-bandwidth.ts\`, ${fileLink(M, file)}; ${cfg}: that many queued ops, then a ` +
        `1-element read; the median trial): the goal of ${pct(GOALS.bandwidthShare)} of the card's bandwidth is met ` +
        `at ${label(sizes[0])} ${where(met(sizes[0]))}, at ${label(sizes[1])} ${where(met(sizes[1]))}. References ` +
        `on the same card: the copy engine (\`copyBufferToBuffer\`) ${slash(ref.map((r) => num(r.copyGbps)))} GB/s, ` +
        `a plain vec4 WGSL add ${slash(ref.map((r) => num(r.vec4AddGbps)))} GB/s. float16 arrays compute in float32; ` +
        "the integer conversions are the fallback where the adapter's `pack2x16float`/`unpack2x16float` are not exact.",
    ],
  };
}

export function h100Section() {
  const M = 'h100';
  const vit = harnessRow(M, 'vit', 'webgpu', 'ViT train step (batch 64, 4 blocks × width 64, AdamW)', 64);
  const step = probeRow(M, 'webgpu-vit-step', {});
  const rounds = step.rounds.map((r) => r.stepMs).sort((a, b) => a - b);
  const cpu = step.rounds.map((r) => r.cpuMs).sort((a, b) => a - b);
  const mid = (xs) => xs[xs.length >> 1];
  const q = probeRows(M, 'gpu-quantized', {});
  const int8 = int8Rows(M);
  const bw = bandwidthRows(M);
  const f16 = probeRows(M, 'webgpu-f16-probe', {});
  const rows = [
    [
      `ViT train step, batch 64, webgpu (ms; \`npm run bench -- --suite vit\`, ${fileLink(M, 'vit')})`,
      ms(vit.medianMs),
      `${ms(vit.peerMedianMs)} (tfjs-webgpu)`,
      times(vit.ratio),
    ],
    [
      `ViT train step, batch 64, the step loop alone (ms; \`webgpu-vit-step.ts\`, median of ${rounds.length} rounds, ` +
        `${fileLink(M, 'webgpu-vit-step')})`,
      `${ms(mid(rounds))} (rounds ${num(span(rounds))}; CPU up to the loss read ${ms(mid(cpu))}); ` +
        `${step.perStep.dispatches} kernels and ${step.perStep.submissions} submissions per step`,
      '—',
      '—',
    ],
    ...int8.rows,
    ...q.map((r) => [
      `int8 inference, ${MODEL_NAMES[r.model] ?? r.model} (${r.epochs} epochs), ` +
        `batch ${r.batchSize} / batch 1 (digits/s; ` +
        `\`gpu-quantized.ts\`, ${fileLink(M, 'gpu-quantized')}); test accuracy int8 ${r.int8Accuracy}, float32 ` +
        `${r.floatAccuracy}`,
      `${num(r.batch256[1])} / ${num(r.batch1[1])}`,
      `PolyHAL float32 ${num(r.batch256[0])} / ${num(r.batch1[0])}`,
      `${times(r.batch256[1] / r.batch256[0])} / ${times(r.batch1[1] / r.batch1[0])}`,
    ]),
    ...bw.rows,
  ];
  return [
    `## ${results(M, 'webgpu-vit-step').card} (\`benches/results/${M}/\`)`,
    '',
    `Probes ${PACK}, run on the GPU machine's Node. On this card the ViT step is CPU-bound: the host's own noise`,
    'between leases is of the order of the differences between builds.',
    '',
    table(['what', 'PolyHAL', 'peer', 'ratio'], rows),
    '',
    ...int8.notes,
    '',
    ...bw.notes,
    '',
    `\`shader-f16\` (\`webgpu-f16-probe.ts\`, ${fileLink(M, 'webgpu-f16-probe')}): offered under ` +
      `${f16
        .filter((r) => r.shaderF16)
        .map((r) => `\`${r.toggles.join(' ')}\``)
        .join(', ')}; not under ${f16
        .filter((r) => !r.shaderF16)
        .map((r) => (r.toggles.length ? `\`${r.toggles.join(' ')}\`` : 'no toggles'))
        .join(', ')}. PolyHAL does not need it: float16 storage with float32 arithmetic serves every adapter.`,
    '',
    ...conformance(M),
  ];
}
