/**
 * fusedElementwiseKernel's WGSL: a chain of elementwise steps (hal's ElementwiseStep) as one generated
 * function `chain(v)` applied per element, from the same per-op expressions as the separate kernels
 * (elementwise.ts: unary ops with their NaN pass-through, binary ops with the step's number read from the
 * params), so that adding an op to those tables adds it here. One invocation per element, or four with vec4
 * loads and stores (elementwise-vec4.ts) where the view allows. Params: the unary kernels' layout
 * (elementwise.ts: n, 0, x's offset, 0, shape and strides), then one word per binary step: its number's bits.
 */
import type { ElementwiseStep } from '@polyhal/hal';
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude, stridedOffsets } from '../layout.js';
import { binaryExpr, elementwiseHelpers, elementwiseWords, unaryExpr } from './elementwise.js';
import { type Vec4Plan, vec4Body } from './elementwise-vec4.js';

/** Params words of a chain over R dimension slots: the unary layout, then one per binary step. */
const fusedWords = (steps: readonly ElementwiseStep[], R: number): number =>
  elementwiseWords(R) + steps.filter((s) => 'scalar' in s).length;

/** The pipeline key's part naming the chain (ops and operand order; the numbers are params). */
export const fusedKey = (steps: readonly ElementwiseStep[]): string =>
  steps.map((s) => ('scalar' in s ? `${s.op}.${s.scalarFirst ? 'sx' : 'xs'}` : s.op)).join(',');

/** `fn chain(v0: f32) -> f32`: the steps in order; binary step k reads its number from param `first + k`. */
function chainFn(steps: readonly ElementwiseStep[], first: number): { fn: string; exprs: string } {
  let k = first;
  const exprs: string[] = [];
  const body = steps.map((s) => {
    if (!('scalar' in s)) {
      const f = unaryExpr(s.op, 'float32');
      exprs.push(f);
      return `{ let x = v; v = select(${f}, x, is_nan(x)); }`;
    }
    const f = binaryExpr(s.op, 'float32');
    exprs.push(f);
    const c = `bitcast<f32>(p(${k++}u))`;
    return s.scalarFirst ? `{ let x = ${c}; let y = v; v = ${f}; }` : `{ let x = v; let y = ${c}; v = ${f}; }`;
  });
  return {
    fn: `fn chain(v0: f32) -> f32 {\n  var v = v0;\n  ${body.join('\n  ')}\n  return v;\n}\n`,
    exprs: exprs.join(' '),
  };
}

/** One element per invocation; `contig`: x contiguous from its offset (no unravel). */
export function fusedWgsl(steps: readonly ElementwiseStep[], contig: boolean, R: number): string {
  const { fn, exprs } = chainFn(steps, elementwiseWords(R));
  const index = contig ? 'let ia = p(2u) + i32(i);' : stridedOffsets(['ia'], 4, [4 + R], [2], R);
  return `${paramsPrelude(fusedWords(steps, R))}${elementwiseHelpers(exprs)}${fn}
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(0u))) { return; }
  let i = idx;
  ${index}
  out[idx] = chain(a[ia]);
}`;
}

/** Four elements per invocation (vec4 loads and stores). */
export function fusedVec4Wgsl(steps: readonly ElementwiseStep[], plan: Vec4Plan): string {
  const { fn, exprs } = chainFn(steps, elementwiseWords(plan.R));
  return `${paramsPrelude(fusedWords(steps, plan.R))}${elementwiseHelpers(exprs)}${fn}
@group(0) @binding(1) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4<f32>>;
${vec4Body(['a'], plan, 'f32', 'f32', 'chain(x)', 'let x = av[#];')}`;
}
