/**
 * A replay told what its caller does next (ReplayOptions: hal/src/capture.ts; webgpu: replay-plan.ts, reads.ts):
 * the copies copyOutput takes and the reads that follow are encoded with the replay's own work, so a replay and the
 * read of its small result are one submission (two without the options). The values are those of a replay without
 * the options (bit for bit) and of a float64 oracle; a copy written after the replay reads what was written, not
 * the replay's value; a replay after another reads the later values; copies not taken are freed; a bad index is a
 * ShapeMismatchError that writes nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createWebGpuBackend, type WebGpuBackend } from '@polyhal/backend-webgpu';
import { type CapturedWork, type NDArray, ShapeMismatchError } from '@polyhal/hal';

const [M, K, N] = [12, 10, 6];
const data = (n: number, seed: number): Float32Array =>
  Float32Array.from({ length: n }, (_, i) => Math.fround(Math.sin(seed * 91.7 + i * 12.9898) % 1));
const W = data(K * N, 2);

/** float64 oracle of the captured work: sum(exp(x)·w) (a loss-like scalar) and x·3 + 1. */
function oracle(x: Float32Array): [number[], number[]] {
  let sum = 0;
  for (let i = 0; i < M; i++)
    for (let j = 0; j < N; j++) for (let k = 0; k < K; k++) sum += Math.exp(x[i * K + k]!) * W[k * N + j]!;
  return [[sum], Array.from(x, (v) => v * 3 + 1)];
}

describe('a replay that copies and reads its outputs ahead', () => {
  let be: WebGpuBackend;
  let work: CapturedWork;
  let held: NDArray[];
  beforeAll(async () => {
    be = await createWebGpuBackend();
    const x = be.fromArray(data(M * K, 1), [M, K]);
    const w = be.fromArray(W, [K, N]);
    be.beginCapture([x.buffer]);
    const loss = be.sum(be.matmul(be.unary('exp', x), w));
    const y = be.binary('add', be.binary('mul', x, 3), 1);
    const r = be.endCapture([loss.buffer, y.buffer]);
    if (!('work' in r)) throw new Error(`capture broken: ${r.broken}`);
    work = r.work;
    held = [x, w, loss, y];
  });
  afterAll(() => {
    work?.release();
    for (const t of held ?? []) be.free(t);
    be?.dispose();
  });

  const expectOracle = (got: number[][], x: Float32Array): void => {
    const [loss, y] = oracle(x);
    expect(Math.abs(got[0]![0]! - loss[0]!)).toBeLessThan(1e-5 * Math.max(1, Math.abs(loss[0]!)) * K * M);
    got[1]!.forEach((v, i) => expect(Math.abs(v - y[i]!)).toBeLessThan(1e-6));
  };

  /** A replay of x's values, its copies taken and read; with the options or without; submissions from the replay on. */
  async function copiesRead(seed: number, ahead: boolean): Promise<{ values: number[][]; submissions: number }> {
    const x = data(M * K, seed);
    const s0 = be.kernelStats().submissions;
    work.replay([x], ahead ? { copyOutputs: [0, 1], readOutputs: [0] } : undefined);
    const copies = [work.copyOutput(0), work.copyOutput(1, [M, K])];
    const loss = Array.from(await be.read(copies[0]!));
    const submissions = be.kernelStats().submissions - s0;
    const y = Array.from(await be.read(copies[1]!));
    for (const c of copies) be.free(c);
    return { values: [loss, y], submissions };
  }

  test('a replay and its loss read: one submission (two without the options), plain values', async () => {
    const plain = await copiesRead(3, false);
    const ahead = await copiesRead(3, true);
    expect(ahead.values).toEqual(plain.values);
    expectOracle(ahead.values, data(M * K, 3));
    expect(plain.submissions).toBe(2);
    expect(ahead.submissions).toBe(1);
  });

  test('read(i) of an output read ahead: one submission, the replay values', async () => {
    const x = data(M * K, 4);
    const s0 = be.kernelStats().submissions;
    work.replay([x], { readOutputs: [0, 1] });
    const values = [Array.from(await work.read(0)), Array.from(await work.read(1))];
    expect(be.kernelStats().submissions - s0).toBe(1);
    expectOracle(values, x);
  });

  test('a copy written after the replay reads what was written', async () => {
    work.replay([data(M * K, 5)], { copyOutputs: [0], readOutputs: [0] });
    const loss = work.copyOutput(0);
    be.write(loss.buffer, Float32Array.of(42.5));
    expect(Array.from(await be.read(loss))).toEqual([42.5]);
    be.free(loss);
  });

  test('a later replay: its values, whether the earlier copies were taken or not', async () => {
    work.replay([data(M * K, 6)], { copyOutputs: [0, 1], readOutputs: [0, 1] });
    work.replay([data(M * K, 7)], { copyOutputs: [0, 1], readOutputs: [0, 1] });
    const copies = [work.copyOutput(0), work.copyOutput(1)];
    const values = [Array.from(await be.read(copies[0]!)), Array.from(await be.read(copies[1]!))];
    expectOracle(values, data(M * K, 7));
    expect([Array.from(await work.read(0)), Array.from(await work.read(1))]).toEqual(values);
    for (const c of copies) be.free(c);
  });

  test('copies not taken are freed by the next replay', async () => {
    work.replay([data(M * K, 8)], { copyOutputs: [0, 1] });
    await be.synchronize();
    const live = be.memoryStats().liveBytes;
    for (let i = 0; i < 20; i++) work.replay([data(M * K, 9 + i)], { copyOutputs: [0, 1], readOutputs: [0] });
    await be.synchronize();
    expect(be.memoryStats().liveBytes).toBe(live);
  });

  test('readAheadInReplay false: reads copy and submit as usual, same values; indices still checked', async () => {
    const off = await createWebGpuBackend({ readAheadInReplay: false });
    try {
      const x = off.fromArray(data(M * K, 1), [M, K]);
      off.beginCapture([x.buffer]);
      const y = off.binary('add', off.binary('mul', x, 3), 1);
      const r = off.endCapture([y.buffer]);
      if (!('work' in r)) throw new Error(`capture broken: ${r.broken}`);
      const s0 = off.kernelStats().submissions;
      r.work.replay([data(M * K, 50)], { copyOutputs: [0], readOutputs: [0] });
      const c = r.work.copyOutput(0);
      const got = Array.from(await off.read(c));
      expect(off.kernelStats().submissions - s0).toBe(2);
      expect(got).toEqual(Array.from(data(M * K, 50), (v) => Math.fround(Math.fround(v * 3) + 1)));
      expect(() => r.work.replay([data(M * K, 51)], { readOutputs: [1] })).toThrow(ShapeMismatchError);
      for (const t of [c, x, y]) off.free(t);
      r.work.release();
    } finally {
      off.dispose();
    }
  });

  test('an index that is not an output: ShapeMismatchError, nothing written', async () => {
    work.replay([data(M * K, 40)]);
    const before = [Array.from(await work.read(0)), Array.from(await work.read(1))];
    expect(() => work.replay([data(M * K, 41)], { copyOutputs: [2] })).toThrow(ShapeMismatchError);
    expect(() => work.replay([data(M * K, 41)], { readOutputs: [-1] })).toThrow(ShapeMismatchError);
    expect([Array.from(await work.read(0)), Array.from(await work.read(1))]).toEqual(before);
  });
});
