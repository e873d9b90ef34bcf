import { describe, expect, test } from '@jest/globals';
import { dot4Tile, int8Setup } from '../../backends/webgpu/src/dispatch-matmul-int.js';

// The webgpu backend's choice of int8 kernels from its options and device (no device needed): subgroup
// matrices where the device has them unless int8Kernel is 'dot4'; the 128×128 tile only with Dawn's
// robustness off (or forced by int8Tile) and 20 KiB of workgroup memory; int8Packing 'always' packs every
// product of 16 or more rows. The H100 figures behind these rules: benches/results/h100/webgpu-int8-*.json.
const OFF = ['enable-dawn-features=allow_unsafe_apis,disable_robustness'];
const ON = ['enable-dawn-features=allow_unsafe_apis'];

describe('webgpu int8Setup', () => {
  test('no subgroup matrices, or int8Kernel dot4: the dot4I8Packed kernels', () => {
    for (const [options, has] of [
      [{}, false],
      [{ int8Kernel: 'dot4' as const, dawnFlags: OFF }, true],
    ] as const) {
      const s = int8Setup(options, has, 32768);
      expect(s.subgroupMatrix).toBe(false);
      expect(s.description).toBe('dot4I8Packed, unpacked dot4 up to 2^26 multiply-adds');
    }
  });

  test('robustness on takes the 64×128 tile; off, the 128×128 one for large products', () => {
    const on = int8Setup({ dawnFlags: ON }, true, 32768);
    expect([on.subgroupMatrix, on.subgroupMatrixLarge, on.subgroupMatrixForced]).toEqual([true, false, false]);
    expect(on.description).toContain('subgroup matrices (tensor cores, 64×128 tiles)');
    const off = int8Setup({ dawnFlags: OFF }, true, 32768);
    expect([off.subgroupMatrix, off.subgroupMatrixLarge, off.subgroupMatrixForced]).toEqual([true, true, false]);
    expect(off.description).toContain('128×128 and 64×128 tiles');
  });

  test('the 128×128 tile needs 20 KiB of workgroup memory, forced or not', () => {
    expect(int8Setup({ dawnFlags: OFF }, true, 16384).subgroupMatrixLarge).toBe(false);
    expect(int8Setup({ dawnFlags: OFF }, true, 20480).subgroupMatrixLarge).toBe(true);
    expect(int8Setup({ int8Tile: '128x128' }, true, 16384).subgroupMatrixLarge).toBe(false);
  });

  test('int8Tile forces a tile whatever the robustness', () => {
    const large = int8Setup({ dawnFlags: ON, int8Tile: '128x128' }, true, 32768);
    expect([large.subgroupMatrixLarge, large.subgroupMatrixForced]).toEqual([true, true]);
    expect(large.description).toContain('(tensor cores, 128×128 tiles)');
    const medium = int8Setup({ dawnFlags: OFF, int8Tile: '64x128' }, true, 32768);
    expect([medium.subgroupMatrixLarge, medium.subgroupMatrixForced]).toEqual([false, true]);
  });

  test('dot4: the 128×128 kernel from 256 output tiles of 128×128, or as int8Tile forces it', () => {
    const auto = int8Setup({}, false, 32768);
    expect(auto.dot4Tile).toBe('auto');
    expect(dot4Tile(auto, 16 * 128, 16 * 128)).toBe(128);
    expect(dot4Tile(auto, 16 * 128 - 64, 16 * 128)).toBe(128); // a part tile counts
    expect(dot4Tile(auto, 15 * 128, 17 * 128)).toBe(64); // 255 tiles
    expect(dot4Tile(int8Setup({ int8Tile: '128x128' }, false, 32768), 64, 64)).toBe(128);
    expect(dot4Tile(int8Setup({ int8Tile: '64x128' }, false, 32768), 4096, 4096)).toBe(64);
  });

  test("int8Packing 'always' packs every product (no direct dot4 below 2^26 multiply-adds)", () => {
    expect(int8Setup({}, true, 32768).directMacs).toBe(2 ** 26);
    const always = int8Setup({ int8Packing: 'always' }, true, 32768);
    expect(always.directMacs).toBe(0);
    expect(always.description).toBe('subgroup matrices (tensor cores, 64×128 tiles)');
  });
});
