/**
 * The allocator of the WASM backend's linear memory. Blocks are 16-byte aligned (for v128 loads) and
 * reused through free lists keyed by their rounded size, so a training loop that allocates the same
 * shapes every step stops growing after the first. When the bump pointer passes the end, memory grows
 * (`memory.grow`), which detaches old views: `f32()`/`i32()` always return views of the current buffer.
 */
import { OutOfMemoryError } from '@polyhal/hal';

const ALIGN = 16;
const PAGE = 65536;

export class WasmHeap {
  private top: number;
  private readonly free = new Map<number, number[]>();
  private f32View: Float32Array;
  private i32View: Int32Array;
  private u8View: Uint8Array;

  constructor(readonly memory: WebAssembly.Memory, base: number, private readonly backendName: string) {
    this.top = Math.ceil(base / ALIGN) * ALIGN;
    this.f32View = new Float32Array(memory.buffer);
    this.i32View = new Int32Array(memory.buffer);
    this.u8View = new Uint8Array(memory.buffer);
  }

  /** Rounded size of a block of `bytes`. */
  static blockSize(bytes: number): number {
    return Math.max(ALIGN, Math.ceil(bytes / ALIGN) * ALIGN);
  }

  /** Returns a 16-byte aligned pointer to `bytes` bytes; throws OutOfMemoryError when memory cannot grow. */
  alloc(bytes: number): number {
    const size = WasmHeap.blockSize(bytes);
    const list = this.free.get(size);
    if (list && list.length > 0) return list.pop()!;
    const ptr = this.top;
    const end = ptr + size;
    const have = this.memory.buffer.byteLength;
    if (end > have) {
      try {
        this.memory.grow(Math.ceil((end - have) / PAGE));
      } catch {
        throw new OutOfMemoryError(bytes, Math.max(0, have - this.top), this.backendName);
      }
    }
    this.top = end;
    return ptr;
  }

  release(ptr: number, bytes: number): void {
    const size = WasmHeap.blockSize(bytes);
    let list = this.free.get(size);
    if (!list) this.free.set(size, (list = []));
    list.push(ptr);
  }

  /** Bytes of linear memory in use by the allocator (high-water mark). */
  get reserved(): number {
    return this.top;
  }

  private refresh(): void {
    if (this.f32View.buffer !== this.memory.buffer) {
      this.f32View = new Float32Array(this.memory.buffer);
      this.i32View = new Int32Array(this.memory.buffer);
      this.u8View = new Uint8Array(this.memory.buffer);
    }
  }

  f32(): Float32Array {
    this.refresh();
    return this.f32View;
  }

  i32(): Int32Array {
    this.refresh();
    return this.i32View;
  }

  u8(): Uint8Array {
    this.refresh();
    return this.u8View;
  }
}
