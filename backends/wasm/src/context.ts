/**
 * What the dispatches of the WASM backend (dispatch-elementwise.ts, dispatch-copy.ts,
 * dispatch-matmul.ts) use of it: the kernels, the heap, the worker pool with its split thresholds, and
 * the linear-memory address of a buffer; and withPlan, which lends a row plan's start lists to a
 * kernel in temporary blocks of linear memory.
 */
import type { DeviceBuffer } from '@polyhal/hal';
import type { RowPlan } from '@polyhal/hal/internal';
import type { WasmHeap } from './memory.js';
import type { KernelExports } from './module.js';
import type { JobKernel } from './threads.js';

/** What the backend uses of its ThreadPool (structural: the pool's WebAssembly types stay out of the declarations). */
export interface WorkerPool {
  readonly size: number;
  run(kernel: JobKernel, parts: number[][], local: (part: number[]) => void): void;
  runQueued(
    kernel: JobKernel,
    parts: number[][],
    local: (part: number[]) => void,
    perThread?: { index: number; values: readonly number[] },
  ): void;
  terminate(): void;
}

/** The backend as its dispatches see it. */
export interface WasmContext {
  readonly k: KernelExports;
  readonly heap: WasmHeap;
  /** Worker threads on the same shared memory; null runs everything on the calling thread. */
  readonly pool: WorkerPool | null;
  /** Multiply-adds (M·N·K) from which a matmul is split across the pool. */
  readonly threadThreshold: number;
  /** Output elements from which an elementwise op or a strided copy is split across the pool. */
  readonly elementwiseThreadThreshold: number;
  /** Byte address of a live buffer's storage (checks the buffer, throwing, when it has none). */
  ptr(buffer: DeviceBuffer): number;
}

/** Copies the row starts of each operand into temporary wasm blocks; returns their pointers. */
export function withPlan<T>(heap: WasmHeap, plan: RowPlan, count: number, fn: (starts: number[]) => T): T {
  const bytes = Math.max(plan.rows, 1) * 4;
  const ptrs: number[] = [];
  try {
    for (let o = 0; o < count; o++) {
      const p = heap.alloc(bytes);
      ptrs.push(p);
      heap.i32().set(plan.starts[o]!, p >>> 2);
    }
    return fn(ptrs);
  } finally {
    for (const p of ptrs) heap.release(p, bytes);
  }
}
