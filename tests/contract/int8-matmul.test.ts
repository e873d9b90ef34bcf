// Integer matmul across backends, bit for bit against the cpu backend: int8 operands on webgpu take the
// int8 kernels (dot4I8Packed on lavapipe, unpacked at these sizes; subgroup matrices where a device has
// them for large products; tests/backends/webgpu.test.ts runs the packed ones too), int32 and uint8
// the int32 tiles; reference has no integerMatmulKernel, so it runs the HAL's composite.
import { describe, expect, test } from '@jest/globals';
import type { DType } from '@polyhal/hal';
import { crossBackends } from '../support/cross-backend.js';

const fixture = crossBackends();
const ints = (n: number, lo: number, hi: number, seed: number): Int32Array =>
  Int32Array.from({ length: n }, (_, i) => lo + ((((i + 1) * 2654435761 + seed * 40503) >>> 0) % (hi - lo + 1)));

describe('integer matmul', () => {
  const shapes: [number[], number[]][] = [
    [
      [200, 131],
      [131, 150],
    ],
    [
      [3, 70, 64],
      [64, 65],
    ],
  ];
  for (const [dtype, lo, hi] of [
    ['int8', -128, 127],
    ['uint8', 0, 255],
    ['int32', -(2 ** 31), 2 ** 31 - 1],
  ] as [DType, number, number][])
    for (const [sa, sb] of shapes)
      test(`${dtype} [${sa}]·[${sb}] equals the cpu backend on every backend`, async () => {
        const count = (s: number[]): number => s.reduce((p, d) => p * d, 1);
        const [da, db] = [ints(count(sa), lo, hi, 1), ints(count(sb), lo, hi, 2)];
        const cpu = fixture.cpu;
        const want = await cpu.read(cpu.matmul(cpu.fromArray(da, sa, dtype), cpu.fromArray(db, sb, dtype)));
        for (const [name, be] of Object.entries(fixture.backends)) {
          const got = await be.read(be.matmul(be.fromArray(da, sa, dtype), be.fromArray(db, sb, dtype)));
          expect([name, got]).toEqual([name, want]);
        }
      });

  test('int8 results wrap: 100·100·2 = 20000 ≡ 32 (mod 256) as NumPy gives', async () => {
    for (const be of [fixture.cpu, ...Object.values(fixture.backends)]) {
      const a = be.fromArray(new Int32Array([100, 100]), [1, 2], 'int8');
      expect(Array.from(await be.read(be.matmul(a, be.fromArray(new Int32Array([100, 100]), [2, 1], 'int8'))))).toEqual(
        [32],
      );
    }
  });

  test('webgpu names its int8 kernels in deviceName (lavapipe: dot4I8Packed, no subgroup matrices)', () => {
    const be = fixture.backends['webgpu'] as unknown as { int8MatmulPath: string; deviceName: string } | undefined;
    if (!be) return;
    expect(be.deviceName).toContain(`int8 matmul: ${be.int8MatmulPath}`);
    if (/llvmpipe/.test(be.deviceName))
      expect(be.int8MatmulPath).toBe('dot4I8Packed, unpacked dot4 up to 2^26 multiply-adds');
  });
});
