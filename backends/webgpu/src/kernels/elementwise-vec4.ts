/**
 * WGSL elementwise unary and binary ops four outputs to an invocation (vec4 loads and stores): the
 * elementwise.ts kernels' expressions, applied per component, for views whose innermost coalesced dim
 * is a multiple of 4 long and where every operand either runs along it (stride 1, 16-byte aligned:
 * one vec4 load) or is broadcast across it (stride 0: one element splatted). The output positions
 * are unravelled once per four. Same params as elementwise.ts.
 *
 * Measured on lavapipe (2 shared cores), [1088, 64] float32 add: 0.15–0.25 against 0.35–0.5 ms
 * contiguous, 0.25–0.5 against 0.7–1.1 ms with a row broadcast: a software adapter pays per
 * invocation (and per bounds-checked load) more than per byte.
 */
import type { BinaryOp, DType, UnaryOp } from '@polyhal/hal';
import { coalesce, FLAT_ARGS, FLAT_INDEX, paramsPrelude, rankSlots, stridedOffsets } from '../layout.js';
import { packDims } from '../kernel-params.js';
import { binaryExpr, elementwiseWords, elementwiseHelpers, unaryExpr } from './elementwise.js';

/** dtypes stored as one 32-bit word (vec4 of f32 or i32). */
const WORD_DTYPES: readonly DType[] = ['float32', 'int32', 'bool'];

export interface Vec4Plan {
  /** Dimension slots and the params words of the shape and strides (as stridedParams). */
  R: number;
  words: number[];
  /** Per operand: broadcast across the innermost dim (one element splatted) rather than read as a vec4. */
  splat: boolean[];
  /** One coalesced dim: every operand contiguous from its offset or a single element (no unravel). */
  contig: boolean;
}

/**
 * The vec4 plan of `shape` over `operands` (strides and offsets in elements), or null when an operand's
 * innermost stride is neither 0 nor 1, a vec4 would straddle a row or be misaligned, or the dtypes are
 * not 32-bit.
 */
export function vec4Plan(
  shape: readonly number[],
  operands: { strides: readonly number[]; offset: number }[],
  dtypes: readonly DType[],
): Vec4Plan | null {
  if (!dtypes.every((d) => WORD_DTYPES.includes(d))) return null;
  const c = coalesce(
    shape,
    operands.map((o) => o.strides),
  );
  const r = c.shape.length;
  if (r === 0 || c.shape[r - 1]! % 4 !== 0) return null;
  const splat: boolean[] = [];
  for (let k = 0; k < operands.length; k++) {
    const s = c.strides[k]!;
    const inner = s[r - 1]!;
    if (inner === 0) splat.push(true);
    else if (inner === 1 && operands[k]!.offset % 4 === 0 && s.every((v, d) => d === r - 1 || v % 4 === 0))
      splat.push(false);
    else return null;
  }
  const R = rankSlots(r);
  return { R, words: packDims(c, R), splat, contig: r === 1 };
}

const T = (d: DType): string => (d === 'float32' ? 'f32' : 'i32');
const load = (name: string, at: string, splat: boolean, t: string): string =>
  splat ? `vec4<${t}>(${name}[${at} / 4][${at} % 4])` : `${name}[${at} / 4]`;

/**
 * The kernel body: four outputs, `expr` on each component (`scalars` binds x, y to component #); also the body of
 * fused-elementwise.ts's kernels.
 */
export function vec4Body(
  names: string[],
  plan: Vec4Plan,
  t: string,
  to: string,
  expr: string,
  scalars: string,
): string {
  const offsets = plan.contig
    ? names.map((n, k) => `let i${n} = p(${2 + k}u)${plan.splat[k] ? '' : ' + i32(i)'};`).join(' ')
    : stridedOffsets(
        names.map((n) => `i${n}`),
        4,
        names.map((_, k) => 4 + (k + 1) * plan.R),
        names.map((_, k) => 2 + k),
        plan.R,
      );
  const comps = [0, 1, 2, 3].map((k) => `{ ${scalars.replaceAll('#', String(k))} o[${k}] = ${expr}; }`);
  return `@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx * 4u >= u32(p(0u))) { return; }
  let i = idx * 4u;
  ${offsets}
  ${names.map((n, k) => `let ${n}v = ${load(n, `i${n}`, plan.splat[k]!, t)};`).join('\n  ')}
  var o: vec4<${to}>;
  ${comps.join('\n  ')}
  out[idx] = o;
}`;
}

export function binaryVec4Wgsl(op: BinaryOp, dtype: DType, outDtype: DType, plan: Vec4Plan): string {
  const expr = binaryExpr(op, dtype);
  const t = T(dtype);
  return `${paramsPrelude(elementwiseWords(plan.R))}${elementwiseHelpers(expr)}
@group(0) @binding(1) var<storage, read> a: array<vec4<${t}>>;
@group(0) @binding(2) var<storage, read> b: array<vec4<${t}>>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4<${T(outDtype)}>>;
${vec4Body(['a', 'b'], plan, t, T(outDtype), expr, 'let x = av[#]; let y = bv[#];')}`;
}

/** binaryScalarKernel's four-wide WGSL: x bound as `a`, the number's bits in param 3 (elementwise.ts). */
export function binaryScalarVec4Wgsl(
  op: BinaryOp,
  dtype: DType,
  outDtype: DType,
  plan: Vec4Plan,
  scalarFirst: boolean,
): string {
  const expr = binaryExpr(op, dtype);
  const t = T(dtype);
  const s = `bitcast<${t}>(p(3u))`;
  const bind = scalarFirst ? `let x = ${s}; let y = av[#];` : `let x = av[#]; let y = ${s};`;
  return `${paramsPrelude(elementwiseWords(plan.R))}${elementwiseHelpers(expr)}
@group(0) @binding(1) var<storage, read> a: array<vec4<${t}>>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4<${T(outDtype)}>>;
${vec4Body(['a'], plan, t, T(outDtype), expr, bind)}`;
}

export function unaryVec4Wgsl(op: UnaryOp, dtype: DType, plan: Vec4Plan): string {
  const f = unaryExpr(op, dtype);
  const expr = dtype === 'float32' ? `select(${f}, x, is_nan(x))` : f;
  const t = T(dtype);
  return `${paramsPrelude(elementwiseWords(plan.R))}${elementwiseHelpers(f)}
@group(0) @binding(1) var<storage, read> a: array<vec4<${t}>>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4<${t}>>;
${vec4Body(['a'], plan, t, t, expr, 'let x = av[#];')}`;
}

/** The pipeline key's part that tells plans apart. */
export const vec4Key = (plan: Vec4Plan): string =>
  `${plan.contig ? 'c' : 's'}${plan.splat.map((s) => (s ? 1 : 0)).join('')}/${plan.R}`;
