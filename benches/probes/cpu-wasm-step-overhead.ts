/**
 * Where the main job's ViT training step (buildModel('vit', be, 0), batch 64, AdamW lr 1e-3 weight decay 0.05,
 * crossEntropy; the step of webgpu-compile-step.ts: zeroGrad, forward and backward, the optimizer's step, the loss
 * read back) spends its time on the cpu and wasm backends, and so how much a replay of its kernels (`compile`
 * calling the recorded kernels again without the JavaScript around them) could save at most.
 *
 * Per backend, one model, the same inputs, after 3 warm-up steps:
 * 1. A kernel-only replay, measured: one step runs with its kernel calls recorded with their arguments — on wasm
 *    each outermost call of a WebAssembly export or of the worker pool, on cpu each outermost kernel hook (the
 *    loops over typed arrays) — and every buffer and heap block it allocates kept from being freed or reused; then
 *    `--rounds` rounds, each `--steps` eager steps and `--steps` runs of the recorded calls (no autograd, validation,
 *    allocation or views: what a replay that kept only the kernels would do), in alternating order. The row gives
 *    the median round's ms per step of each, and the median and range of the rounds' own ratios, by wall time and
 *    by the process's CPU time (all threads).
 * 2. The split of an eager step: `--steps` steps under V8's sampling CPU profiler (node:inspector, a sample every
 *    100 µs) with marker functions wrapped around the backend instance's methods, each sample of the main thread
 *    put in the innermost layer its stack is in:
 * - kernels: on wasm, WebAssembly frames and the worker pool's runs (the calling thread's share and its wait for
 *   the other threads); on cpu, the kernel hooks (unaryKernel, matmulKernel, ...);
 * - hook JavaScript (wasm): the kernel hooks and the backend's own ops around the WebAssembly calls (row plans,
 *   pointers, temporary blocks);
 * - allocation: allocate, free and deallocate (the buffer table, the storage: a new typed array on cpu, the heap's
 *   free lists on wasm);
 * - HAL JavaScript: the rest of the backend's public calls (PROFILED_METHODS: validation, views, op composites);
 * - GC: the garbage collector;
 * - other JavaScript: autograd (the graph, backward's bookkeeping, scopes), the optimizer's loop, Module code.
 * A replay keeps at least the kernels' time: `ceiling` = 1 / kernel share is the speedup it could reach at most,
 * and `allows1_3x` whether the non-kernel share exceeds 1 − 1/1.3 ≈ 23%, the least that a 1.3× step needs.
 * Then one `profile(be)` step of a twin model gives the HAL calls per step and the slowest methods.
 *   node cpu-wasm-step-overhead.mjs [--backends cpu,wasm] [--threads auto] [--rounds 9] [--steps 4] [--json f]
 * (`--threads`: the wasm backend's threads option.)
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { loadavg } from 'node:os';
import { AdamW, crossEntropy, PROFILED_METHODS, profile, scope, Tensor } from '@polyhal/autograd';
import { CpuBackend } from '@polyhal/backend-cpu';
import { createWasmBackend } from '@polyhal/backend-wasm';
import type { ComputeBackend } from '@polyhal/hal';
import { buildModel, toModelInput } from '@polyhal/models';

const arg = (name: string, d: string): string => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1]! : d;
};
const roundsN = Number(arg('--rounds', '9'));
const steps = Number(arg('--steps', '4'));
const backends = arg('--backends', 'cpu,wasm').split(',');
const threads = arg('--threads', 'auto');
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (v: number, d = 2): number => +v.toFixed(d);
type Fn = (...a: unknown[]) => unknown;

// Markers: named frames the profile's stacks show (one plain call each; nothing timed in JavaScript).
function __polyhalKernel(f: Fn, self: unknown, a: unknown[]): unknown {
  return f.apply(self, a);
}
function __polyhalHook(f: Fn, self: unknown, a: unknown[]): unknown {
  return f.apply(self, a);
}
function __polyhalHal(f: Fn, self: unknown, a: unknown[]): unknown {
  return f.apply(self, a);
}
function __polyhalAlloc(f: Fn, self: unknown, a: unknown[]): unknown {
  return f.apply(self, a);
}
type Layer = 'kernels' | 'hookJs' | 'allocJs' | 'halJs' | 'gc' | 'otherJs';
const MARKERS: Record<string, Layer> = {
  __polyhalKernel: 'kernels',
  __polyhalHook: 'hookJs',
  __polyhalAlloc: 'allocJs',
  __polyhalHal: 'halJs',
};
const ALLOCATION = new Set(['allocate', 'deallocate', 'free']);

/** Wraps method `n` of `o` in `marker` (as an own property). */
function mark(o: Record<string, unknown>, n: string, marker: typeof __polyhalHal): void {
  const f = o[n] as Fn;
  o[n] = (...a: unknown[]) => marker(f, o, a);
}

/** The names of the methods of `o`'s prototype chain that end in `Kernel` (the kernel hooks). */
function hookNames(o: object): string[] {
  const names = new Set<string>();
  for (let p = Object.getPrototypeOf(o); p && p !== Object.prototype; p = Object.getPrototypeOf(p))
    for (const n of Object.getOwnPropertyNames(p)) if (n.endsWith('Kernel')) names.add(n);
  return [...names].filter((n) => typeof (o as Record<string, unknown>)[n] === 'function');
}

/** Installs the markers on the backend instance (see the module's comment). */
function instrument(be: ComputeBackend): void {
  const own = be as unknown as Record<string, unknown>;
  const wasm = be.name === 'wasm';
  for (const n of PROFILED_METHODS)
    if (typeof own[n] === 'function') mark(own, n, ALLOCATION.has(n) ? __polyhalAlloc : __polyhalHal);
  for (const n of hookNames(be)) mark(own, n, wasm ? __polyhalHook : __polyhalKernel);
  if (wasm) {
    // the backend's own ops that call WebAssembly without a hook, and the worker pool's runs
    for (const n of ['softmax', 'softmaxCrossEntropy', 'conv', 'convTranspose', 'resize']) mark(own, n, __polyhalHook);
    const pool = (own['ctx'] as { pool: Record<string, unknown> | null }).pool;
    if (pool) for (const n of ['run', 'runQueued']) mark(pool, n, __polyhalKernel);
  }
}

interface Call {
  readonly f: Fn;
  readonly self: unknown;
  readonly args: unknown[];
}

/**
 * Records the kernel calls of one run of `step` — on wasm each outermost call of a WebAssembly export or of the
 * worker pool, on cpu each outermost kernel hook (and on wasm a hook that computes without WebAssembly) — with
 * their arguments, and keeps every buffer and block the run allocates from being freed or reused after it (so
 * that the calls can run again on the same memory). Returns the calls and a function that runs them again.
 */
async function recordKernels(
  be: ComputeBackend,
  step: () => Promise<unknown>,
): Promise<{ calls: Call[]; replay: () => void }> {
  const own = be as unknown as Record<string, unknown>;
  const wasm = be.name === 'wasm';
  const calls: Call[] = [];
  let recording = false;
  let depth = 0; // inside a recorded call
  let hookDepth = 0;
  const restore: (() => void)[] = [];
  const set = (o: Record<string, unknown>, n: string, v: unknown): void => {
    const had = Object.hasOwn(o, n);
    const old = o[n];
    Object.defineProperty(o, n, { value: v, writable: true, configurable: true, enumerable: true });
    restore.push(() => (had ? Object.defineProperty(o, n, { value: old, writable: true }) : delete o[n]));
  };
  const leaf =
    (f: Fn, self: unknown) =>
    (...a: unknown[]) => {
      if (recording && depth === 0) calls.push({ f, self, args: a });
      depth++;
      try {
        return f.apply(self, a);
      } finally {
        depth--;
      }
    };
  for (const n of hookNames(be)) {
    const f = own[n] as Fn;
    set(own, n, (...a: unknown[]) => {
      if (!recording || hookDepth > 0 || depth > 0) return f.apply(be, a);
      if (!wasm) return leaf(f, be)(...a);
      const before = calls.length;
      hookDepth++;
      try {
        return f.apply(be, a);
      } finally {
        hookDepth--;
        if (calls.length === before) calls.push({ f, self: be, args: a }); // computed in JavaScript
      }
    });
  }
  // what the run allocates stays: its frees are skipped, now and later
  const pinned = new Set<number>();
  if (wasm) {
    const ctx = own['ctx'] as Record<string, unknown> & {
      k: Record<string, unknown>;
      pool: Record<string, unknown> | null;
    };
    const heap = own['heap'] as Record<string, unknown>;
    const k: Record<string, unknown> = {};
    for (const [n, v] of Object.entries(ctx.k)) k[n] = typeof v === 'function' ? leaf(v as Fn, ctx.k) : v;
    set(ctx, 'k', k);
    set(own, 'k', k);
    if (ctx.pool) for (const n of ['run', 'runQueued']) set(ctx.pool, n, leaf(ctx.pool[n] as Fn, ctx.pool));
    const [alloc, release] = [heap['alloc'] as Fn, heap['release'] as Fn];
    heap['alloc'] = (...a: unknown[]) => {
      const p = alloc.apply(heap, a) as number;
      if (recording) pinned.add(p);
      return p;
    };
    heap['release'] = (p: number, bytes: number) => (pinned.has(p) ? undefined : release.call(heap, p, bytes));
    const ptrs = own['ptrs'] as Map<number, number>;
    const destroy = own['destroyStorage'] as Fn;
    own['destroyStorage'] = (b: { id: number }) => (pinned.has(ptrs.get(b.id)!) ? undefined : destroy.call(be, b));
  } else {
    const [create, destroy] = [own['createStorage'] as Fn, own['destroyStorage'] as Fn];
    own['createStorage'] = (b: { id: number }) => {
      if (recording) pinned.add(b.id);
      return create.call(be, b);
    };
    own['destroyStorage'] = (b: { id: number }) => (pinned.has(b.id) ? undefined : destroy.call(be, b));
  }
  recording = true;
  try {
    await step();
  } finally {
    recording = false;
    for (const r of restore.reverse()) r();
  }
  return {
    calls,
    replay: () => {
      for (const c of calls) c.f.apply(c.self, c.args);
    },
  };
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Milliseconds of the profile per layer (each sample: the innermost marker of its stack, or its own frame). */
function layers(p: CpuProfile): Record<Layer, number> & { idle: number } {
  const parent = new Map<number, number>();
  const byId = new Map<number, ProfileNode>();
  for (const n of p.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const layerOf = new Map<number, Layer | 'idle'>();
  const classify = (id: number): Layer | 'idle' => {
    const known = layerOf.get(id);
    if (known) return known;
    const f = byId.get(id)!.callFrame;
    let l: Layer | 'idle';
    if (f.url.startsWith('wasm://')) l = 'kernels';
    else if (f.functionName === '(garbage collector)') l = 'gc';
    else if (f.functionName === '(idle)' || f.functionName === '(program)') l = 'idle';
    else if (MARKERS[f.functionName]) l = MARKERS[f.functionName]!;
    else {
      const up = parent.get(id);
      l = up === undefined ? 'otherJs' : classify(up);
      if (l === 'idle' || l === 'gc') l = 'otherJs';
    }
    layerOf.set(id, l);
    return l;
  };
  const ms = { kernels: 0, hookJs: 0, allocJs: 0, halJs: 0, gc: 0, otherJs: 0, idle: 0 };
  p.samples.forEach((id, i) => {
    ms[classify(id)] += (p.timeDeltas[i + 1] ?? 0) / 1000;
  });
  return ms;
}

const session = new Session();
session.connect();
const post = <T>(method: string, params?: object): Promise<T> =>
  new Promise((res, rej) => session.post(method, params, (e, r) => (e ? rej(e) : res(r as T))));

const xs = Float32Array.from({ length: 64 * 784 }, (_, i) => ((i * 7919) % 255) / 255);
const ys = new Float32Array(64 * 10);
for (let i = 0; i < 64; i++) ys[i * 10 + (i % 10)] = 1;
const rows: Record<string, unknown>[] = [];

for (const name of backends) {
  const be: ComputeBackend =
    name === 'wasm'
      ? await createWasmBackend({ threads: threads === 'auto' ? 'auto' : Number(threads) })
      : new CpuBackend();
  const load = loadavg()[0]!; // other processes on the cores (the machine is shared)
  const x = Tensor.fromArray(be, xs, [64, 784]);
  const y = Tensor.fromArray(be, ys, [64, 10]);
  const model = buildModel('vit', be, 0);
  const opt = new AdamW(model.parameters(), { lr: 1e-3, weightDecay: 0.05 });
  const step = async (): Promise<number> => {
    opt.zeroGrad();
    const loss = scope(() => {
      const l = crossEntropy(model.forward(toModelInput('vit', x)), y);
      l.backward();
      return l;
    });
    opt.step();
    const v = await loss.item();
    loss.dispose();
    return v;
  };
  for (let i = 0; i < 3; i++) await step(); // warm-up (the optimizer's state is made at its first step)
  const { calls, replay } = await recordKernels(be, step);
  const replayStep = async (): Promise<void> => {
    replay();
    await Promise.resolve(); // as the eager step's read of the loss
  };
  await replayStep();
  // wall and process CPU milliseconds per step of each round, eager and replayed alternately
  const ms: number[] = [];
  const replayMs: number[] = [];
  const cpuMs: number[] = [];
  const replayCpuMs: number[] = [];
  for (let r = 0; r < roundsN; r++) {
    for (const eager of r % 2 ? [false, true] : [true, false]) {
      const c = process.cpuUsage();
      const t = performance.now();
      for (let i = 0; i < steps; i++) await (eager ? step() : replayStep());
      const wallStep = (performance.now() - t) / steps;
      const used = process.cpuUsage(c);
      (eager ? ms : replayMs).push(wallStep);
      (eager ? cpuMs : replayCpuMs).push((used.user + used.system) / 1000 / steps);
    }
  }
  const wall = median(ms);
  const kernelsOnly = median(replayMs);
  // each round's own ratio (robust to a load that drifts between rounds)
  const pairRatios = ms.map((m, i) => m / replayMs[i]!);
  const cpuRatios = cpuMs.map((m, i) => m / replayCpuMs[i]!);
  instrument(be);
  await step();
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 100 });
  await post('Profiler.start');
  const t = performance.now();
  for (let i = 0; i < steps; i++) await step();
  const sampledMs = (performance.now() - t) / steps;
  const { profile: cpu } = await post<{ profile: CpuProfile }>('Profiler.stop');
  await post('Profiler.disable');
  const l = layers(cpu);
  const total = Object.values(l).reduce((s, v) => s + v, 0);
  const share = (v: number): number => round(v / total, 3);
  // one profiled step of a twin model built through the profiler's backend: the HAL calls
  const prof = profile(be);
  const twin = buildModel('vit', prof.backend, 0);
  const twinOpt = new AdamW(twin.parameters(), { lr: 1e-3, weightDecay: 0.05 });
  const px = Tensor.fromArray(prof.backend, xs, [64, 784]);
  const py = Tensor.fromArray(prof.backend, ys, [64, 10]);
  const twinStep = async (): Promise<void> => {
    twinOpt.zeroGrad();
    const loss = scope(() => {
      const l1 = crossEntropy(twin.forward(toModelInput('vit', px)), py);
      l1.backward();
      return l1;
    });
    twinOpt.step();
    await loss.item();
    loss.dispose();
  };
  await twinStep();
  await prof.start();
  await twinStep();
  const report = await prof.stop();
  for (const d of [twinOpt, twin, px, py]) d.dispose();
  const kernels = l.kernels / total;
  const nThreads = (be as unknown as { threads?: number }).threads ?? 1;
  const row = {
    model: 'vit',
    backend: name,
    variant: name === 'wasm' ? `wasm, ${nThreads} thread${nThreads === 1 ? '' : 's'}` : name,
    device: be.deviceName,
    size: 64, // the batch
    ...(name === 'wasm' ? { threads: nThreads } : {}),
    loadAverage: [round(load), round(loadavg()[0]!)], // 1-minute, before and after
    stepMs: round(wall),
    sampledStepMs: round(sampledMs),
    kernelShare: share(l.kernels),
    ...(name === 'wasm' ? { hookJsShare: share(l.hookJs) } : {}),
    allocJsShare: share(l.allocJs),
    halJsShare: share(l.halJs),
    otherJsShare: share(l.otherJs),
    gcShare: share(l.gc),
    idleShare: share(l.idle),
    kernelMs: round(wall * kernels),
    nonKernelMs: round(wall * (1 - kernels)),
    ceiling: round(1 / kernels),
    recordedCalls: calls.length,
    kernelReplayMs: round(kernelsOnly),
    kernelReplaySpeedup: round(median(pairRatios)),
    kernelReplaySpeedupRange: [round(Math.min(...pairRatios)), round(Math.max(...pairRatios))],
    stepCpuMs: round(median(cpuMs)),
    kernelReplayCpuMs: round(median(replayCpuMs)),
    kernelReplayCpuSpeedup: round(median(cpuRatios)),
    kernelReplayCpuSpeedupRange: [round(Math.min(...cpuRatios)), round(Math.max(...cpuRatios))],
    allows1_3x: 1 - kernels > 1 - 1 / 1.3,
    halCalls: report.rows.reduce((s, r) => s + r.calls, 0),
    halCallsMs: round(report.totalMs - report.outsideMs),
    outsideHalMs: round(report.outsideMs),
    slowestCalls: report.rows.slice(0, 6).map((r) => `${r.op} ${r.calls}× ${round(r.ms)} ms`),
  };
  rows.push(row);
  console.log(JSON.stringify(row));
  opt.dispose();
  model.dispose();
  x.dispose();
  y.dispose();
  be.dispose();
}
session.disconnect();
const j = process.argv.indexOf('--json');
if (j > 0) writeFileSync(process.argv[j + 1]!, JSON.stringify({ rows }, null, 2));
