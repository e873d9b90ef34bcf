/**
 * Strided views as ONNX values. Every buffer the trace knows holds one ONNX value (a graph input, an
 * initializer, a node's output) in row-major order; a view of it (NDArray: shape, strides, offset) becomes
 * the fewest standard ops that read the same elements:
 * - the whole buffer in order: the value itself, or a Reshape;
 * - positive strides that nest (each a multiple of the next): a Reshape of the buffer into the strides'
 *   mixed radix, a Slice of the window (shrink, an offset), a Reshape, a Transpose (permute) and an Expand
 *   for stride-0 (broadcast) dims;
 * - anything else (negative strides, overlapping or non-nesting strides): a Gather of the flat buffer with
 *   constant int64 indices, one per element — correct for every view, the last resort.
 * Each view is expressed once per buffer value (cached).
 */
import { type DeviceBuffer, type NDArray, sizeOf } from '@polyhal/hal';
import { isWholeBuffer } from '@polyhal/hal/internal';
import type { GraphBuilder } from './graph.js';

/** The ONNX value a buffer holds: its name and the shape it has in the graph (row-major, buffer.size elements). */
export interface BufferValue {
  readonly name: string;
  readonly shape: readonly number[];
}

const same = (a: readonly number[], b: readonly number[]): boolean =>
  a.length === b.length && a.every((d, i) => d === b[i]);

/** Buffer → ONNX value, and the expression of views of those buffers. */
export class ValueTable {
  private readonly byBuffer = new Map<DeviceBuffer, BufferValue>();
  private readonly cache = new Map<string, string>();

  constructor(
    private readonly g: GraphBuilder,
    /** Called for a buffer no input or recorded call defined (a weight, a constant): defines and returns it. */
    private readonly unknown: (buffer: DeviceBuffer) => BufferValue,
  ) {}

  /** Records that `buffer` holds ONNX value `name` of `shape`. */
  define(buffer: DeviceBuffer, name: string, shape: readonly number[]): void {
    this.byBuffer.set(buffer, { name, shape: [...shape] });
  }

  /** Whether `buffer` holds a known value. */
  has(buffer: DeviceBuffer): boolean {
    return this.byBuffer.has(buffer);
  }

  /** Forgets a freed buffer (a later buffer may be the same object). */
  forget(buffer: DeviceBuffer): void {
    this.byBuffer.delete(buffer);
  }

  /** The value of `buffer`, defining it through `unknown` when no one has. */
  valueOf(buffer: DeviceBuffer): BufferValue {
    let v = this.byBuffer.get(buffer);
    if (!v) {
      v = this.unknown(buffer);
      this.byBuffer.set(buffer, v);
    }
    return v;
  }

  /** The name of an ONNX value holding view `x`'s elements, of x's shape (see this module's comment). */
  express(x: NDArray): string {
    const v = this.valueOf(x.buffer);
    if (isWholeBuffer(x)) return same(v.shape, x.shape) ? v.name : this.reshape(v.name, x.shape);
    const key = `${v.name}|${x.shape.join(',')}|${x.strides.join(',')}|${x.offset}`;
    let name = this.cache.get(key);
    if (!name) {
      name = this.strided(v, x) ?? this.gather(v, x);
      this.cache.set(key, name);
    }
    return name;
  }

  /** `Reshape(name, shape)`. */
  reshape(name: string, shape: readonly number[]): string {
    return this.g.op('Reshape', [name, this.g.int64(shape)]);
  }

  /** Structured form (Reshape, Slice, Transpose, Expand), or null where the strides do not nest. */
  private strided(v: BufferValue, x: NDArray): string | null {
    const g = this.g;
    const n = x.buffer.size;
    if (sizeOf(x.shape) === 0) return null;
    const rank = x.shape.length;
    const core = [...Array(rank).keys()].filter((i) => x.shape[i]! > 1 && x.strides[i] !== 0);
    if (core.some((i) => x.strides[i]! < 0)) return null;
    const order = [...core].sort((a, b) => x.strides[b]! - x.strides[a]!);
    const s = order.map((i) => x.strides[i]!);
    const d = order.map((i) => x.shape[i]!);
    const k = order.length;
    for (let j = 0; j + 1 < k; j++) if (s[j]! <= s[j + 1]! || s[j]! % s[j + 1]! !== 0) return null;
    const flat = (): string => (v.shape.length === 1 ? v.name : this.reshape(v.name, [n]));
    let t: string;
    if (k === 0) {
      // one element, repeated or not
      t = g.op('Slice', [flat(), g.int64([x.offset]), g.int64([x.offset + 1])]);
    } else {
      // mixed radix of the strides: rows of s0, then s(j-1)/s(j) per dim, then s(k-1) when it is not 1
      let rem = x.offset;
      const q = s.map((sj) => {
        const qj = Math.floor(rem / sj);
        rem -= qj * sj;
        return qj;
      });
      const radix = s.map((sj, j) => (j === 0 ? 0 : s[j - 1]! / sj));
      for (let j = 1; j < k; j++) if (q[j]! + d[j]! > radix[j]!) return null;
      const last = s[k - 1]!;
      const full = Math.floor(n / s[0]!);
      let rows: number;
      let base: string;
      if (full * s[0]! === n || full >= q[0]! + d[0]!) {
        rows = full;
        base = full * s[0]! === n ? v.name : g.op('Slice', [flat(), g.int64([0]), g.int64([full * s[0]!])]);
      } else {
        rows = full + 1;
        base = g.op('Pad', [flat(), g.int64([0, rows * s[0]! - n])]);
      }
      const dims = [rows, ...radix.slice(1), ...(last > 1 ? [last] : [])];
      t = base === v.name && same(dims, v.shape) ? base : this.reshape(base, dims);
      const starts: number[] = [];
      const ends: number[] = [];
      const axes: number[] = [];
      for (let j = 0; j < k; j++)
        if (q[j] !== 0 || d[j] !== dims[j]) {
          starts.push(q[j]!);
          ends.push(q[j]! + d[j]!);
          axes.push(j);
        }
      if (last > 1) {
        starts.push(rem);
        ends.push(rem + 1);
        axes.push(k);
      }
      if (axes.length) t = g.op('Slice', [t, g.int64(starts), g.int64(ends), g.int64(axes)]);
      if (last > 1) t = this.reshape(t, d);
      // back to the view's order of dims
      const perm = core.map((i) => order.indexOf(i));
      if (perm.some((p, i) => p !== i)) t = g.op('Transpose', [t], { perm });
    }
    const kept = x.shape.map((dim, i) => (x.strides[i] === 0 ? 1 : dim));
    const now = k === 0 ? [1] : core.map((i) => x.shape[i]!);
    if (!same(now, kept)) t = this.reshape(t, kept);
    if (!same(kept, x.shape)) t = g.op('Expand', [t, g.int64(x.shape)]);
    return t;
  }

  /** Gather of the flat buffer with one constant index per element of the view (any view). */
  private gather(v: BufferValue, x: NDArray): string {
    const count = sizeOf(x.shape);
    const idx = new BigInt64Array(count);
    const pos = new Array<number>(x.shape.length).fill(0);
    for (let e = 0; e < count; e++) {
      let at = x.offset;
      for (let i = 0; i < pos.length; i++) at += pos[i]! * x.strides[i]!;
      idx[e] = BigInt(at);
      for (let i = pos.length - 1; i >= 0; i--) {
        if (++pos[i]! < x.shape[i]!) break;
        pos[i] = 0;
      }
    }
    const indices = this.g.initializer('view_indices', 7, x.shape, idx);
    const flat = v.shape.length === 1 ? v.name : this.reshape(v.name, [x.buffer.size]);
    return this.g.op('Gather', [flat, indices], { axis: 0 });
  }
}
