/**
 * The allocator of the WASM backend's linear memory.
 *
 * Algorithm: a coalescing free list with segregated size classes (in the manner of TLSF, Masmano et
 * al. 2004, and of dlmalloc's bins), fronted by exact-size quick lists (dlmalloc's fastbins, glibc's
 * tcache). Blocks are 16-byte aligned (v128 loads).
 * - `release` puts the block on the quick list of its size: O(1), so a loop that allocates the same
 *   sizes every step reuses its blocks at once.
 * - `alloc` pops that quick list, else takes the first fitting block from the request's size class
 *   ⌊log2 size⌋ or any block of a larger class (a bit mask finds it) and splits off the rest, else
 *   takes the top of the used region inside the memory's current size.
 * - Only when that fails — the memory would have to grow — are the quick lists consolidated: every
 *   block is merged with its free neighbours (boundary tags kept in JavaScript maps by start and by end
 *   address, not in linear memory), a free block that ends at the top goes back to the "wilderness"
 *   (freeing everything returns the heap to its base), and the request is tried again before
 *   `memory.grow`. So freed memory is reused for any size and the memory grows only when live blocks
 *   and their fragmentation need it.
 * Costs: release O(1); alloc O(1) on a quick-list hit, else O(blocks in the request's class) at worst,
 * plus an O(quick-listed blocks) consolidation before growing (amortized O(1) per release).

 * Addresses are unsigned byte offsets below 2^32 (wasm32): a memory may be 4 GiB, so every pointer
 * that crosses into a typed-array index is shifted with `>>>`, never `>>`.
 *
 * WebAssembly memory cannot shrink: it grows (`memory.grow`) to the highest top ever reached and stays
 * there; freed blocks are reused for any size, so the memory (and the process's resident set) stays at
 * the peak of live bytes plus fragmentation. Growth detaches old views: `f32()`/`i32()`/`u8()` always
 * return views of the current buffer.
 */
import { OutOfMemoryError } from '@polyhal/hal';

const ALIGN = 16;
const PAGE = 65536;
const CLASSES = 32; // ⌊log2 size⌋ of a block below 2^32

/** Size class of a block: ⌊log2 size⌋ (16 ≤ size < 2^32). */
function sizeClass(size: number): number {
  return 31 - Math.clz32(size);
}

export class WasmHeap {
  /** End of the used region; [top, maxBytes) is the wilderness. */
  private top: number;
  /** start → size and end → start of every free block (below top). */
  private readonly freeByStart = new Map<number, number>();
  private readonly freeByEnd = new Map<number, number>();
  /** Free block starts by size class. */
  private readonly bins: Set<number>[] = Array.from({ length: CLASSES }, () => new Set<number>());
  /** Bit k set when bins[k] is not empty. */
  private binMask = 0;
  private freeBytes = 0;
  /** Quick lists: freed blocks by exact size, not yet merged with their neighbours. */
  private readonly quick = new Map<number, number[]>();
  private quickCount = 0;
  private f32View: Float32Array;
  private i32View: Int32Array;
  private u8View: Uint8Array;

  /**
   * `base`: first byte the allocator may hand out (after the kernels' static data); `maxBytes`: the
   * memory's maximum (its declared maximum pages × 64 KiB; 4 GiB at most in wasm32).
   */
  constructor(
    readonly memory: WebAssembly.Memory,
    base: number,
    private readonly backendName: string,
    readonly maxBytes = 2 ** 32,
  ) {
    this.top = Math.ceil((base >>> 0) / ALIGN) * ALIGN;
    this.f32View = new Float32Array(memory.buffer);
    this.i32View = new Int32Array(memory.buffer);
    this.u8View = new Uint8Array(memory.buffer);
  }

  /** Rounded size of a block of `bytes`. */
  static blockSize(bytes: number): number {
    return Math.max(ALIGN, Math.ceil(bytes / ALIGN) * ALIGN);
  }

  /**
   * Returns a 16-byte aligned pointer (unsigned byte offset) to `bytes` bytes: a free block of the
   * same or a larger size (split), else the top of the used region (growing the memory). Throws
   * OutOfMemoryError when no free block fits and the memory cannot grow that far.
   */
  alloc(bytes: number): number {
    const size = WasmHeap.blockSize(bytes);
    const list = this.quick.get(size);
    if (list !== undefined && list.length > 0) {
      this.quickCount--;
      return list.pop()!;
    }
    let ptr = this.fit(size);
    if (ptr >= 0) return ptr;
    if (this.quickCount > 0) {
      this.consolidate();
      ptr = this.fit(size);
      if (ptr >= 0) return ptr;
    }
    ptr = this.top;
    const end = ptr + size;
    const have = this.memory.buffer.byteLength;
    const fail = (why: string): never => {
      const err = new OutOfMemoryError(bytes, this.largestAllocatable(), this.backendName);
      err.message = `${this.backendName}: cannot allocate ${bytes} bytes: ${why}`;
      throw err;
    };
    if (end > this.maxBytes)
      fail(
        `the WebAssembly memory's maximum is ${this.maxBytes} bytes (${this.maxBytes / PAGE} × 64 KiB pages), ` +
          `and ${this.largestAllocatable()} of them are free in one block`,
      );
    const pages = Math.ceil((end - have) / PAGE);
    try {
      this.memory.grow(pages);
    } catch (e) {
      fail(
        `the WebAssembly memory could not grow from ${have} to ${have + pages * PAGE} bytes (${e}); ` +
          `its maximum is ${this.maxBytes} bytes`,
      );
    }
    this.top = end;
    return ptr;
  }

  /** Frees the block at `ptr` of `bytes` (as passed to alloc): onto its size's quick list. */
  release(ptr: number, bytes: number): void {
    const size = WasmHeap.blockSize(bytes);
    let list = this.quick.get(size);
    if (list === undefined) this.quick.set(size, (list = []));
    list.push(ptr >>> 0);
    this.quickCount++;
  }

  /** A block of `size` from the free blocks or the top inside the memory's current size; −1 if none. */
  private fit(size: number): number {
    const k = sizeClass(size);
    const own = this.bins[k]!;
    if (own.size > 0) {
      for (const start of own) if (this.freeByStart.get(start)! >= size) return this.take(start, size);
    }
    const higher = k < 31 ? this.binMask & (-1 << (k + 1)) : 0;
    if (higher !== 0) return this.take(this.bins[31 - Math.clz32(higher & -higher)]!.values().next().value!, size);
    const end = this.top + size;
    if (end > this.memory.buffer.byteLength) return -1;
    const ptr = this.top;
    this.top = end;
    return ptr;
  }

  /** Merges every quick-listed block with its free neighbours (or into the wilderness). */
  private consolidate(): void {
    for (const [size, list] of this.quick) {
      for (const ptr of list) this.merge(ptr, size);
      list.length = 0;
    }
    this.quickCount = 0;
  }

  /** Frees block [ptr, ptr + size), merged with its free neighbours; a block ending at the top lowers the top. */
  private merge(ptr: number, size: number): void {
    let start = ptr;
    let end = ptr + size;
    const left = this.freeByEnd.get(start);
    if (left !== undefined) {
      this.unlink(left);
      start = left;
    }
    const rightSize = this.freeByStart.get(end);
    if (rightSize !== undefined) {
      this.unlink(end);
      end += rightSize;
    }
    if (end === this.top) this.top = start;
    else this.link(start, end - start);
  }

  /**
   * Bytes of the largest single allocation that can succeed now, at most `cap`: the largest free
   * block or the wilderness up to the memory's maximum, whichever is larger.
   */
  largestAllocatable(cap = Infinity): number {
    if (this.maxBytes - this.top >= cap) return cap;
    if (this.quickCount > 0) this.consolidate();
    let best = this.maxBytes - this.top;
    if (best >= cap) return cap;
    if (this.binMask !== 0) {
      const j = 31 - Math.clz32(this.binMask);
      if (2 ** j >= cap) return cap;
      for (const start of this.bins[j]!) best = Math.max(best, this.freeByStart.get(start)!);
    }
    return Math.min(cap, best);
  }

  /**
   * Bytes of linear memory below the allocator's top: live blocks and the free blocks between them
   * (quick lists consolidated first, so freeing everything gives 0 above the heap's base).
   */
  get reserved(): number {
    if (this.quickCount > 0) this.consolidate();
    return this.top;
  }

  /** Free blocks below the top after consolidation: how many and their bytes (fragmentation). */
  get freeBlocks(): { count: number; bytes: number } {
    if (this.quickCount > 0) this.consolidate();
    return { count: this.freeByStart.size, bytes: this.freeBytes };
  }

  /** Takes `size` bytes from the start of free block `start`; the rest stays free. */
  private take(start: number, size: number): number {
    const blockSize = this.unlink(start);
    if (blockSize > size) this.link(start + size, blockSize - size);
    return start;
  }

  private link(start: number, size: number): void {
    this.freeByStart.set(start, size);
    this.freeByEnd.set(start + size, start);
    const k = sizeClass(size);
    this.bins[k]!.add(start);
    this.binMask |= 1 << k;
    this.freeBytes += size;
  }

  /** Removes free block `start` from the indexes; returns its size. */
  private unlink(start: number): number {
    const size = this.freeByStart.get(start)!;
    this.freeByStart.delete(start);
    this.freeByEnd.delete(start + size);
    const k = sizeClass(size);
    const bin = this.bins[k]!;
    bin.delete(start);
    if (bin.size === 0) this.binMask &= ~(1 << k);
    this.freeBytes -= size;
    return size;
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
