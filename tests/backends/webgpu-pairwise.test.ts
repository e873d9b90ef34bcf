// The webgpu float32 sums are pairwise (backends/webgpu/src/kernels/pairwise.ts): blocks of 8 onto a binary
// counter of partial sums held in a private array sized per pipeline (pairwiseLevels). Every level the counter
// reaches must fit the array, or partial sums are overwritten (WGSL clamps an index past the end). Checked
// without a device by running the counter for the counts at each size's edges, and on the device by sums of
// small integers (exact in any order, so a lost or doubled partial sum shows) of those lengths: one invocation
// per output on a software adapter and for short rows, the 256-invocation workgroups on a GPU otherwise.
import { describe, expect, test } from '@jest/globals';
import { PAIRWISE_BLOCK, pairwiseLevels } from '../../backends/webgpu/src/kernels/pairwise.js';
import { REDUCE_GROUP, reduceLevels } from '../../backends/webgpu/src/kernels/reduce.js';
import { crossBackends } from '../support/cross-backend.js';

/** The highest counter level a loop over `terms` terms writes (the carry of pairwiseLoop, run on the host). */
function highestLevel(terms: number): number {
  const blocks = Math.ceil(terms / PAIRWISE_BLOCK);
  let highest = 0;
  // pushing block b + 1 onto b blocks writes level = the count of trailing ones of b
  for (let b = 0; b < blocks; b++) highest = Math.max(highest, 31 - Math.clz32(~b & (b + 1)));
  return highest;
}

// Per-invocation term counts: at the edge of the plain loop (8 terms) and of the 4-level array (15 blocks, every
// level below 4 full; 16 blocks and one term more; 24 blocks, levels 3 and 4 both held), then the same shapes
// at 8 and 16 levels in the 32-level array.
const EDGES = [1, 8, 9, 64, 120, 128, 129, 192, 2040, 2048, 2049, 3072, 524280, 524288, 524289, 786432];

describe('webgpu pairwise sums', () => {
  test('the counter of every count fits the levels its pipeline declares', () => {
    // no counter (0 levels): the plain loop of one block at most
    const fits = (terms: number, levels: number): boolean =>
      levels === 0 ? terms <= PAIRWISE_BLOCK : highestLevel(terms) < levels;
    const overflows = EDGES.filter((terms) => !fits(terms, pairwiseLevels(terms)));
    expect(overflows).toEqual([]);
    expect([8, 9, 120, 128, 524288].map(pairwiseLevels)).toEqual([0, 4, 4, 32, 32]);
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
