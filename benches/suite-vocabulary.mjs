// Benchmark suite 'vocabulary': the ops added to the op table beyond the seed set, each against its
// TensorFlow.js counterpart on the same inputs (1M float32 elements; layout and index ops on
// [1024, 1024]-sized data). gelu, geluTanh, silu, fmod, truncDiv and the shifts have no tfjs op and are
// left out. The trigonometric and hyperbolic ops run on x in [−1, 1] (acosh on 1 + |x|). floorDiv runs on
// float32 and on int32. BENCH_ROWS=<regexp> runs only the rows whose name matches.
import { force, forceTf, pair, rand } from './suites.mjs';

const N = 1024;

export const VOCABULARY_SUITES = {
  async vocabulary(be, tf) {
    const rows = [];
    const x = rand(N * N, 11);
    const pos = Float32Array.from(x, (v) => Math.abs(v) + 0.5);
    const px = be.fromArray(x, [N, N]);
    const pp = be.fromArray(pos, [N, N]);
    const tx = tf.tensor2d(x, [N, N]);
    const tp = tf.tensor2d(pos, [N, N]);
    const idx = Int32Array.from(rand(2048, 12), (v) => Math.min(N - 1, Math.floor((v + 1) * (N / 2))));
    const pidx = be.fromArray(idx, [2048], 'int32');
    const tidx = tf.tensor1d(idx, 'int32');
    const hot = Int32Array.from(rand(1 << 16, 13), (v) => Math.floor((v + 1) * 7.999));
    const phot = be.fromArray(hot, [1 << 16], 'int32');
    const thot = tf.tensor1d(hot, 'int32');
    const ge1 = be.add(pp, 0.5);
    const tge1 = tf.add(tp, 0.5);
    // bool masks (about half true): ours stores bool as int32 0/1, tfjs as its own bool
    const pm = be.greater(px, 0);
    const tm = tf.greater(tx, 0);
    const pm2 = be.less(px, 0.5);
    const tm2 = tf.less(tx, 0.5);
    // int32 dividends in ±1000 and divisors in [1, 8], half of them negated
    const ia = Int32Array.from(x, (v) => Math.round(v * 1000));
    const ib = Int32Array.from(rand(N * N, 14), (v) => (v < 0 ? -1 : 1) * (1 + Math.floor(Math.abs(v) * 7.999)));
    const pia = be.fromArray(ia, [N, N], 'int32');
    const pib = be.fromArray(ib, [N, N], 'int32');
    const tia = tf.tensor2d(ia, [N, N], 'int32');
    const tib = tf.tensor2d(ib, [N, N], 'int32');
    const cases = [
      ...['erf', 'floor', 'round', 'sign', 'softplus'].map((op) => [op, () => be[op](px), () => tf[op](tx), 8]),
      ['log1p', () => be.log1p(pp), () => tf.log1p(tp), 8],
      ['expm1', () => be.expm1(px), () => tf.expm1(tx), 8],
      ['minimum', () => be.minimum(px, pp), () => tf.minimum(tx, tp), 12],
      ['pow', () => be.pow(pp, px), () => tf.pow(tp, tx), 12],
      ['concat (axis 0)', () => be.concat([px, pp], 0), () => tf.concat([tx, tp], 0), 16],
      ['tile [2, 1]', () => be.tile(px, [2, 1]), () => tf.tile(tx, [2, 1]), 12],
      ['flip (axis 1), materialized', () => be.contiguous(be.flip(px, [1])), () => tf.reverse(tx, 1), 8],
      ['gather 2048 rows', () => be.gather(px, pidx, 0), () => tf.gather(tx, tidx, 0), 16],
      ['argmax (axis 1)', () => be.argmax(px, 1), () => tf.argMax(tx, 1), 4],
      ['oneHot 65536 × 16', () => be.oneHot(phot, 16), () => tf.oneHot(thot, 16), 4],
      ...['tan', 'asin', 'acos', 'atan', 'sinh', 'cosh', 'asinh', 'atanh'].map((op) => [
        op,
        () => be[op](px),
        () => tf[op](tx),
        8,
      ]),
      ['acosh', () => be.acosh(ge1), () => tf.acosh(tge1), 8],
      ['less', () => be.less(px, pp), () => tf.less(tx, tp), 12],
      ['equal', () => be.equal(px, pp), () => tf.equal(tx, tp), 12],
      ['where', () => be.where(pm, px, pp), () => tf.where(tm, tx, tp), 16],
      ['logicalAnd', () => be.logicalAnd(pm, pm2), () => tf.logicalAnd(tm, tm2), 12],
      ['isnan', () => be.isnan(px), () => tf.isNaN(tx), 8],
      ['any (axis 1)', () => be.any(pm, 1), () => tf.any(tm, 1), 4],
      ['floorDiv', () => be.floorDiv(px, pp), () => tf.floorDiv(tx, tp), 12],
      ['floorDiv int32', () => be.floorDiv(pia, pib), () => tf.floorDiv(tia, tib), 12],
    ].filter(([name]) => !process.env.BENCH_ROWS || new RegExp(process.env.BENCH_ROWS).test(name));
    for (const [name, ours, theirs, bytesPerElement] of cases) {
      const t = await pair(
        async () => {
          const c = ours();
          await force(be, c);
          be.free(c);
        },
        async () => {
          const c = theirs();
          await forceTf(be, tf, c);
          c.dispose();
        },
        { iterations: 10 },
      );
      rows.push({ suite: name, size: N * N, unit: 'GB/s', work: (bytesPerElement * N * N) / 1e9, ...t });
    }
    for (const a of [px, pp, pidx, phot, ge1, pm, pm2, pia, pib]) be.free(a);
    for (const a of [tx, tp, tidx, thot, tge1, tm, tm2, tia, tib]) a.dispose();
    return rows;
  },
};
