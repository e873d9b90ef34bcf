/**
 * A WebGPU recording ready to replay (the HAL's CapturedWork; made by capture.ts's `Captures.end`). Built once:
 * the params of every recorded submission laid end to end in one uniform buffer with a bind group per kernel
 * over it, the uploads staged in one buffer (replayed as copies in their place). A replay writes the inputs
 * (host data by queue.writeBuffer, device arrays by a copy), checks that the live arrays the work only reads
 * (weights, constants) are still live, and encodes the steps in parts of REPLAY_PART, one submission each.
 * Live kernels (capture.ts's LivePatch: an optimizer step's, a random fill's): each replay first runs the live
 * sections' `advance` callbacks, then writes those kernels' recomputed params into the plan's uniform buffer (a
 * host mirror of it, written back in runs of nearby kernels) and their grids into the encoded steps.
 * The last part also copies what the caller says comes next (ReplayOptions): the outputs it takes with copyOutput,
 * and the outputs it reads into staging buffers that a read of the output (or of its copy) maps without a copy or
 * submission of its own (reads.ts `adopt`): a compiled step and its loss read are one submission.
 */
import {
  type DeviceBuffer,
  DTypeError,
  type HostArray,
  type NDArray,
  type ReplayOptions,
  ShapeMismatchError,
  UseAfterFreeError,
  viewOf,
} from '@polyhal/hal';
import { checkWriteData, hostToStorage, isWholeBuffer, type StorageArray, storageToHost } from '@polyhal/hal/internal';
import { isKernel, type LivePatch, type PlanContext, type Recorder, type Slot } from './capture.js';
import { decodeHalf, encodeHalf } from './dispatch-half.js';
import { type ByteDType, decodeBytes, encodeBytes } from './dispatch-int8.js';
import { StagingReader } from './reads.js';
import { type KernelTime, ReplayTimer } from './replay-timing.js';

const UNIFORM_COPY_DST = 0x40 | 0x8;
const COPY_SRC_DST = 0x4 | 0x8;
/**
 * Steps per submission of a replay: the GPU starts on the first part while JavaScript encodes the next (an
 * encoded kernel costs ~5 µs of JavaScript on an H200 host: PP-OCRv4 det's 242 would otherwise all wait 1.2 ms).
 */
const REPLAY_PART = 48;
/** Live kernels' params closer than this many bytes in the uniform buffer are written back in one writeBuffer. */
const LIVE_GAP = 4096;

/** A live kernel of the plan: where its params lie in the uniform buffer and how a replay recomputes them. */
interface LiveKernel {
  readonly encoded: number;
  /** Byte offset of its params in the uniform buffer, and their size in bytes. */
  readonly at: number;
  readonly bytes: number;
  readonly params: LivePatch['params'];
}

type Encoded =
  | { pipe: GPUComputePipeline; bind: GPUBindGroup; dyn: number[]; x: number; y: number; z: number; at: number }
  | { src: GPUBuffer; srcOffset: number; dst: GPUBuffer; bytes: number };

/** Bytes a slot's GPU storage holds (float16: 2 per element; whole words, at least one). */
const storageBytes = (slot: Slot): number =>
  Math.max(4, Math.ceil((slot.half ? 2 * slot.size : slot.byteLength) / 4) * 4);

export class ReplayPlan {
  readonly kernels: number;
  readonly copies: number;
  readonly reservedBytes: number;
  readonly callbacks: number;
  readonly liveKernels: number;
  private readonly uniforms: GPUBuffer | null;
  /** The live sections' advance callbacks, the live kernels (in step order) and a host copy of the uniforms. */
  private readonly advances: readonly (() => void)[];
  private readonly patched: LiveKernel[] = [];
  private readonly mirror: Int32Array | null = null;
  private readonly staging: GPUBuffer | null;
  /** Per step: a kernel's pipeline, bind group and dynamic offset, or a copy. */
  private readonly encoded: Encoded[] = [];
  private readonly reserved: GPUBuffer[];
  /** Live arrays (GPU buffer, HAL id) the work reads and never writes: they must be as live at each replay. */
  private readonly readLive: [GPUBuffer, number][] = [];
  /** Tracker keys of the outputs (negative: scratch keys), written by each replay. */
  private readonly outKeys: number[];
  private readonly reader: StagingReader;
  /** The kernels' keys in replay order (kernel times); the timer, made on the first timed replay. */
  private readonly labels: string[] = [];
  private timer: ReplayTimer | null = null;
  private live = true;
  /** Copies of the outputs made by the last replay for copyOutput (ReplayOptions.copyOutputs), not yet taken. */
  private made: (DeviceBuffer | null)[] = [];

  constructor(
    private readonly ctx: PlanContext,
    rec: Recorder,
    private readonly inputs: readonly Slot[],
    private readonly outputs: readonly Slot[],
  ) {
    const { device, batch, pool } = ctx;
    const align = Math.max(16, device.limits.minUniformBufferOffsetAlignment);
    // The params of every recorded submission, end to end (each at an aligned base).
    const bases: number[] = [];
    let total = 0;
    for (const seg of rec.segments) {
      bases.push(total);
      total = Math.ceil((total + seg.byteLength) / align) * align;
    }
    this.uniforms = total > 0 ? device.createBuffer({ size: total, usage: UNIFORM_COPY_DST }) : null;
    rec.segments.forEach((seg, i) => seg.byteLength && device.queue.writeBuffer(this.uniforms!, bases[i]!, seg));
    // The uploads, end to end in one staging buffer.
    let staged = 0;
    for (const s of rec.steps) if (!isKernel(s) && s.data) staged += s.data.byteLength;
    this.staging = staged > 0 ? device.createBuffer({ size: staged, usage: COPY_SRC_DST }) : null;
    let at = 0;
    const ids = new Map<object, number>();
    const idOf = (k: object): number => {
      let id = ids.get(k);
      if (id === undefined) ids.set(k, (id = ids.size));
      return id;
    };
    const binds = new Map<string, GPUBindGroup>();
    let kernels = 0;
    for (const s of rec.steps) {
      if (isKernel(s)) {
        // a merged kernel (plan-merge.ts) binds, part after part, the uniform params and the part's buffers
        const parts = s.parts ?? [{ segment: s.segment, offset: s.offset, bytes: s.bytes, buffers: s.buffers.length }];
        const key = `${idOf(s.layout)}|${parts.map((p) => p.bytes)}|${s.buffers.map(idOf).join(',')}`;
        let bind = binds.get(key);
        if (!bind) {
          const entries: GPUBindGroupEntry[] = [];
          let j = 0;
          for (const p of parts) {
            entries.push({ binding: entries.length, resource: { buffer: this.uniforms!, offset: 0, size: p.bytes } });
            for (const end = j + p.buffers; j < end; j++)
              entries.push({ binding: entries.length, resource: { buffer: s.buffers[j]! } });
          }
          bind = device.createBindGroup({ layout: s.layout, entries });
          binds.set(key, bind);
        }
        const dyn = parts.map((p) => bases[p.segment]! + p.offset);
        this.encoded.push({ pipe: s.pipe, bind, dyn, x: s.x, y: s.y, z: s.z, at: kernels });
        this.labels.push(s.key ?? 'kernel');
        kernels++;
      } else if (s.data) {
        device.queue.writeBuffer(this.staging!, at, s.data);
        this.encoded.push({ src: this.staging!, srcOffset: at, dst: s.dst, bytes: s.bytes });
        at += s.data.byteLength;
      } else this.encoded.push({ src: s.src!, srcOffset: 0, dst: s.dst, bytes: s.bytes });
    }
    this.kernels = kernels;
    this.copies = this.encoded.length - kernels;
    this.advances = [...rec.advances];
    this.callbacks = this.advances.length;
    for (const p of rec.patches) {
      const s = rec.steps[p.step]!;
      if (isKernel(s))
        this.patched.push({ encoded: p.step, at: bases[s.segment]! + s.offset, bytes: s.bytes, params: p.params });
    }
    this.patched.sort((a, b) => a.at - b.at);
    this.liveKernels = this.patched.length;
    if (this.patched.length > 0) {
      this.mirror = new Int32Array(total / 4);
      rec.segments.forEach((seg, i) => {
        this.mirror!.set(new Int32Array(seg.buffer, seg.byteOffset, seg.byteLength / 4), bases[i]! / 4);
      });
    }
    const slots = new Set([...inputs, ...outputs].map((slot) => slot.gpu));
    const reserved = new Set([...rec.touched, ...slots]);
    this.reserved = [...reserved];
    pool.reserve(this.reserved);
    // What the plan alone holds: its params and staged uploads, the buffers no array holds now (intermediates
    // freed during the capture), the inputs and the outputs; not the buffers of live arrays (weights).
    let bytes = total + staged;
    for (const b of reserved) {
      const id = batch.keys.get(b);
      if (id === undefined || slots.has(b)) bytes += b.size;
      else if (id >= 0 && !rec.written.has(b)) this.readLive.push([b, id]);
    }
    this.reservedBytes = bytes;
    this.outKeys = outputs.map(() => batch.scratchKey());
    const byKey = new Map(this.outKeys.map((k, i) => [k, outputs[i]!.gpu]));
    this.reader = new StagingReader(device, batch, (b) => byKey.get(b.id)!, ctx.lostReason);
  }

  replay(data: readonly (HostArray | NDArray)[], options: ReplayOptions = {}): void {
    this.assertLive('replay');
    this.ctx.assertUsable('replay');
    if (data.length !== this.inputs.length)
      throw new ShapeMismatchError(`replay: ${data.length} inputs given, the capture took ${this.inputs.length}`);
    const wanted = options.copyOutputs ?? [];
    for (const i of wanted) this.slot(i, 'replay (copyOutputs)');
    for (const i of options.readOutputs ?? []) this.slot(i, 'replay (readOutputs)');
    const reads = new Set(this.ctx.readAhead ? options.readOutputs : []);
    const { batch, device } = this.ctx;
    for (const [b, id] of this.readLive)
      if (batch.keys.get(b) !== id)
        throw new UseAfterFreeError(`replay: buffer #${id}, which the captured work reads (a weight?), was freed`);
    batch.countOps(this.kernels + this.copies); // a loop of replays that never yields grows memory too (loop-watch.ts)
    const host: (ArrayBufferView | null)[] = [];
    const copies: [GPUBuffer, GPUBuffer, number][] = [];
    this.inputs.forEach((slot, i) => {
      const d = data[i];
      if (typeof d === 'object' && d !== null && 'buffer' in d && 'strides' in d) {
        const x = d as NDArray;
        if (x.dtype !== slot.dtype)
          throw new DTypeError(`replay: input ${i} is ${x.dtype}, the capture's ${slot.dtype}`);
        if (!isWholeBuffer(x) || x.buffer.size !== slot.size)
          throw new ShapeMismatchError(`replay: input ${i} must be a whole contiguous array of ${slot.size} elements`);
        copies.push([this.ctx.gpuOf(x.buffer), slot.gpu, storageBytes(slot)]);
        host.push(null);
        return;
      }
      checkWriteData(d, 'replay', slot.dtype);
      if (d.length !== slot.size)
        throw new ShapeMismatchError(`replay: input ${i} has ${d.length} elements, the capture's had ${slot.size}`);
      const s = hostToStorage(slot.dtype, d);
      host.push(slot.half ? encodeHalf(s as Float32Array) : slot.bytes ? encodeBytes(s as Int32Array) : s);
    });
    for (const advance of this.advances) advance();
    batch.flush(); // work queued before uses the inputs' old contents
    if (this.patched.length > 0) this.writeLive();
    this.inputs.forEach((slot, i) => {
      const s = host[i];
      if (s && s.byteLength > 0) device.queue.writeBuffer(slot.gpu, 0, s.buffer, s.byteOffset, s.byteLength);
    });
    // Submitted in parts, so that the GPU starts on the first kernels while the rest are encoded.
    const n = this.encoded.length;
    if (this.ctx.timestamps && !this.timer && this.kernels > 0) this.timer = new ReplayTimer(device, this.labels);
    this.ctx.replayed?.(this);
    this.freeMade();
    for (const i of wanted) this.made[i] ??= this.ctx.allocate(this.outputs[i]!.size, this.outputs[i]!.dtype);
    const staged: [number, GPUBuffer, number, boolean][] = []; // key, staging buffer, bytes, in the backend's reads
    for (let from = 0; from < Math.max(n, 1); from += REPLAY_PART) {
      const to = Math.min(n, from + REPLAY_PART);
      const last = to === n;
      const sub = batch.replay(
        (enc) => {
          if (from === 0) for (const [src, dst, bytes] of copies) enc.copyBufferToBuffer(src, 0, dst, 0, bytes);
          const kernels = this.encode(enc, from, to);
          if (last) {
            this.timer?.finish(enc);
            this.copyOut(enc, reads, staged);
          }
          return kernels;
        },
        last ? [...this.outKeys, ...this.madeKeys()] : [],
      );
      if (last)
        for (const [key, staging, bytes, main] of staged)
          (main ? this.ctx.reader : this.reader).adopt(key, staging, bytes, sub);
    }
  }

  /**
   * Encodes (after the last kernel) the copies of the outputs copyOutput takes, and of the outputs read next into
   * staging buffers: for the copy where there is one (the backend's reads), else for the output (the plan's reads);
   * `staged` gets them for adopt() once submitted.
   */
  private copyOut(
    enc: GPUCommandEncoder,
    reads: ReadonlySet<number>,
    staged: [number, GPUBuffer, number, boolean][],
  ): void {
    this.outputs.forEach((slot, i) => {
      const bytes = storageBytes(slot);
      const made = this.made[i];
      if (made) enc.copyBufferToBuffer(slot.gpu, 0, this.ctx.gpuOf(made), 0, bytes);
      if (!reads.has(i)) return;
      const staging = (made ? this.ctx.reader : this.reader).acquire(bytes);
      enc.copyBufferToBuffer(slot.gpu, 0, staging, 0, bytes);
      staged.push([made ? made.id : this.outKeys[i]!, staging, bytes, !!made]);
    });
  }

  /** Tracker keys of the copies made for copyOutput. */
  private madeKeys(): number[] {
    return this.made.filter((m): m is DeviceBuffer => !!m).map((m) => m.id);
  }

  /** Frees the copies made for copyOutput and not taken. */
  private freeMade(): void {
    for (const m of this.made) if (m) this.ctx.deallocate(m);
    this.made = [];
  }

  async read(i: number): Promise<HostArray> {
    this.assertLive('read');
    const slot = this.slot(i, 'read');
    const view = {
      id: this.outKeys[i]!,
      byteLength: slot.half || slot.bytes ? storageBytes(slot) : slot.byteLength,
      dtype: slot.dtype,
    };
    const raw = await this.reader.read(view as Parameters<StagingReader['read']>[0]);
    const stored: StorageArray = slot.half
      ? decodeHalf(new Uint16Array(raw.buffer, raw.byteOffset, raw.byteLength / 2), slot.size)
      : slot.bytes
        ? decodeBytes(raw, slot.size, slot.dtype as ByteDType)
        : raw;
    return storageToHost(slot.dtype, stored);
  }

  copyOutput(i: number, shape?: readonly number[]): NDArray {
    this.assertLive('copyOutput');
    const slot = this.slot(i, 'copyOutput');
    const made = this.made[i];
    if (made) {
      this.made[i] = null;
      return viewOf(made, shape ?? [slot.size]);
    }
    const { batch } = this.ctx;
    const out = this.ctx.allocate(slot.size, slot.dtype);
    const sub = batch.begin();
    sub.ops.push('copyOutput');
    batch.tracker.read(this.outKeys[i]!);
    batch.tracker.write(out.id);
    batch.copyBufferToBuffer(slot.gpu, this.ctx.gpuOf(out), storageBytes(slot));
    return viewOf(out, shape ?? [slot.size]);
  }

  release(): void {
    if (!this.live) return;
    this.live = false;
    this.ctx.batch.flush();
    this.freeMade();
    this.ctx.pool.unreserve(this.reserved);
    for (const k of this.outKeys) this.ctx.batch.tracker.forget(k);
    this.reader.destroy();
    this.timer?.destroy();
    this.timer = null;
    // Destroyed after the work queued so far (destroy() waits for submitted work that uses it).
    this.uniforms?.destroy();
    this.staging?.destroy();
    this.ctx.released(this);
  }

  /** Recomputes the live kernels' params (and grids) and writes them into the uniform buffer. */
  private writeLive(): void {
    const mirror = this.mirror!;
    let from = -1;
    let to = -1;
    const flush = (): void => {
      if (from >= 0) this.ctx.device.queue.writeBuffer(this.uniforms!, from, mirror.buffer, from, to - from);
    };
    for (const k of this.patched) {
      const { params, groups } = k.params();
      const w = k.at / 4;
      mirror.set(params, w);
      mirror.fill(0, w + params.length, w + k.bytes / 4);
      if (groups) {
        const e = this.encoded[k.encoded] as { x: number; y: number; z: number };
        [e.x, e.y, e.z] = groups;
      }
      if (from >= 0 && k.at - to > LIVE_GAP) {
        flush();
        from = -1;
      }
      if (from < 0) from = k.at;
      to = Math.max(to, k.at + k.bytes);
    }
    flush();
  }

  private slot(i: number, op: string): Slot {
    const slot = this.outputs[i];
    if (!slot) throw new ShapeMismatchError(`${op}: output ${i} of ${this.outputs.length}`);
    return slot;
  }

  /**
   * The GPU time of each kernel of the last timed replay (option kernelTimestamps: replay-timing.ts), in replay
   * order; null where the backend does not time replays or none has run.
   */
  kernelTimes(): Promise<KernelTime[]> | null {
    return this.timer?.read() ?? null;
  }

  /** Encodes steps [from, to); returns the kernels among them. */
  private encode(enc: GPUCommandEncoder, from: number, to: number): number {
    let pass: GPUComputePassEncoder | null = null;
    let pipe: GPUComputePipeline | null = null;
    let kernels = 0;
    const timer = this.timer;
    for (let i = from; i < to; i++) {
      const s = this.encoded[i]!;
      if ('pipe' in s && timer) {
        // a pass of its own, with its start and end timestamps
        const p = enc.beginComputePass(timer.pass(s.at));
        p.setPipeline(s.pipe);
        p.setBindGroup(0, s.bind, s.dyn);
        p.dispatchWorkgroups(s.x, s.y, s.z);
        p.end();
        kernels++;
      } else if ('pipe' in s) {
        if (!pass) {
          pass = enc.beginComputePass();
          pipe = null;
        }
        if (s.pipe !== pipe) pass.setPipeline((pipe = s.pipe));
        pass.setBindGroup(0, s.bind, s.dyn);
        pass.dispatchWorkgroups(s.x, s.y, s.z);
        kernels++;
      } else {
        pass?.end();
        pass = null;
        enc.copyBufferToBuffer(s.src, s.srcOffset, s.dst, 0, s.bytes);
      }
    }
    pass?.end();
    return kernels;
  }

  private assertLive(op: string): void {
    if (!this.live) throw new UseAfterFreeError(`${op}: the captured work was released`);
  }
}
