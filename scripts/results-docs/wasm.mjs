// PERFORMANCE.md's section on the wasm kernels per runtime (benches/results/node-2core/wasm.json from
// benches/probes/wasm.mjs, wasm-browser.json from wasm-browser.mjs, wasm-int8-matmul.json): PolyHAL's builds
// (plain SIMD, relaxed SIMD) against tfjs-wasm (XNNPACK) in one process on the same inputs.
import { DAGGER, fileLink, num, probeRow, probeRows, slash, span, table, times } from './format.mjs';

const VM = 'node-2core';
const RUNTIMES = [
  ['Node 24.21.0', 'wasm'],
  ['Node 26.10.0', 'wasm'],
  ['Node 22.23.3', 'wasm'],
  ['Chromium 156', 'wasm-browser'],
  ['Node 20.20.2, --experimental-wasm-relaxed-simd', 'wasm'],
  ['Deno 2.9', 'wasm'],
];
const SIZES = [256, 512, 1024];
/** The 1.25× goal against XNNPACK on one thread. */
const GOAL = 1.25;

const row = (runtime, file, suite, size, build) => probeRow(VM, file, { runtime, suite, size, build });
const t = (r) => ({ transcribed: Boolean(r.transcribed) });

function matmulTable() {
  const rows = RUNTIMES.map(([runtime, file]) => {
    const relaxed = SIZES.map((n) => row(runtime, file, 'matmul', n, 'relaxed'));
    const plain = SIZES.map((n) => row(runtime, file, 'matmul', n, 'simd'));
    return [
      `${runtime} (${fileLink(VM, file)})`,
      slash(relaxed.map((r) => num(r.polyhalGflops))),
      slash(plain.map((r) => num(r.polyhalGflops))),
      slash(relaxed.map((r) => num(r.tfjsGflops))),
      slash(relaxed.map((r) => times(r.ratio))),
      slash(plain.map((r) => times(r.ratio))),
    ];
  });
  return table(['runtime', 'relaxed SIMD (FMA)', 'plain SIMD', 'tfjs-wasm', 'ratio, relaxed', 'ratio, plain'], rows);
}

function elementwiseTable() {
  const cases = [
    ['add', 1 << 20],
    ['add', 1 << 24],
    ['relu', 1 << 20],
    ['relu', 1 << 24],
  ];
  const rows = RUNTIMES.map(([runtime, file]) => {
    const rs = cases.map(([op, n]) => row(runtime, file, op, n, 'simd'));
    return [
      runtime,
      slash(rs.map((r) => num(r.polyhalMs))),
      slash(rs.map((r) => num(r.tfjsMs))),
      slash(rs.map((r) => times(r.ratio))),
    ];
  });
  return table(['runtime', 'PolyHAL, ms', 'tfjs-wasm, ms', 'ratio'], rows);
}

function threadsTable(sources) {
  const rows = [];
  for (const [runtime, file] of RUNTIMES) {
    for (const two of probeRows(VM, file, { runtime, suite: 'matmul-2-threads', size: 1024 })) {
      const build = two.build === 'auto' ? 'relaxed' : two.build;
      const one = row(runtime, file, 'matmul', 1024, build);
      const peer =
        two.tfjsGflops !== undefined
          ? `tfjs-wasm's threaded build (its pool reported ${two.tfjsThreads} thread): ${num(two.tfjsGflops)}`
          : '—';
      const where = two.device ? ', PolyHAL inside a dedicated Worker' : '';
      rows.push([
        `matmul 1024, ${runtime}, ${build}${where}`,
        num(two.polyhalGflops),
        peer,
        `${times(two.polyhalGflops / one.polyhalGflops)} its 1-thread speed`,
      ]);
    }
  }
  const i = probeRow(VM, 'wasm', { suite: 'matmul-2-threads, interleaved with 1-thread runs' });
  sources.push(i.transcribed);
  rows.push([
    `matmul ${i.size}, ${i.runtime}, ${i.build}, timed interleaved with 1-thread runs ${DAGGER}`,
    num(i.polyhalGflops, t(i)),
    '—',
    `${times(i.speedupOverOneThread, t(i))} its 1-thread speed`,
  ]);
  for (const op of ['add', 'relu'])
    for (const build of ['simd', 'relaxed']) {
      const r = row('Node 24.21.0', 'wasm', `${op}-2-threads`, 1 << 24, build);
      rows.push([
        `${op} 16M, Node 24.21.0, ${build} build (ms)`,
        num(r.polyhalMs),
        `1 thread: ${num(r.oneThreadMs)}`,
        `${times(r.speedup)} its 1-thread speed`,
      ]);
    }
  const s = probeRow(VM, 'wasm', { suite: 'add and relu, 2 threads, standalone' });
  sources.push(s.transcribed);
  rows.push([
    `add and relu, ${s.runtime}, ${s.size.map((n) => num(n, t(s))).join(' to ')} elements, standalone ${DAGGER}`,
    '—',
    '—',
    `${times(s.speedup, t(s))} their 1-thread time`,
  ]);
  return table(['2 worker threads', 'PolyHAL, GFLOP/s or ms', 'peer', 'speed-up'], rows);
}

function int8Table(sources) {
  const rows = probeRows(VM, 'wasm-int8-matmul', {}).map((r) => {
    if (r.transcribed) sources.push(r.transcribed);
    const mark = r.transcribed ? ` ${DAGGER}` : '';
    return [
      `${r.size}, ${r.threads} threads${r.runs ? `, ${num(r.runs, t(r))} runs` : ''}${mark}`,
      num(r.int8Gops, t(r)),
      num(r.float32Gflops, t(r)),
      times(r.ratio, t(r)),
    ];
  });
  return table(['size', 'int8, GOPS', 'PolyHAL float32, GFLOP/s', 'int8 / float32 speed'], rows);
}

/** Where the 1.25× goal is met and where not, from the matmul rows of every runtime. */
function goal(sources) {
  const r = (runtime, file, build) => [512, 1024].map((n) => row(runtime, file, 'matmul', n, build).ratio);
  /** Runtimes whose every ratio of `build` reaches the goal, and the rest, each with its ratios. */
  const split = (build) => {
    const all = RUNTIMES.map(([rt, f]) => ({ rt: rt.split(',')[0], ratios: r(rt, f, build) }));
    const met = all.filter((x) => Math.min(...x.ratios) >= GOAL);
    const not = all.filter((x) => Math.min(...x.ratios) < GOAL);
    const list = (xs) => `${xs.map((x) => x.rt).join(', ')} (${times(span(xs.flatMap((x) => x.ratios)))})`;
    return [met.length ? `met in ${list(met)}` : '', not.length ? `not in ${list(not)}` : '']
      .filter(Boolean)
      .join(', ');
  };
  const trap = probeRow(VM, 'wasm', { runtime: 'Node 26.10.0, --disable-wasm-trap-handler' });
  const shuffle = probeRows(VM, 'wasm', { runtime: 'Deno 2.9 and Node 24.21.0' })[0];
  sources.push(trap.transcribed, shuffle.transcribed);
  return [
    `The goal, ${times(GOAL)} XNNPACK (tfjs-wasm) on one thread at 512 and 1024: with relaxed SIMD ` +
      `${split('relaxed')}; without it (\`relaxedSimd: false\`, Node 20's default) ${split('simd')} — both ` +
      "kernels sit near the mul+add instruction ceiling. Deno does not enable V8's WebAssembly trap handlers " +
      '(denoland/deno#35658), so V8 emits a compare-and-branch for every load: Node 26 with ' +
      `\`--disable-wasm-trap-handler\` reproduces Deno's figure (${num(trap.polyhalGflops, t(trap))} instead of ` +
      `${num(trap.withTrapHandlerGflops, t(trap))} GFLOP/s at ${trap.size}) ${DAGGER}, and a kernel with ` +
      `${shuffle.suite.replace(/^matmul, /, '')} ran at ${times(shuffle.speedupDeno, t(shuffle))} ` +
      "the kept kernel's speed " +
      `in Deno and ${times(shuffle.speedupNode, t(shuffle))} in Node ${DAGGER}.`,
  ];
}

export function wasmSection() {
  const sources = [];
  const threads = threadsTable(sources);
  const int8 = int8Table(sources);
  const goalLines = goal(sources);
  return {
    sources,
    lines: [
      '## wasm kernels per runtime, 1 and 2 threads (the same VM)',
      '',
      "`benches/probes/wasm.mjs` (Node, Deno) and `benches/probes/wasm-browser.mjs` (headless Chromium): PolyHAL's " +
        'wasm builds against tfjs-wasm 4.22 in one process on the same inputs, kernel time (inputs and outputs stay',
      'on the backend); ratios are medians of per-round ratios (tfjs time / PolyHAL time). Deno runs WebAssembly',
      'without trap handlers, so every memory access is bounds-checked in software.',
      '',
      `matmul f32 N×N on 1 thread, GFLOP/s at ${slash(SIZES)} (the default build is relaxed SIMD wherever the ` +
        'runtime has it):',
      '',
      matmulTable(),
      '',
      'add and relu on 1 thread, plain SIMD build, at 1M / 16M elements (add 1M / add 16M / relu 1M / relu 16M):',
      '',
      elementwiseTable(),
      '',
      'Worker threads on one shared memory (this VM has two vCPUs, which do not reliably sustain two busy threads; ' +
        'tfjs-wasm has no threads in Node):',
      '',
      threads,
      '',
      `int8 matmul (\`matmulInteger\`), \`i32x4.dot_i16x8_s\` on int16-packed operands, ` +
        "against PolyHAL's own float32 " +
        `on the same values (tfjs-wasm has no int8 matmul; \`benches/probes/wasm-int8-matmul.mjs\`, ` +
        `${fileLink(VM, 'wasm-int8-matmul')}):`,
      '',
      int8,
      '',
      ...goalLines,
    ],
  };
}
