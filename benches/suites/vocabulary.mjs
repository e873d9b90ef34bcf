// Benchmark suite 'vocabulary': the ops added to the op table beyond the seed set, each against its
// TensorFlow.js counterpart on the same inputs (1M float32 elements; layout and index ops on
// [1024, 1024]-sized data). gelu, geluTanh, silu, fmod, truncDiv, bitwiseOr/Xor and the shifts have no tfjs op and are
// left out. The trigonometric and hyperbolic ops run on x in [−1, 1] (acosh on 1 + |x|); floorDiv on
// float32 and on int32; cumsum and topk on [256, 256] (65 536 elements) and along one axis of 65 536. The
// N-dimensional index rows: gatherND of 65536 index pairs and of 2048 rows against tf.gatherND; scatterND
// of 64 rows (duplicates included) into a [256, 256] target, replacing (tf.tensorScatterUpdate) and adding
// onto zeros (tf.scatterND, which sums duplicates). BENCH_ROWS=<regexp> runs only the rows whose name matches.
import { force, forceTf, pair, rand } from './common.mjs';

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
    const pairs = Int32Array.from(rand(1 << 17, 14), (v) => Math.min(N - 1, Math.floor((v + 1) * (N / 2))));
    const ppairs = be.fromArray(pairs, [1 << 16, 2], 'int32');
    const tpairs = tf.tensor2d(pairs, [1 << 16, 2], 'int32');
    const prows = be.reshape(pidx, [2048, 1]);
    const trows = tf.reshape(tidx, [2048, 1]);
    const S = 256;
    const srow = Int32Array.from(rand(64, 15), (v) => Math.min(S - 1, Math.floor((v + 1) * (S / 2))));
    const ps = [be.fromArray(srow, [64, 1], 'int32'), be.fromArray(rand(64 * S, 16), [64, S])];
    const ts = [tf.tensor2d(srow, [64, 1], 'int32'), tf.tensor2d(rand(64 * S, 16), [64, S])];
    const ptarget = be.fromArray(rand(S * S, 17), [S, S]);
    const ttarget = tf.tensor2d(rand(S * S, 17), [S, S]);
    const pzero = be.full([S, S], 0);
    const ge1 = be.add(pp, 0.5);
    const tge1 = tf.add(tp, 0.5);
    // bool masks (about half true): ours stores bool as int32 0/1, tfjs as its own bool
    const pm = be.greater(px, 0);
    const tm = tf.greater(tx, 0);
    const pm2 = be.less(px, 0.5);
    const tm2 = tf.less(tx, 0.5);
    // constant masks: any of all-false and all of all-true read every element (no row decides early)
    const pf = be.less(px, -2);
    const tf_ = tf.less(tx, -2);
    const pt = be.greater(px, -2);
    const tt = tf.greater(tx, -2);
    const sx = be.fromArray(x.subarray(0, S * S), [S, S]);
    const sl = be.reshape(sx, [S * S]);
    const tsx = tf.tensor2d(x.subarray(0, S * S), [S, S]);
    const tsl = tf.reshape(tsx, [S * S]);
    // topk: ours returns values and indices; the indices are freed (tfjs's disposed) with the values
    const topk = (a, k) => () => {
      const r = be.topk(a, k);
      be.free(r.indices);
      return r.values;
    };
    const tfTopk = (a, k) => () => {
      const r = tf.topk(a, k);
      r.indices.dispose();
      return r.values;
    };
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
      ['gatherND 65536 pairs', () => be.gatherND(px, ppairs), () => tf.gatherND(tx, tpairs), 16, 1 << 16],
      ['gatherND 2048 rows', () => be.gatherND(px, prows), () => tf.gatherND(tx, trows), 8, 2048 * N],
      [
        'scatterND 64 rows into [256, 256] (tf.tensorScatterUpdate)',
        () => be.scatterND(ptarget, ps[0], ps[1]),
        () => tf.tensorScatterUpdate(ttarget, ts[0], ts[1]),
        8,
        S * S,
      ],
      [
        'scatterND add, 64 rows onto zeros [256, 256] (tf.scatterND)',
        () => be.scatterND(pzero, ps[0], ps[1], 'add'),
        () => tf.scatterND(ts[0], ts[1], [S, S]),
        8,
        S * S,
      ],
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
      ['all (axis 1)', () => be.all(pm, 1), () => tf.all(tm, 1), 4],
      ['any (axis 1), all false', () => be.any(pf, 1), () => tf.any(tf_, 1), 4],
      ['all (axis 1), all true', () => be.all(pt, 1), () => tf.all(tt, 1), 4],
      ['notEqual', () => be.notEqual(px, pp), () => tf.notEqual(tx, tp), 12],
      ['lessEqual', () => be.lessEqual(px, pp), () => tf.lessEqual(tx, tp), 12],
      ['greater', () => be.greater(px, pp), () => tf.greater(tx, tp), 12],
      ['greaterEqual', () => be.greaterEqual(px, pp), () => tf.greaterEqual(tx, tp), 12],
      ['logicalOr', () => be.logicalOr(pm, pm2), () => tf.logicalOr(tm, tm2), 12],
      ['logicalXor', () => be.logicalXor(pm, pm2), () => tf.logicalXor(tm, tm2), 12],
      ['logicalNot', () => be.logicalNot(pm), () => tf.logicalNot(tm), 8],
      ['isinf', () => be.isinf(px), () => tf.isInf(tx), 8],
      ['isfinite', () => be.isfinite(px), () => tf.isFinite(tx), 8],
      ['cast to bool', () => be.cast(px, 'bool'), () => tf.cast(tx, 'bool'), 8],
      ['logsumexp (axis 1)', () => be.logsumexp(px, 1), () => tf.logSumExp(tx, 1), 4],
      ['bitwiseAnd int32', () => be.bitwiseAnd(pia, pib), () => tf.bitwiseAnd(tia, tib), 12],
      ['cumsum [256, 256] (axis 1)', () => be.cumsum(sx, 1), () => tf.cumsum(tsx, 1), 8, S * S],
      ['cumsum [256, 256] (axis 0)', () => be.cumsum(sx, 0), () => tf.cumsum(tsx, 0), 8, S * S],
      ['cumsum 65536', () => be.cumsum(sl, 0), () => tf.cumsum(tsl, 0), 8, S * S],
      ['topk k = 1 [256, 256]', topk(sx, 1), tfTopk(tsx, 1), 4, S * S],
      ['topk k = 8 [256, 256]', topk(sx, 8), tfTopk(tsx, 8), 4, S * S],
      ['topk k = 8 of 65536', topk(sl, 8), tfTopk(tsl, 8), 4, S * S],
      ['floorDiv', () => be.floorDiv(px, pp), () => tf.floorDiv(tx, tp), 12],
      ['floorDiv int32', () => be.floorDiv(pia, pib), () => tf.floorDiv(tia, tib), 12],
    ].filter(([name]) => !process.env.BENCH_ROWS || new RegExp(process.env.BENCH_ROWS).test(name));
    for (const [name, ours, theirs, bytesPerElement, size = N * N] of cases) {
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
      rows.push({ suite: name, size, unit: 'GB/s', work: (bytesPerElement * size) / 1e9, ...t });
    }
    for (const a of [px, pp, pidx, phot, ge1, pm, pm2, pf, pt, sx, ppairs, ...ps, ptarget, pzero, pia, pib]) be.free(a);
    for (const a of [tx, tp, tidx, thot, tge1, tm, tm2, tf_, tt, tsx, tsl, tpairs, trows, ...ts, ttarget, tia, tib])
      a.dispose();
    return rows;
  },
};
