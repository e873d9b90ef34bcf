// Benchmark suite 'convolution': the HAL's conv (2-D, depthwise, 1-D), convTranspose, maxPool, avgPool and
// resize forward against their TensorFlow.js counterparts on the same values. Ours take NCHW, tfjs NHWC (its only
// layout): each side gets its input in its own layout, transposed before timing. Work: multiply-adds × 2
// for the convolutions (GFLOP/s), input bytes read for the pools and output bytes for resize (GB/s).
import { force, forceTf, pair, rand } from './common.mjs';

export const CONVOLUTION_SUITES = {
  async convolution(be, tf) {
    const rows = [];
    const nchw = (data, shape) => be.fromArray(data, shape);
    const nhwc = (data, [n, c, ...sp]) => {
      const t = tf.tensor(data, [n, c, ...sp]);
      const p = tf.transpose(t, [0, ...sp.map((_, i) => i + 2), 1]);
      t.dispose();
      return p;
    };
    /** Our OIHW (conv) weight as tfjs HWIO, or IOHW (convTranspose) as HW-O-I. */
    const weight = (data, shape, perm) => {
      const t = tf.tensor(data, shape);
      const p = tf.transpose(t, perm);
      t.dispose();
      return p;
    };
    const cases = [];
    {
      const [xs, ws] = [
        [8, 32, 32, 32],
        [64, 32, 3, 3],
      ];
      const x = rand(
        xs.reduce((a, b) => a * b),
        21,
      );
      const w = rand(
        ws.reduce((a, b) => a * b),
        22,
      );
      const [px, pw, tx, tw] = [nchw(x, xs), nchw(w, ws), nhwc(x, xs), weight(w, ws, [2, 3, 1, 0])];
      cases.push([
        'conv2d 3×3 same [8,32,32,32]→64',
        () => be.conv(px, pw, { padding: 1 }),
        () => tf.conv2d(tx, tw, 1, 'same'),
        2 * 8 * 64 * 32 * 32 * 32 * 9,
        'GFLOP/s',
        [px, pw],
        [tx, tw],
      ]);
    }
    {
      const [xs, ws] = [
        [8, 64, 32, 32],
        [64, 1, 3, 3],
      ];
      const x = rand(
        xs.reduce((a, b) => a * b),
        23,
      );
      const w = rand(
        ws.reduce((a, b) => a * b),
        24,
      );
      const [px, pw, tx, tw] = [nchw(x, xs), nchw(w, ws), nhwc(x, xs), weight(w, ws, [2, 3, 0, 1])];
      cases.push([
        'depthwise conv2d 3×3 [8,64,32,32]',
        () => be.conv(px, pw, { padding: 1, groups: 64 }),
        () => tf.depthwiseConv2d(tx, tw, 1, 'same'),
        2 * 8 * 64 * 32 * 32 * 9,
        'GFLOP/s',
        [px, pw],
        [tx, tw],
      ]);
    }
    {
      const [xs, ws] = [
        [16, 64, 512],
        [64, 64, 5],
      ];
      const x = rand(
        xs.reduce((a, b) => a * b),
        25,
      );
      const w = rand(
        ws.reduce((a, b) => a * b),
        26,
      );
      const [px, pw, tx, tw] = [nchw(x, xs), nchw(w, ws), nhwc(x, xs), weight(w, ws, [2, 1, 0])];
      cases.push([
        'conv1d k5 same [16,64,512]→64',
        () => be.conv(px, pw, { padding: 'same' }),
        () => tf.conv1d(tx, tw, 1, 'same'),
        2 * 16 * 64 * 512 * 64 * 5,
        'GFLOP/s',
        [px, pw],
        [tx, tw],
      ]);
    }
    {
      const [xs, ws] = [
        [8, 64, 16, 16],
        [64, 32, 4, 4],
      ];
      const x = rand(
        xs.reduce((a, b) => a * b),
        27,
      );
      const w = rand(
        ws.reduce((a, b) => a * b),
        28,
      );
      // tfjs conv2dTranspose filter: [kh, kw, outChannels, inChannels]
      const [px, pw, tx, tw] = [nchw(x, xs), nchw(w, ws), nhwc(x, xs), weight(w, ws, [2, 3, 1, 0])];
      cases.push([
        'convTranspose2d 4×4/2 [8,64,16,16]→32',
        () => be.convTranspose(px, pw, { stride: 2, padding: 1 }),
        () => tf.conv2dTranspose(tx, tw, [8, 32, 32, 32], 2, 'same'),
        2 * 8 * 64 * 16 * 16 * 32 * 16,
        'GFLOP/s',
        [px, pw],
        [tx, tw],
      ]);
    }
    {
      const xs = [8, 64, 64, 64];
      const x = rand(
        xs.reduce((a, b) => a * b),
        29,
      );
      const [px, tx] = [nchw(x, xs), nhwc(x, xs)];
      const n = x.length;
      cases.push([
        'maxPool 3×3/2 same [8,64,64,64]',
        () => be.maxPool(px, { kernelSize: 3, stride: 2, padding: 'same' }),
        () => tf.maxPool(tx, 3, 2, 'same'),
        4 * n,
        'GB/s',
        [],
        [],
      ]);
      cases.push([
        'avgPool 2×2/2 [8,64,64,64]',
        () => be.avgPool(px, { kernelSize: 2 }),
        () => tf.avgPool(tx, 2, 2, 'valid'),
        4 * n,
        'GB/s',
        [px],
        [tx],
      ]);
    }
    {
      const xs = [8, 32, 64, 64];
      const x = rand(
        xs.reduce((a, b) => a * b),
        30,
      );
      const [px, tx] = [nchw(x, xs), nhwc(x, xs)];
      const sizes = [8, 32, 128, 128];
      cases.push([
        'resize bilinear [8,32,64,64]→128²',
        () => be.resize(px, { sizes, mode: 'linear' }),
        () => tf.image.resizeBilinear(tx, [128, 128], false, true),
        4 * x.length * 4,
        'GB/s',
        [],
        [],
      ]);
      cases.push([
        'resize nearest [8,32,64,64]→128²',
        () =>
          be.resize(px, { sizes, mode: 'nearest', coordinateTransformationMode: 'asymmetric', nearestMode: 'floor' }),
        () => tf.image.resizeNearestNeighbor(tx, [128, 128], false, false),
        4 * x.length * 4,
        'GB/s',
        [px],
        [tx],
      ]);
    }
    for (const [name, ours, theirs, work, unit, ownArrays, tfArrays] of cases) {
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
        { iterations: 5 },
      );
      rows.push({ suite: name, size: 0, unit, work: work / 1e9, ...t });
      for (const a of ownArrays) be.free(a);
      for (const a of tfArrays) a.dispose();
    }
    return rows;
  },
};
