/**
 * 2-D convolution (NCHW, PyTorch's cross-correlation convention) by im2col + matmul.
 * x: [N, C, H, W], w: [O, C, k, k] → [N, O, Ho, Wo], Ho = ⌊(H + 2p − k)/s⌋ + 1; float32.
 * im2col is a single strided view of the padded input ([N, Ho, Wo, C, k, k], NumPy as_strided)
 * materialized by the backend's copy kernel. Gradients: dW = dyᵀ·cols; dx by col2im: dcols = dy·W,
 * each kernel tap's block summed at its offset, per stride phase, then the phases interleaved and
 * cropped by p.
 * Throws ShapeMismatchError when channels differ or the kernel is larger than the padded input.
 */
import {
  asStridedView,
  type ComputeBackend,
  InvalidArgumentError,
  type NDArray,
  ShapeMismatchError,
  withTemps,
} from '@polyhal/hal';
import { record } from './ops.js';
import { Tensor } from './tensor.js';

export interface Conv2dOptions {
  stride?: number;
  padding?: number;
}

/** Forward of a stride-s convolution on an already padded input: returns y [N, O, Ho, Wo] and cols. */
function convPadded(be: ComputeBackend, xp: NDArray, w: NDArray, s: number): { y: NDArray; cols: NDArray } {
  const [N, C, Hp, Wp] = xp.shape as [number, number, number, number];
  const [O, , k] = w.shape as [number, number, number, number];
  const Ho = Math.floor((Hp - k) / s) + 1;
  const Wo = Math.floor((Wp - k) / s) + 1;
  const [sn, sc, sh, sw] = xp.strides as [number, number, number, number];
  return withTemps(be, (t) => {
    const win = asStridedView(xp, [N, Ho, Wo, C, k, k], [sn, s * sh, s * sw, sc, sh, sw], xp.offset);
    const cols = be.reshape(be.contiguous(win), [N * Ho * Wo, C * k * k]);
    const wm = t(be.reshape(be.contiguous(w), [O, C * k * k]));
    const y2 = t(be.matmul(cols, be.permute(wm, [1, 0]))); // [N·Ho·Wo, O]
    const y = be.contiguous(be.permute(be.reshape(y2, [N, Ho, Wo, O]), [0, 3, 1, 2]));
    return { y, cols };
  });
}

export function conv2d(x: Tensor, w: Tensor, options: Conv2dOptions = {}): Tensor {
  const s = options.stride ?? 1;
  const p = options.padding ?? 0;
  if (!Number.isInteger(s) || s < 1 || !Number.isInteger(p) || p < 0)
    throw new InvalidArgumentError(`conv2d: stride must be ≥ 1 and padding ≥ 0 (integers), got ${s}, ${p}`);
  if (x.rank !== 4 || w.rank !== 4 || x.shape[1] !== w.shape[1] || w.shape[2] !== w.shape[3]) {
    throw new ShapeMismatchError(
      `conv2d expects x [N, C, H, W] and w [O, C, k, k], got [${x.shape.join(', ')}] and [${w.shape.join(', ')}]`,
      [x.shape, w.shape],
    );
  }
  const k = w.shape[2]!;
  const [, , H, W] = x.shape as [number, number, number, number];
  if (H + 2 * p < k || W + 2 * p < k)
    throw new ShapeMismatchError(`conv2d: kernel ${k} is larger than the padded input ${H + 2 * p}×${W + 2 * p}`, [
      x.shape,
      w.shape,
    ]);
  let cols: Tensor | null = null; // im2col columns saved for dW, tracked like any tensor
  const out = record(
    'conv2d',
    [x, w],
    (be, [xv, wv]) => {
      const xp =
        p > 0
          ? be.pad(xv!, [
              [0, 0],
              [0, 0],
              [p, p],
              [p, p],
            ])
          : xv!;
      try {
        const r = convPadded(be, xp, wv!, s);
        cols = new Tensor(be, r.cols);
        return r.y;
      } finally {
        if (xp !== xv) be.free(xp);
      }
    },
    (be, g, [xv, wv], _out, needs) =>
      withTemps(be, (t) => {
        const [N, O, Ho, Wo] = g.shape as [number, number, number, number];
        const C = xv!.shape[1]!;
        // dW = dyᵀ · cols: [O, N·Ho·Wo] × [N·Ho·Wo, C·k·k]
        const gRows = t(be.contiguous(be.permute(g, [0, 2, 3, 1]))); // [N, Ho, Wo, O]
        const gm = be.reshape(gRows, [N * Ho * Wo, O]);
        const dw = be.reshape(be.matmul(be.permute(gm, [1, 0]), cols!.value), [O, C, k, k]);
        if (!needs[0]) return [null, dw]; // e.g. the first layer: no gradient for the input images
        // dx by col2im: dcols = dy · W ([N·Ho·Wo, O] × [O, C·k·k]) holds each window's gradient, and
        // kernel tap (kh, kw) adds its block at input rows kh + s·i, columns kw + s·j. Taps of one stride
        // phase (kh mod s, kw mod s) land on the same s-strided sub-grid, shifted by (⌊kh/s⌋, ⌊kw/s⌋): they
        // are summed there (k² small pads and adds), then the s² phase grids are interleaved into the
        // padded input's gradient. (It replaces the convolution of the zero-dilated dy, a product about
        // s²·(Hp/Ho)² larger that mostly multiplied zeros.)
        const wm = be.reshape(t(be.contiguous(wv!)), [O, C * k * k]);
        const dcols = t(be.matmul(gm, wm)); // [N·Ho·Wo, C·k·k]
        // [N, C, k, k, Ho, Wo]
        const taps = t(be.contiguous(be.permute(be.reshape(dcols, [N, Ho, Wo, C, k, k]), [0, 3, 4, 5, 1, 2])));
        const Hp = H + 2 * p;
        const Wp = W + 2 * p;
        const [Hq, Wq] = [Math.ceil(Hp / s), Math.ceil(Wp / s)]; // one phase's sub-grid
        const accumulate = (acc: NDArray | null, x: NDArray): NDArray => {
          if (!acc) return x;
          const sum = be.add(acc, x);
          be.free(acc);
          be.free(x);
          return sum;
        };
        let dxp: NDArray | null = null; // [N, C, Hq·s, Wq·s]
        for (let ph = 0; ph < Math.min(s, k); ph++) {
          for (let pw = 0; pw < Math.min(s, k); pw++) {
            let phase: NDArray | null = null; // [N, C, Hq, Wq]
            for (let kh = ph; kh < k; kh += s) {
              for (let kw = pw; kw < k; kw += s) {
                const [i0, j0] = [(kh - ph) / s, (kw - pw) / s];
                const tap = be.reshape(
                  be.shrink(taps, [
                    [0, N],
                    [0, C],
                    [kh, kh + 1],
                    [kw, kw + 1],
                    [0, Ho],
                    [0, Wo],
                  ]),
                  [N, C, Ho, Wo],
                );
                phase = accumulate(
                  phase,
                  be.pad(tap, [
                    [0, 0],
                    [0, 0],
                    [i0, Hq - i0 - Ho],
                    [j0, Wq - j0 - Wo],
                  ]),
                );
                if (tap.buffer !== taps.buffer) be.free(tap); // reshape had to copy
              }
            }
            if (s === 1) {
              dxp = phase;
              continue;
            }
            // Interleave: row i of the phase grid goes to row ph + s·i.
            const lifted = be.reshape(phase!, [N, C, Hq, 1, Wq, 1]);
            const placed = be.pad(lifted, [
              [0, 0],
              [0, 0],
              [0, 0],
              [ph, s - 1 - ph],
              [0, 0],
              [pw, s - 1 - pw],
            ]);
            if (lifted.buffer !== phase!.buffer) be.free(lifted);
            be.free(phase!);
            dxp = accumulate(dxp, be.reshape(placed, [N, C, Hq * s, Wq * s]));
          }
        }
        t(dxp!);
        const dx = be.contiguous(
          be.shrink(dxp!, [
            [0, N],
            [0, C],
            [p, p + H],
            [p, p + W],
          ]),
        );
        return [dx, dw];
      }),
    () => {
      (cols as Tensor | null)?.dispose();
      cols = null;
    },
  );
  // Without a graph the saved columns are not needed.
  if (!out.node) (cols as Tensor | null)?.dispose();
  return out;
}
