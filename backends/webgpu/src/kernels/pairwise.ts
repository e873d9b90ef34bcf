/**
 * Pairwise (cascade) float32 summation in WGSL, shared by every kernel that sums a float32 row: reductions
 * (sum, and mean, logsumexp and softmax built on it), layerNorm's mean and variance and its backward sums,
 * softmax cross-entropy's Σ exp.
 *
 * Terms come in blocks of PAIRWISE_BLOCK (8), unrolled and added as a tree of three levels; each block's sum
 * goes onto a binary counter of partial sums (level k holds the sum of 2^k blocks, in a private array indexed
 * by the block count), so two partials are only ever added when they cover equally many terms; a last part
 * block (under 8 terms) is added left to right and counted as one more block. Error over n terms, to first
 * order: at most (⌈log2 n⌉ + 4)·u·Σ|x| (u = 2^-24), 20·u at n = 65,536, inside the 33.5·u of the sum and
 * mean bound (1e-7 + 2e-6·Σ|x|, hal/src/ops/reduce.ts), whereas a float32 left-to-right sum errs by up to
 * (n − 1)·u·Σ|x|. Cost: one add per term and, per block, one merge on average: on lavapipe as fast as the
 * left-to-right loop or faster (the unrolled block).
 *
 * Why not Kahan summation: its compensation ((t − s) − y) is an algebraic identity that compilers may fold.
 * SPIR-V arithmetic without NoContraction is not exact, and Mesa's NIR (lavapipe, and Mesa's GPU drivers)
 * rewrites inexact `(a + b) − a` to `b` (nir_opt_algebraic.py: `(('~fadd', ('fneg', a), ('fadd', a, b)),
 * b)`), so on lavapipe the compensated sum was bit-identical to a naive one. NVIDIA's driver (Dawn, Vulkan)
 * folds it too: on an H100 the compensated workgroup sum erred exactly as much as an uncompensated one.
 * Pairwise summation needs no identity to survive: NIR reassociates float adds only to bring constants
 * together, and the structure across blocks is carried by loop state and array indices that no compiler can
 * rewrite; a compiler that reassociated the adds within a block freely would add at most 4·u to the bound.
 */

/** Terms per block: a full block is unrolled and summed as a tree before it goes onto the counter. */
export const PAIRWISE_BLOCK = 8;
/** Counter levels for any 32-bit count of terms (2^32 blocks). */
export const PAIRWISE_MAX_LEVELS = 32;

/**
 * Counter levels a loop of at most `terms` terms needs: 0 for one block or less (a plain loop, no counter: at
 * most 7 roundings), 4 up to 15 blocks, else PAIRWISE_MAX_LEVELS. The counter is a private array, which WGSL
 * zero-fills in every invocation and which a GPU compiler may keep in registers when small: on an H100 a
 * workgroup reduction with 16 terms per invocation took 1.6× as long with 32 levels as with 4, while 8 or 16
 * levels were slower than 32 on large ones (4M terms: 1.3 ms with 16, 0.9 ms with 32).
 */
export function pairwiseLevels(terms: number): number {
  if (terms <= PAIRWISE_BLOCK) return 0;
  return terms <= 15 * PAIRWISE_BLOCK ? 4 : PAIRWISE_MAX_LEVELS;
}

/** One running sum of a pairwise loop: `acc` (a declared f32 `var`, set to the total) += `term` per index. */
export interface PairwiseTerm {
  acc: string;
  term: string;
}

/**
 * WGSL statements: for `index` (a fresh u32) from 0 to `count` − 1 (a u32 expression below 2^31, evaluated
 * once), runs `body` (statements that may use `index`), then adds each term to its accumulator pairwise.
 * Each `acc` is overwritten with its total (0 for count 0). `tag` keeps local names apart when several
 * loops share a scope; `levels` (pairwiseLevels of the largest count) sizes the counter.
 */
export function pairwiseLoop(
  index: string,
  count: string,
  body: string,
  terms: readonly PairwiseTerm[],
  { tag = 'pw', levels = PAIRWISE_MAX_LEVELS }: { tag?: string; levels?: number } = {},
): string {
  const n = `${tag}_count`;
  const blocks = `${tag}_blocks`;
  const start = `${tag}_start`;
  const full = `${tag}_full`;
  const level = `${tag}_k`;
  const block = (t: PairwiseTerm): string => `${tag}_${t.acc}_block`;
  const stack = (t: PairwiseTerm): string => `${tag}_${t.acc}_levels`;
  const each = (f: (t: PairwiseTerm) => string, sep = ' '): string => terms.map(f).join(sep);
  const lane = (t: PairwiseTerm, i: number): string => `${tag}_${t.acc}_${i}`;
  if (levels === 0)
    return `{
    ${each((t) => `${t.acc} = 0.0;`)}
    for (var ${index} = 0u; ${index} < ${count}; ${index}++) {
      ${body}
      ${each((t) => `${t.acc} = ${t.acc} + (${t.term});`)}
    }
  }`;
  // a full block, unrolled: its terms summed as a tree of three levels
  const unrolled = Array.from(
    { length: PAIRWISE_BLOCK },
    (_, i) => `{ let ${index} = ${start} + ${i}u; ${body}
        ${each((t) => `${lane(t, i)} = ${t.term};`)} }`,
  ).join('\n      ');
  const tree = (t: PairwiseTerm, lo: number, hi: number): string =>
    hi - lo === 1 ? lane(t, lo) : `(${tree(t, lo, (lo + hi) >> 1)} + ${tree(t, (lo + hi) >> 1, hi)})`;
  // carry: level k is full while bit k of the block count is set; add it in, then go up a level
  const push = `{
      var ${level} = 0u;
      loop {
        if (((${blocks} >> ${level}) & 1u) == 0u) { break; }
        ${each((t) => `${block(t)} = ${stack(t)}[${level}] + ${block(t)};`)}
        ${level}++;
      }
      ${each((t) => `${stack(t)}[${level}] = ${block(t)};`)}
      ${blocks}++;
    }`;
  return `{
    let ${n} = ${count};
    let ${full} = ${n} & ~${PAIRWISE_BLOCK - 1}u;
    var ${blocks} = 0u;
    ${each((t) => `var ${stack(t)}: array<f32, ${levels}>; var ${block(t)} = 0.0;`)}
    ${each((t) => Array.from({ length: PAIRWISE_BLOCK }, (_, i) => `var ${lane(t, i)} = 0.0;`).join(' '))}
    for (var ${start} = 0u; ${start} < ${full}; ${start} += ${PAIRWISE_BLOCK}u) {
      ${unrolled}
      ${each((t) => `${block(t)} = ${tree(t, 0, PAIRWISE_BLOCK)};`, '\n      ')}
      ${push}
    }
    if (${full} < ${n}) {
      ${each((t) => `${block(t)} = 0.0;`)}
      for (var ${index} = ${full}; ${index} < ${n}; ${index}++) {
        ${body}
        ${each((t) => `${block(t)} = ${block(t)} + (${t.term});`)}
      }
      ${push}
    }
    ${each((t) => `${t.acc} = 0.0;`)}
    for (var ${level} = 0u; (${blocks} >> ${level}) != 0u; ${level}++) {
      if (((${blocks} >> ${level}) & 1u) != 0u) {
        ${each((t) => `${t.acc} = ${stack(t)}[${level}] + ${t.acc};`)}
      }
    }
  }`;
}
