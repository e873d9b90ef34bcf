/**
 * Fusion over a whole recording (option `fuseInCapture`): when a capture ends, and before its plan is built
 * (capture.ts), a kernel whose result only one later elementwise kernel reads is folded into that kernel — an
 * elementwise chain into the chain that reads it (one fusedElementwise kernel), a float32 product into its
 * store (an epilogue: kernels/matmul-epilogue.ts) — so a replay runs one kernel where the trace ran two, and
 * never writes the intermediate. The trace itself ran unfused; every replay runs the fused plan.
 *
 * This sees what the call-time fusion (capture-fusion.ts) cannot: when an op is called it is not known whether
 * its result is read again (autograd keeps a step's intermediates until the step's scope ends), but at the end
 * of a capture the whole recording is known. A kernel's result is the value of its output buffer from its write
 * to the next write (buffers are reused within a capture); the recorder notes where each buffer went back to the
 * pool (capture.ts `frees`). Producer P and reader E are fused when:
 * - P and E are described (KernelDesc: the elementwise dispatches and the float32 products; a product split over
 *   K by its sum kernel, the last of its two: dispatch-matmul.ts splitSums);
 * - P's result is read by E alone — no other kernel or copy binds the buffer before it is written again — and
 *   it is dead after E: the buffer was freed (no array holds it when the capture ends) or written again;
 * - E reads the result once, as its chain's root (the whole buffer, as P wrote it) or as the array operand of its
 *   first step (the chain is then rewritten to run from the result, the other operand becoming the array);
 * - nothing P reads is written between P and E (the fused kernel runs in E's place), and E's output is not one
 *   of P's operands;
 * - a product's epilogue arrays are contiguous arrays of the product's shape, within the device's storage
 *   buffers per stage; a chain within MAX_FUSED_ARRAYS arrays; a product on the register blocks, gemv or the
 *   unsplit scalar tiled kernel (the kernels of small products, where the kernel saved is a good part of the
 *   work: dispatch-matmul.ts), or split over K (tiled or gemv): the epilogue then goes into the sum of its
 *   partials (kernels/splitk.ts), which runs in E's place, so nothing may write the partials between P and E
 *   (the main job's MLP on an H100: `relu(x·W1ᵀ + b1)` as partials and one sum-bias-ReLU kernel).
 * A product whose result h stays live — read again after E (GELU's backward reads the h of `gelu(x·W1ᵀ + b1)`,
 * a ReLU's the linear layer's output), or held when the capture ends — is fused with E all the same, keeping
 * h: the fused kernel stores h as the product did and E's output in a second binding (KernelDesc `keep`,
 * kernels/matmul-epilogue.ts), when, the rules above holding but for h's deadness:
 * - E is h's first reader, and reads it once; h's other readers come after E (h is written in E's place);
 * - E's output is not h's buffer, and h's buffer is none of the fused kernel's operands;
 * - the product keeps no other result already (two outputs at most), and h's binding too is within the device's
 *   storage buffers per stage.
 * Chains of these fuse in turn (a product, its residual add, a scale). Each fused step rounds to float32 as its
 * separate kernel does, so a replay gives the separate kernels' bits, but a GPU compiler may contract a multiply
 * and an add of consecutive steps into one fused multiply-add, as the backend's arithmetic class allows.
 */
import { contiguousStrides, type DeviceBuffer, type ElementwiseStep, type NDArray } from '@polyhal/hal';
import { isContiguous } from '@polyhal/hal/internal';
import type { CopyStep, KernelDesc, KernelStep, Recorder, Step } from './capture.js';
import type { ElementwiseContext } from './dispatch-elementwise.js';
import { dispatchFused, MAX_FUSED_ARRAYS } from './dispatch-fused.js';
import { dispatchMatmul, dispatchSplitKSum, type MatmulContext, splitSums } from './dispatch-matmul.js';
import type { CommandBatch } from './encoder.js';
import type { PipelineCache } from './pipelines.js';

/** What the fusion needs of the backend. */
export interface PlanFusionContext {
  readonly pipelines: PipelineCache;
  /** The uniform offset alignment of the params. */
  readonly align: number;
  readonly elementwise: ElementwiseContext;
  readonly matmul: MatmulContext;
  /** The device's storage buffers per shader stage. */
  readonly maxStorageBuffers: number;
  /** Kernels folded into others, over every plan (for reports and tests). */
  readonly stats: { fused: number };
}

/** A value of a buffer: the step that wrote it, the steps that read it, whether it is dead after them. */
interface Version {
  readonly writer: number;
  /** Written as a described kernel's whole output. */
  readonly pure: boolean;
  readonly readers: number[];
  /** Freed (no array holds it) or overwritten. */
  dead: boolean;
  freed: boolean;
}

/** A kernel to encode in place of a recorded one: its desc and, per operand buffer, the step that read it first. */
interface Merged {
  readonly desc: KernelDesc;
  readonly since: ReadonlyMap<GPUBuffer, number>;
  /** A kept result's readers after the fused ones (the kernel writes it in its place: they must come after). */
  readonly later: readonly number[];
}

const kernelOf = (s: Step): KernelStep | null => ('pipe' in s ? s : null);

/** The operand arrays of a desc (not its output). */
function operands(d: KernelDesc): NDArray[] {
  const arrays = d.steps.flatMap((s) => ('array' in s ? [s.array] : []));
  return d.kind === 'elementwise' ? [d.root, ...arrays] : [d.a, d.b, ...(d.bias ? [d.bias] : []), ...arrays];
}

/** Whether x views buffer `gpu` whole, as a result of `size` elements was written: from 0, contiguous. */
function whole(d: KernelDesc, x: NDArray, gpu: GPUBuffer, size: number): boolean {
  return d.gpus.get(x.buffer.id) === gpu && x.offset === 0 && sizeOf(x.shape) === size && isContiguous(x);
}

const sizeOf = (shape: readonly number[]): number => shape.reduce((p, n) => p * n, 1);
const sameShape = (a: readonly number[], b: readonly number[]): boolean =>
  a.length === b.length && a.every((n, i) => n === b[i]);

/** x with `shape` (as many elements): itself, or a contiguous x reshaped; null for another layout. */
function reshaped(x: NDArray, shape: readonly number[]): NDArray | null {
  if (sameShape(x.shape, shape)) return x;
  return isContiguous(x) ? { ...x, shape: [...shape], strides: contiguousStrides(shape) } : null;
}

/** A chain's steps with their arrays reshaped to `shape`, or null where one cannot be. */
function stepsAs(steps: readonly ElementwiseStep[], shape: readonly number[]): ElementwiseStep[] | null {
  const out: ElementwiseStep[] = [];
  for (const s of steps) {
    if (!('array' in s)) out.push(s);
    else {
      const array = reshaped(s.array, shape);
      if (!array) return null;
      out.push({ ...s, array });
    }
  }
  return out;
}

/** E's steps rewritten to run from the result in `gpu` (of `shape`), or null where E does not read it so. */
function fromResult(e: KernelDesc, gpu: GPUBuffer, size: number): readonly ElementwiseStep[] | null {
  if (e.kind !== 'elementwise') return null;
  if (whole(e, e.root, gpu, size)) return e.steps;
  const first = e.steps[0];
  if (!first || !('array' in first) || !whole(e, first.array, gpu, size)) return null;
  return [{ op: first.op, array: e.root, arrayFirst: !first.arrayFirst }, ...e.steps.slice(1)];
}

/** The single kernel `d` encodes, as the batch would dispatch it, or null where it takes more or fails. */
function specOf(ctx: PlanFusionContext, d: KernelDesc): Spec | null {
  const specs: Spec[] = [];
  const batch = {
    recorder: null,
    dispatch: (
      _op: string,
      key: string,
      source: () => string,
      words: number,
      params: number[],
      buffers: GPUBuffer[],
      groups: [number, number, number],
    ) => void specs.push({ key, source, words, params, buffers, groups }),
  } as unknown as CommandBatch;
  const gpu = (b: DeviceBuffer): GPUBuffer => {
    const g = d.gpus.get(b.id);
    if (!g) throw new Error(`plan fusion: no GPU buffer for #${b.id}`);
    return g;
  };
  try {
    if (d.kind === 'elementwise') dispatchFused({ ...ctx.elementwise, batch, gpu }, d.root, d.steps, d.out);
    else {
      const m: MatmulContext = { ...ctx.matmul, batch, gpu, packed: undefined, release: undefined };
      const split = splitSums.get(d);
      if (split) {
        // the sum kernel alone, over the partials the recorded partial-product kernel writes
        const [M, N] = d.shape.slice(-2) as [number, number];
        dispatchSplitKSum(m, split, d.out, sizeOf(d.shape) / (M * N), M, N, d.bias, d.steps, d.keep ?? null);
      } else if (!dispatchMatmul(m, d.a, d.b, d.out, d.bias, d.steps, d.keep ?? null)) return null;
    }
  } catch {
    return null;
  }
  return specs.length === 1 ? specs[0]! : null;
}

interface Spec {
  readonly key: string;
  readonly source: () => string;
  readonly words: number;
  readonly params: number[];
  readonly buffers: GPUBuffer[];
  readonly groups: [number, number, number];
}

/** The versions of every buffer over the recording (see the module comment). */
function versions(rec: Recorder): Map<number, Version> {
  const byWriter = new Map<number, Version>();
  const cur = new Map<GPUBuffer, Version>();
  const frees = [...rec.frees].sort((a, b) => a.at - b.at);
  let f = 0;
  const write = (g: GPUBuffer, at: number, pure: boolean): void => {
    const old = cur.get(g);
    if (old) old.dead = true;
    const v: Version = { writer: at, pure, readers: [], dead: false, freed: false };
    cur.set(g, v);
    if (pure) byWriter.set(at, v);
  };
  const read = (g: GPUBuffer, at: number): void => void cur.get(g)?.readers.push(at);
  rec.steps.forEach((s, i) => {
    for (; f < frees.length && frees[f]!.at <= i; f++) {
      const v = cur.get(frees[f]!.gpu);
      if (v) v.dead = v.freed = true;
    }
    const k = kernelOf(s);
    if (!k) {
      const c = s as CopyStep;
      if (c.src) read(c.src, i);
      read(c.dst, i); // a copy may write part of its target
      write(c.dst, i, false);
      return;
    }
    const out = k.desc ? k.desc.gpus.get(k.desc.out.id) : undefined;
    const writes = k.writes ?? k.buffers.map(() => true);
    // a read_write binding reads the value it finds, unless that value's owner freed it (a new owner's output)
    k.buffers.forEach((g, j) => {
      if (!(writes[j] && (g === out || cur.get(g)?.freed))) read(g, i);
    });
    k.buffers.forEach((g, j) => {
      if (writes[j]) write(g, i, g === out);
    });
  });
  for (; f < frees.length; f++) {
    const v = cur.get(frees[f]!.gpu);
    if (v) v.dead = v.freed = true;
  }
  return byWriter;
}

/**
 * Folds the recording's fusable kernel pairs (see the module comment) into single kernels, in place: rec.steps
 * loses each producer and gets the fused kernel in its reader's place (its params in a segment of their own),
 * and the live kernels' step indices follow. Returns the number of kernels removed.
 */
export function fusePlan(rec: Recorder, ctx: PlanFusionContext): number {
  const steps = rec.steps;
  const byWriter = versions(rec);
  const writesOf = new Map<GPUBuffer, number[]>();
  steps.forEach((s, i) => {
    const k = kernelOf(s);
    const ws = k ? k.buffers.filter((_, j) => (k.writes ?? [])[j] ?? true) : [(s as CopyStep).dst];
    for (const g of ws) (writesOf.get(g) ?? writesOf.set(g, []).get(g)!).push(i);
  });
  const writtenBetween = (g: GPUBuffer, from: number, to: number): boolean =>
    (writesOf.get(g) ?? []).some((w) => w > from && w < to);

  const merged = new Map<number, Merged>();
  const replaced = new Map<number, KernelStep>();
  const removed = new Set<number>();
  const words: number[] = [];
  const segment = rec.segments.length;
  const patched = new Set(rec.patches.map((p) => p.step));
  for (const [p, v] of [...byWriter].sort((a, b) => a[0] - b[0])) {
    if (v.readers.length === 0) continue;
    // h dead after its one reader E, or kept: written by the fused kernel too, read again after it
    const keep = !v.dead || v.readers.length !== 1;
    const e = v.readers[0]!;
    const pk = kernelOf(steps[p]!)!;
    const ek = kernelOf(steps[e]!);
    if (ek?.desc?.kind !== 'elementwise' || e <= p || patched.has(p) || patched.has(e) || merged.has(e)) continue;
    const prior = merged.get(p);
    const pd = prior?.desc ?? pk.desc!;
    const later = keep ? v.readers.slice(1) : (prior?.later ?? []);
    if (keep && (pd.kind !== 'matmul' || pd.keep)) continue;
    if (later.some((r) => r <= e)) continue;
    const x = pd.gpus.get(pd.out.id)!;
    if (ek.buffers.filter((g) => g === x).length !== 1) continue;
    const tail = fromResult(ek.desc, x, sizeOf(pd.shape));
    if (!tail || (keep && !tail.length)) continue;
    const ed = ek.desc;
    const since = new Map(prior?.since ?? operands(pd).map((o) => [pd.gpus.get(o.buffer.id)!, p] as const));
    for (const o of operands(ed)) {
      const g = ed.gpus.get(o.buffer.id)!;
      if (g !== x && !since.has(g)) since.set(g, e);
    }
    since.delete(x);
    // a kept result is written in E's place: nothing may write its buffer from P on, E's output included
    if (keep) since.set(x, p);
    // a split product's sum runs in E's place on the partials: nothing may write them from P on
    const split = pd.kind === 'matmul' ? splitSums.get(pd) : undefined;
    if (split && !since.has(split.partial)) since.set(split.partial, p);
    const outGpu = ed.gpus.get(ed.out.id)!;
    if (since.has(outGpu) || [...since].some(([g, from]) => writtenBetween(g, from, e))) continue;
    const gpus = new Map([...pd.gpus, ...ed.gpus]);
    let desc: KernelDesc;
    if (pd.kind === 'matmul') {
      // the epilogue reads its arrays at the product's flat index
      const steps2 = [...pd.steps, ...tail];
      const arrays = steps2.flatMap((s) => ('array' in s ? [s.array] : []));
      const fits = arrays.every((a) => isContiguous(a) && sizeOf(a.shape) === sizeOf(pd.shape));
      const kept = keep ? { at: pd.steps.length, out: pd.out } : pd.keep;
      const storage = (split ? 2 : 3) + (pd.bias ? 1 : 0) + arrays.length + (kept ? 1 : 0);
      if (!fits || storage > ctx.maxStorageBuffers) continue;
      const [a, b, bias, shape] = [pd.a, pd.b, pd.bias, pd.shape];
      desc = { kind: 'matmul', a, b, bias, steps: steps2, out: ed.out, shape, gpus, ...(kept ? { keep: kept } : {}) };
      // the kept buffer is written: bound once (no operand of the kernel)
      const kx = kept && gpus.get(kept.out.id);
      if (kx && operands(desc).some((o) => gpus.get(o.buffer.id) === kx)) continue;
      if (split) splitSums.set(desc, split);
    } else {
      // one chain over E's shape: P's operands reshaped to it where the shapes differ
      const root = reshaped(pd.root, ed.shape);
      const head = stepsAs(pd.steps, ed.shape);
      if (!root || !head) continue;
      const steps2 = [...head, ...tail];
      if (steps2.filter((s) => 'array' in s).length > MAX_FUSED_ARRAYS) continue;
      desc = { kind: 'elementwise', root, steps: steps2, out: ed.out, shape: ed.shape, gpus };
    }
    const spec = specOf(ctx, desc);
    if (!spec) continue;
    const { pipe, layout, writes } = ctx.pipelines.pipeline(spec.key, spec.source);
    const offset = Math.ceil(words.length / (ctx.align / 4)) * (ctx.align / 4);
    while (words.length < offset) words.push(0);
    const bytes = Math.ceil(Math.max(spec.words, 4) / 4) * 16;
    words.push(...spec.params);
    while (words.length < offset + bytes / 4) words.push(0);
    const [gx, gy, gz] = spec.groups;
    replaced.set(e, {
      pipe,
      layout,
      bytes,
      segment,
      offset: offset * 4,
      buffers: spec.buffers,
      x: gx,
      y: gy,
      z: gz,
      writes,
      desc,
      key: spec.key,
      source: spec.source,
    });
    merged.set(e, { desc, since, later });
    removed.add(p);
    replaced.delete(p);
  }
  if (removed.size === 0) return 0;
  rec.segments.push(new Uint8Array(Int32Array.from(words).buffer));
  const index = new Map<number, number>();
  const kept = steps.flatMap((s, i) => {
    if (removed.has(i)) return [];
    index.set(i, index.size);
    return [replaced.get(i) ?? s];
  });
  steps.splice(0, steps.length, ...kept);
  const patches = rec.patches.map((p) => ({ step: index.get(p.step)!, params: p.params }));
  rec.patches.splice(0, rec.patches.length, ...patches);
  ctx.stats.fused += removed.size;
  return removed.size;
}
