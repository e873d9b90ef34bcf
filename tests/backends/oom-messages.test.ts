import { describe, expect, test } from '@jest/globals';
import { type ComputeBackend, OutOfMemoryError } from '@polyhal/hal';
import { CpuBackend } from '@polyhal/backend-cpu';
import { ReferenceBackend } from '@polyhal/backend-reference';
import { createWasmBackend } from '@polyhal/backend-wasm';
import { WasmHeap } from '../../backends/wasm/src/memory.js';

// An OutOfMemoryError names the limit that was really hit — memoryLimit (with its value), the JavaScript
// engine's largest typed array, the WebAssembly memory's maximum — and blames memoryLimit only when it was
// memoryLimit. Every request here is refused by a check or by the engine before any memory is taken.
const oom = (f: () => unknown): OutOfMemoryError => {
  let err: unknown = 'no error';
  try {
    f();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(OutOfMemoryError);
  return err as OutOfMemoryError;
};
const nothingLive = (be: ComputeBackend): void => expect(be.memoryStats().liveBuffers).toBe(0);

describe('out-of-memory messages name the real limit', () => {
  test('memoryLimit hit: the message gives its value and the bytes live', () => {
    const be = new CpuBackend({ memoryLimit: 4096 });
    const held = be.allocate(256); // 1024 bytes live
    const err = oom(() => be.allocate(1024));
    expect(err.message).toBe(
      'cpu: cannot allocate 4096 bytes: only 3072 available under memoryLimit (4096 bytes, 1024 live; free ' +
        'buffers with deallocate()/dispose() or raise memoryLimit)',
    );
    expect([err.requestedBytes, err.availableBytes]).toEqual([4096, 3072]);
    be.deallocate(held);
    nothingLive(be);
  });

  test.each([
    ['cpu', () => new CpuBackend({ memoryLimit: 2 ** 60 })],
    ['reference', () => new ReferenceBackend({ memoryLimit: 2 ** 60 })],
  ])("%s: a typed array past the engine's largest is the engine's limit, not memoryLimit", (name, make) => {
    const be = make();
    const err = oom(() => be.allocate(2 ** 53));
    expect(err.message).toMatch(
      new RegExp(
        `^${name}: cannot allocate ${2 ** 55} bytes: ${2 ** 53} float32 elements are longer than the ` +
          "JavaScript engine's largest typed array \\(RangeError: Invalid typed array length: \\d+\\); " +
          `memoryLimit \\(${2 ** 60} bytes\\) was not the limit$`,
      ),
    );
    expect(err.message).not.toMatch(/only 0 available|raise/);
    nothingLive(be);
    be.dispose();
  });

  test("wasm: past the WebAssembly memory's maximum, the message names that maximum, not memoryLimit", async () => {
    const be = await createWasmBackend({ memoryLimit: 2 ** 40, threads: 1 });
    try {
      const err = oom(() => be.allocate(2 ** 31)); // 8 GiB
      expect(err.availableBytes).toBe(be.memoryAvailable());
      expect(err.availableBytes).toBeLessThanOrEqual(2 ** 32);
      expect(err.message).toMatch(
        new RegExp(
          `^wasm: cannot allocate ${2 ** 33} bytes: only ${err.availableBytes} available in one block of the ` +
            'WebAssembly memory, whose maximum is (4294967296 bytes \\(4 GiB, all that wasm32 addresses\\)|' +
            `2147483648 bytes \\(2 GiB\\)); memoryLimit \\(${2 ** 40} bytes\\) was not the limit$`,
        ),
      );
      nothingLive(be);
    } finally {
      be.dispose();
    }
  });

  test("the wasm heap: past its memory's maximum, or a memory that cannot grow, says which", () => {
    const page = 65536;
    const capped = new WasmHeap(new WebAssembly.Memory({ initial: 1, maximum: 2 }), 0, 'wasm', 2 * page);
    expect(oom(() => capped.alloc(3 * page)).message).toBe(
      `wasm: cannot allocate ${3 * page} bytes: the WebAssembly memory's maximum is ${2 * page} bytes ` +
        `(2 × 64 KiB pages), and ${capped.largestAllocatable()} of them are free in one block`,
    );
    // A memory whose real maximum is below what the heap was told: growing it fails.
    const stuck = new WasmHeap(new WebAssembly.Memory({ initial: 1, maximum: 2 }), 0, 'wasm', 4 * page);
    expect(oom(() => stuck.alloc(3 * page)).message).toMatch(
      new RegExp(
        `^wasm: cannot allocate ${3 * page} bytes: the WebAssembly memory could not grow from ${page} to ` +
          `${3 * page} bytes \\(RangeError: .+\\); its maximum is ${4 * page} bytes$`,
      ),
    );
  });
});
