// The webgpu float32 sums are pairwise (backends/webgpu/src/kernels/pairwise.ts): blocks of 8 onto a binary
// counter of partial sums held in a private array sized per pipeline (pairwiseLevels). Every level the counter
// reaches must fit the array, or partial sums are overwritten (WGSL clamps an index past the end). Checked
// without a device by running the counter for the counts at each size's edges, and on the device by sums of
// small integers (exact in any order, so a lost or doubled partial sum shows) of those lengths: one invocation
// per output on a software adapter and for short rows, the 256-invocation workgroups on a GPU otherwise.
import { describe, expect, test } from '@jest/globals';
import { PAIRWISE_BLOCK, pairwiseLevels } from '../backends/webgpu/src/kernels/pairwise.js';
import { REDUCE_GROUP, reduceLevels } from '../backends/webgpu/src/kernels/reduce.js';
import { crossBackends } from './cross-backend.js';

/** The highest counter level a loop over `terms` terms writes (the carry of pairwiseLoop, run on the host). */
function highestLevel(terms: number): number {
  const blocks = Math.ceil(terms / PAIRWISE_BLOCK);
  let highest = 0;
  // pushing block b + 1 onto b blocks writes level = the count of trailing ones of b
  for (let b = 0; b < blocks; b++) highest = Math.max(highest, 31 - Math.clz32(~b & (b + 1)));
  return highest;
}

// Per-invocation term counts at the edges of the 4-, 8- and 16-level arrays: 2^L − 1 blocks (every level
// below L full), 2^L blocks and one term more, and 1.5 · 2^L blocks (levels L − 1 and L both held).
const EDGES = [1, 8, 9, 64, 120, 128, 129, 192, 2040, 2048, 2049, 3072, 524280, 524288, 524289, 786432];

describe('webgpu pairwise sums', () => {
  test('the counter of every count fits the levels its pipeline declares', () => {
    const overflows = EDGES.filter((terms) => highestLevel(terms) >= pairwiseLevels(terms));
    expect(overflows).toEqual([]);
    for (const terms of EDGES) expect([4, 8, 16, 32]).toContain(pairwiseLevels(terms));
    expect([120, 128, 2040, 2048, 524280, 524288].map(pairwiseLevels)).toEqual([4, 8, 8, 16, 16, 32]);
    // the counter for 2^31 − 1 terms (the largest reduction: 2^28 blocks) reaches level 28
    expect(pairwiseLevels(2 ** 31 - 1)).toBeGreaterThan(28);
  });

  test('a workgroup reduction sizes the counter for one invocation’s share; other ops have none', () => {
    expect(reduceLevels('sum', 'float32', 121 * REDUCE_GROUP, false)).toBe(pairwiseLevels(121));
    expect(reduceLevels('sum', 'float32', 121, true)).toBe(pairwiseLevels(121));
    expect(reduceLevels('sum', 'int32', 4096, true)).toBe(0);
    expect(reduceLevels('max', 'float32', 4096, true)).toBe(0);
  });

  const fixture = crossBackends();
  test('sums of small integers at every edge are exact, one invocation per output and per workgroup', async () => {
    const be = fixture.backends['webgpu'];
    if (!be) return;
    const wrong: string[] = [];
    for (const n of [...EDGES, ...EDGES.filter((t) => t * REDUCE_GROUP < 2 ** 22).map((t) => t * REDUCE_GROUP + 1)]) {
      const values = Float32Array.from({ length: n }, (_, i) => ((i * 7919) % 17) - 8);
      const want = values.reduce((s, v) => s + v, 0);
      const x = be.fromArray(values, [1, n]);
      const y = be.sum(x, [1]);
      const got = (await be.read(y))[0];
      if (got !== want) wrong.push(`${n} terms: got ${got}, want ${want}`);
      be.free(x);
      be.free(y);
    }
    expect(wrong).toEqual([]);
  }, 60_000);
});
