/**
 * Horizontal merging over a whole recording (option `mergeInCapture`, default true): when a capture ends, after
 * the plan's vertical fusion (plan-fusion.ts), runs of consecutive independent kernels are merged into one
 * dispatch each (kernels/merge-wgsl.ts): the merged grid's first workgroups run the first kernel's code, the next
 * the second's, and so on, each exactly as its own dispatch ran it, so a replay gives the same bits with fewer
 * dispatches (a dispatch costs a few µs of JavaScript to encode and ~3 µs of GPU time on a large GPU, whatever
 * its size: a step of small kernels is bound by their number). After horizontal fusion (Li et al., CGO 2022).
 *
 * Kernels K and L (consecutive: no copy or upload between them) merge when neither binds writable a buffer the other
 * binds at all — so L reads nothing K writes (RAW), writes nothing K reads (WAR) or writes (WAW), and no buffer is
 * bound writable by one and readable by the other in the merged dispatch (WebGPU forbids it); both were recorded with
 * constant params (a live kernel, whose params or grid a replay recomputes, is left alone); their @workgroup_size
 * agree, or each divides the other and all but one size belong to kernels that need nothing of their workgroup (no
 * barrier, workgroup memory or subgroup builtin: they run remapped, merge-wgsl.ts); and together they keep the
 * device's limits (workgroup memory, storage and uniform buffers per stage). Runs grow greedily, a kernel at a time,
 * while every pair of the run is independent and the limits hold. The merged pipeline comes from the pipeline cache
 * (its key names the grids and the kernels' keys); its bind group holds, kernel after kernel, the plan's uniform
 * buffer (at the kernel's params offset: dynamic offsets in binding order) and the kernel's buffers.
 */
import type { KernelStep, Recorder, Step } from './capture.js';
import { type MergeKernel, type Merged, type MergeLimits, mergeKernels } from './kernels/merge-wgsl.js';
import type { PipelineCache } from './pipelines.js';

/** What the merging needs of the backend. */
export interface PlanMergeContext {
  readonly pipelines: PipelineCache;
  readonly limits: MergeLimits;
  /** Dispatches saved by merging (kernels run inside another's dispatch), over every plan. */
  readonly stats: { merged: number };
}

const kernelOf = (s: Step | undefined): KernelStep | null => (s && 'pipe' in s ? s : null);

/** The buffers a kernel binds writable (read_write storage). */
const writable = (k: KernelStep): GPUBuffer[] => k.buffers.filter((_, j) => k.writes?.[j] ?? true);

/** Whether k and l may run in one dispatch: neither binds writable a buffer the other binds. */
function independent(k: KernelStep, l: KernelStep): boolean {
  return !writable(k).some((b) => l.buffers.includes(b)) && !writable(l).some((b) => k.buffers.includes(b));
}

/** A kernel with what a merge needs: its WGSL, key and constant params. */
const mergeable = (k: KernelStep | null, patched: ReadonlySet<number>, i: number): k is KernelStep =>
  k !== null && k.source !== undefined && k.key !== undefined && k.parts === undefined && !patched.has(i);

/** The merged kernel of `run`, whose merged module is `merged`. */
function mergedStep(run: readonly KernelStep[], merged: Merged, ctx: PlanMergeContext): KernelStep {
  const key = `merge[${run.map((k) => `${k.x},${k.y},${k.z}:${k.key}`).join(' + ')}]`;
  const { pipe, layout, writes } = ctx.pipelines.pipeline(key, () => merged.code);
  const first = run[0]!;
  return {
    pipe,
    layout,
    key,
    bytes: first.bytes,
    segment: first.segment,
    offset: first.offset,
    buffers: run.flatMap((k) => k.buffers),
    x: merged.grid[0],
    y: merged.grid[1],
    z: merged.grid[2],
    writes,
    parts: run.map((k) => ({ segment: k.segment, offset: k.offset, bytes: k.bytes, buffers: k.buffers.length })),
  };
}

/**
 * Merges the recording's runs of independent kernels (see the module comment) in place: rec.steps gets one
 * merged kernel per run, and the live kernels' step indices follow. Returns the dispatches saved.
 */
export function mergePlan(rec: Recorder, ctx: PlanMergeContext): number {
  const steps = rec.steps;
  const patched = new Set(rec.patches.map((p) => p.step));
  const out: Step[] = [];
  const index = new Map<number, number>();
  let saved = 0;
  for (let i = 0; i < steps.length; ) {
    const k = kernelOf(steps[i]);
    if (!mergeable(k, patched, i)) {
      index.set(i, out.length);
      out.push(steps[i++]!);
      continue;
    }
    const run = [k];
    const kernels: MergeKernel[] = [{ source: k.source!(), grid: [k.x, k.y, k.z] }];
    let best: Merged | null = null;
    for (let j = i + 1; j < steps.length; j++) {
      const l = kernelOf(steps[j]);
      if (!mergeable(l, patched, j) || !run.every((m) => independent(m, l))) break;
      const next = [...kernels, { source: l.source!(), grid: [l.x, l.y, l.z] as const }];
      const merged = mergeKernels(next, ctx.limits);
      if (!merged) break;
      run.push(l);
      kernels.splice(0, kernels.length, ...next);
      best = merged;
    }
    if (best) {
      out.push(mergedStep(run, best, ctx));
      saved += run.length - 1;
    } else {
      index.set(i, out.length);
      out.push(k);
    }
    i += run.length;
  }
  if (saved === 0) return 0;
  steps.splice(0, steps.length, ...out);
  const patches = rec.patches.map((p) => ({ step: index.get(p.step)!, params: p.params }));
  rec.patches.splice(0, rec.patches.length, ...patches);
  ctx.stats.merged += saved;
  return saved;
}
