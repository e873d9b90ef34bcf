/**
 * ONNX MaxPool as HAL views: the input padded with −Inf (explicit pads, SAME_UPPER/SAME_LOWER,
 * VALID, and the extra end padding ceil_mode needs), then one spatial axis at a time a window view
 * [outer, out, kernel, inner] (asStridedView: stride·inner between windows, dilation·inner inside
 * one) reduced with max. A box maximum is separable, so the result is exact; no view has more than
 * 4 dimensions.
 */
import { asStridedView, type NDArray } from '@polyhal/hal';
import { NotExpressible, type OpMapping } from './table.js';

const prod = (xs: readonly number[]): number => xs.reduce((p, d) => p * d, 1);

const maxPool: OpMapping = {
  contract: { kind: 'exact' },
  plan: (ctx) => {
    const shape = ctx.inputShapes[0]!;
    const sp = shape.length - 2;
    const kernel = ctx.attrs.ints('kernel_shape');
    if (sp < 1 || !kernel || kernel.length !== sp)
      throw new NotExpressible('attribute', 'MaxPool kernel_shape missing or of the wrong rank');
    const strides = ctx.attrs.ints('strides') ?? kernel.map(() => 1);
    const dilations = ctx.attrs.ints('dilations') ?? kernel.map(() => 1);
    const autoPad = ctx.attrs.string('auto_pad', 'NOTSET');
    const ceil = ctx.attrs.int('ceil_mode', 0) !== 0;
    const pads = ctx.attrs.ints('pads') ?? Array<number>(2 * sp).fill(0);
    ctx.attrs.int('storage_order', 0); // orders the Indices output only (int64: not expressible anyway)
    if (ctx.node.outputs.length > 1 && ctx.node.outputs[1] !== '') throw new NotExpressible('dtype', 'dtype int64');
    if (
      ![strides, dilations].every((a) => a.length === sp && a.every((v) => Number.isInteger(v) && v >= 1)) ||
      pads.length !== 2 * sp ||
      pads.some((p) => p < 0)
    ) {
      throw new NotExpressible('attribute', 'MaxPool strides, dilations or pads of the wrong length or sign');
    }
    const before: number[] = [];
    const after: number[] = [];
    const out: number[] = [];
    for (let i = 0; i < sp; i++) {
      const [n, k, s, d] = [shape[2 + i]!, kernel[i]!, strides[i]!, dilations[i]!];
      const eff = (k - 1) * d + 1;
      let pb: number;
      let pe: number;
      let o: number;
      if (autoPad === 'SAME_UPPER' || autoPad === 'SAME_LOWER') {
        o = Math.ceil(n / s);
        const total = Math.max(0, (o - 1) * s + eff - n);
        pb = autoPad === 'SAME_UPPER' ? Math.floor(total / 2) : Math.ceil(total / 2);
        pe = total - pb;
      } else if (autoPad === 'VALID') {
        [pb, pe] = [0, 0];
        o = Math.floor((n - eff) / s) + 1;
      } else if (autoPad === 'NOTSET') {
        [pb, pe] = [pads[i]!, pads[i + sp]!];
        o = (ceil ? Math.ceil : Math.floor)((n + pb + pe - eff) / s) + 1;
      } else throw new NotExpressible('attribute', `MaxPool auto_pad '${autoPad}'`);
      if (o < 1) throw new NotExpressible('input', 'MaxPool with an empty output');
      pe += Math.max(0, (o - 1) * s + eff - (n + pb + pe)); // ceil_mode's last window
      before.push(pb);
      after.push(pe);
      out.push(o);
    }
    return (be, [x]) => {
      let y: NDArray = be.pad(
        x!,
        [[0, 0], [0, 0], ...before.map((b, i) => [b, after[i]!] as [number, number])],
        -Infinity,
      );
      const cur = [...y.shape];
      for (let i = 0; i < sp; i++) {
        const ax = 2 + i;
        const [outer, len, inner] = [prod(cur.slice(0, ax)), cur[ax]!, prod(cur.slice(ax + 1))];
        const c = be.contiguous(y);
        const windows = asStridedView(
          c,
          [outer, out[i]!, kernel[i]!, inner],
          [len * inner, strides[i]! * inner, dilations[i]! * inner, 1],
          c.offset,
        );
        cur[ax] = out[i]!;
        y = be.reshape(be.max(windows, 2), cur);
      }
      return [y];
    };
  },
};

export const POOL_OPS: Record<string, OpMapping> = { MaxPool: maxPool };
