/**
 * Text form of a tensor's values, as NumPy and PyTorch print them: nested brackets, one row per line,
 * every element padded to one width; more than 1,000 elements are summarized by the first and last 3
 * along each dim with `...` between (NumPy's threshold and edgeitems). float32 values print as
 * PyTorch does: `1.` when every value is an integer, four decimals otherwise; scientific notation when
 * a magnitude reaches 1e8, or when non-integer magnitudes span more than 1e3 or fall below 1e-4
 * (float16 and float64 alike); int32, int8 and uint8 values as integers, bool
 * as true/false.
 */
import type { DType } from '@polyhal/hal';

/** More elements than this are summarized. */
export const PRINT_THRESHOLD = 1000;
/** Elements kept at each end of a summarized dim. */
export const PRINT_EDGE_ITEMS = 3;

function numberFormat(values: ArrayLike<number>, dtype: DType): (v: number) => string {
  const special = (v: number): string | null =>
    Number.isNaN(v) ? 'nan' : v === Infinity ? 'inf' : v === -Infinity ? '-inf' : null;
  if (dtype === 'bool') return (v) => (v ? 'true' : 'false');
  if (dtype !== 'float32' && dtype !== 'float16' && dtype !== 'float64') return (v) => String(v);
  let allInt = true;
  let maxAbs = 0;
  let minAbs = Infinity;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (!Number.isFinite(v)) continue;
    if (!Number.isInteger(v)) allInt = false;
    const a = Math.abs(v);
    maxAbs = Math.max(maxAbs, a);
    if (a > 0) minAbs = Math.min(minAbs, a);
  }
  const scientific = maxAbs >= 1e8 || (minAbs !== Infinity && (minAbs < 1e-4 || maxAbs / minAbs > 1e3) && !allInt);
  return (v) => {
    const s = special(v);
    if (s !== null) return s;
    if (scientific) return v.toExponential(4);
    if (allInt) return `${Object.is(v, -0) ? '-0' : v.toFixed(0)}.`;
    return v.toFixed(4);
  };
}

/** The indices shown along a dim of size n (with -1 marking the `...`). */
function shown(n: number, summarize: boolean): number[] {
  if (!summarize || n <= 2 * PRINT_EDGE_ITEMS) return Array.from({ length: n }, (_, i) => i);
  const head = Array.from({ length: PRINT_EDGE_ITEMS }, (_, i) => i);
  const tail = Array.from({ length: PRINT_EDGE_ITEMS }, (_, i) => n - PRINT_EDGE_ITEMS + i);
  return [...head, -1, ...tail];
}

/**
 * values: row-major, shape's size → the nested-bracket text (`indent` spaces precede continuation
 * lines, so the text can follow a prefix such as `tensor(`).
 */
export function formatValues(values: ArrayLike<number>, shape: readonly number[], dtype: DType, indent = 0): string {
  const size = shape.reduce((p, d) => p * d, 1);
  const summarize = size > PRINT_THRESHOLD;
  const strides = shape.map((_, i) => shape.slice(i + 1).reduce((p, d) => p * d, 1));
  // The elements that will be printed, for the common format and width.
  const picked: number[] = [];
  const collect = (dim: number, base: number): void => {
    if (dim === shape.length) {
      picked.push(values[base]!);
      return;
    }
    for (const i of shown(shape[dim]!, summarize)) if (i >= 0) collect(dim + 1, base + i * strides[dim]!);
  };
  collect(0, 0);
  const fmt = numberFormat(picked, dtype);
  const width = picked.reduce((w, v) => Math.max(w, fmt(v).length), 0);
  const cell = (v: number): string => fmt(v).padStart(width);
  const render = (dim: number, base: number): string => {
    if (dim === shape.length) return cell(values[base]!);
    const parts = shown(shape[dim]!, summarize).map((i) => (i < 0 ? '...' : render(dim + 1, base + i * strides[dim]!)));
    const last = dim === shape.length - 1;
    const pad = ' '.repeat(indent + dim + 1);
    const sep = last ? ', ' : `,${'\n'.repeat(shape.length - dim - 1)}${pad}`;
    return `[${parts.join(sep)}]`;
  };
  return render(0, 0);
}
