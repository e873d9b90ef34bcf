import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals';
import {
  createWebGpuBackend,
  NO_YIELD_WARN_OPS,
  NO_YIELD_WARNING_CODE,
  type WebGpuBackend,
} from '@polyhal/backend-webgpu';
import { requiredBackends } from '../support/backends.js';

// A loop that encodes ops and never lets the event loop turn grows the WebGPU runtime's native memory
// (it frees finished work only when the loop runs); a synchronous op cannot wait for the GPU, so the
// backend says so, once, instead of growing in silence.
describe('webgpu: ops encoded without the event loop turning', () => {
  let gpu: WebGpuBackend | undefined;
  let unavailable = '';
  beforeAll(async () => {
    try {
      gpu = await createWebGpuBackend();
    } catch (e) {
      unavailable = (e as Error).message;
    }
  });
  afterAll(() => gpu?.dispose());

  test('warn once per backend past the limit within one turn, never when the loop yields in between', async () => {
    if (!gpu && requiredBackends().includes('webgpu')) throw new Error(`webgpu is required here: ${unavailable}`);
    expect(gpu ? 'adapter' : `no adapter: ${unavailable}`).toBe('adapter');
    const be = gpu!;
    const emitted: unknown[][] = [];
    const spy = jest.spyOn(process, 'emitWarning').mockImplementation((...args: unknown[]) => {
      emitted.push(args);
    });
    try {
      const x = be.fromArray([1, 2, 3, 4], [4]);
      const yieldLoop = (): Promise<void> => new Promise((r) => setTimeout(r, 5));
      await yieldLoop();
      // Just under the limit per turn, many turns: no warning.
      for (let i = 1; i <= 2 * NO_YIELD_WARN_OPS; i++) {
        be.free(be.add(x, x));
        if (i % (NO_YIELD_WARN_OPS - 1) === 0) await yieldLoop();
      }
      await yieldLoop();
      expect(emitted).toEqual([]);
      // The limit within one turn: one warning naming its code and what to do.
      let last = be.add(x, x);
      for (let i = 1; i < NO_YIELD_WARN_OPS; i++) {
        be.free(last);
        last = be.add(x, x);
      }
      expect(emitted.length).toBe(1);
      const [message, options] = emitted[0] as [string, { type: string; code: string }];
      expect(options).toEqual({ type: 'PolyHALWarning', code: NO_YIELD_WARNING_CODE });
      expect(message).toContain(`${NO_YIELD_WARN_OPS} ops`);
      expect(message).toContain('synchronize()');
      // The work itself is unaffected, and the warning is not repeated.
      expect(Array.from((await be.read(last)) as Float32Array)).toEqual([2, 4, 6, 8]);
      be.free(last);
      for (let i = 0; i < NO_YIELD_WARN_OPS; i++) be.free(be.add(x, x));
      await be.synchronize();
      expect(emitted.length).toBe(1);
      be.free(x);
    } finally {
      spy.mockRestore();
    }
  }, 60_000);

  test('replays of a recording count their kernels: a loop of replays that never yields is warned of too', async () => {
    if (!gpu && requiredBackends().includes('webgpu')) throw new Error(`webgpu is required here: ${unavailable}`);
    const be = await createWebGpuBackend(); // a backend of its own: the warning is given once per backend
    const emitted: unknown[][] = [];
    const spy = jest.spyOn(process, 'emitWarning').mockImplementation((...args: unknown[]) => {
      emitted.push(args);
    });
    try {
      const x = be.fromArray([1, 2, 3, 4], [4]);
      be.beginCapture!([x.buffer]);
      const n = be.neg(x);
      const y = be.exp(n); // recorded; what the kernels are does not matter here
      be.free(n);
      const r = be.endCapture!([y.buffer]);
      if (!('work' in r)) throw new Error(r.broken);
      const perReplay = r.work.kernels;
      expect(perReplay).toBeGreaterThan(0);
      await new Promise((res) => setTimeout(res, 5));
      const replays = Math.ceil(NO_YIELD_WARN_OPS / perReplay);
      const data = new Float32Array([1, 2, 3, 4]);
      for (let i = 0; i < replays - 1; i++) r.work.replay([data]);
      expect(emitted).toEqual([]);
      r.work.replay([data]); // the replay that reaches the limit within one turn
      expect(emitted.length).toBe(1);
      expect((emitted[0] as [string, { code: string }])[1].code).toBe(NO_YIELD_WARNING_CODE);
      r.work.release();
      be.free(y);
      be.free(x);
    } finally {
      spy.mockRestore();
      be.dispose();
    }
  }, 120_000);
});
