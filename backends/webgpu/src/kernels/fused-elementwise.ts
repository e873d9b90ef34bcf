/**
 * fusedElementwiseKernel's WGSL: a chain of elementwise steps (hal's ElementwiseStep) as one generated
 * function `chain(v, q0, q1, ...)` applied per element, from the same per-op expressions as the separate kernels
 * (elementwise.ts: unary ops with their NaN pass-through, binary ops with the step's number read from the
 * params, or with array operand j's element `qj`), so that adding an op to those tables adds it here. One
 * invocation per element, or four with vec4 loads and stores (the plan of elementwise-vec4.ts over x and every
 * array operand) where the views allow.
 *
 * Params: n, 0, then the offsets of x and of each array operand (`head` words: at least 4, so that a chain
 * without arrays has the unary kernels' layout), the coalesced shape and each operand's strides (R words each),
 * then one word per binary step with a number: its bits. Bindings: params, x (`a`), the arrays (`b0`, `b1`,
 * ...), out.
 */
import type { ElementwiseStep } from '@polyhal/hal';
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude, stridedOffsets } from '../layout.js';
import { binaryExpr, elementwiseHelpers, unaryExpr } from './elementwise.js';
import type { Vec4Plan } from './elementwise-vec4.js';

/** The array operands of a chain. */
export const arrayCount = (steps: readonly ElementwiseStep[]): number => steps.filter((s) => 'array' in s).length;

/** Header words (n, 0, the operands' offsets) of a chain with `k` arrays. */
export const fusedHead = (k: number): number => Math.max(4, 3 + k);

/** Params words before the numbers: header, shape, strides of x and the arrays. */
export const fusedDimsEnd = (k: number, R: number): number => fusedHead(k) + (2 + k) * R;

/** Params words of a chain over R dimension slots. */
const fusedWords = (steps: readonly ElementwiseStep[], R: number): number =>
  fusedDimsEnd(arrayCount(steps), R) + steps.filter((s) => 'scalar' in s).length;

/** The pipeline key's part naming the chain (ops and operand order; the numbers are params). */
export const fusedKey = (steps: readonly ElementwiseStep[]): string =>
  steps
    .map((s) =>
      'scalar' in s
        ? `${s.op}.${s.scalarFirst ? 'sx' : 'xs'}`
        : 'array' in s
          ? `${s.op}.${s.arrayFirst ? 'ax' : 'xa'}`
          : s.op,
    )
    .join(',');

/** `fn chain(v0: f32, q0: f32, ...) -> f32`: the steps in order; numbers from param `first + k`. */
export function chainFn(steps: readonly ElementwiseStep[], first: number): { fn: string; exprs: string } {
  let k = first;
  let j = 0;
  const exprs: string[] = [];
  const body = steps.map((s) => {
    if ('scalar' in s || 'array' in s) {
      const f = binaryExpr(s.op, 'float32');
      exprs.push(f);
      const c = 'scalar' in s ? `bitcast<f32>(p(${k++}u))` : `q${j++}`;
      const swap = 'scalar' in s ? s.scalarFirst : s.arrayFirst;
      return swap ? `{ let x = ${c}; let y = v; v = ${f}; }` : `{ let x = v; let y = ${c}; v = ${f}; }`;
    }
    const f = unaryExpr(s.op, 'float32');
    exprs.push(f);
    return `{ let x = v; v = select(${f}, x, is_nan(x)); }`;
  });
  const args = ['v0: f32', ...Array.from({ length: j }, (_, q) => `q${q}: f32`)].join(', ');
  return {
    fn: `fn chain(${args}) -> f32 {\n  var v = v0;\n  ${body.join('\n  ')}\n  return v;\n}\n`,
    exprs: exprs.join(' '),
  };
}

/** The operands' names: x, then the arrays. */
const names = (k: number): string[] => ['a', ...Array.from({ length: k }, (_, j) => `b${j}`)];

/** Bindings: x and the arrays read, out written (`t`: the element type, f32 or vec4<f32>). */
function bindings(k: number, t: string): string {
  const ins = names(k).map((n, j) => `@group(0) @binding(${j + 1}) var<storage, read> ${n}: array<${t}>;`);
  return `${ins.join('\n')}\n@group(0) @binding(${k + 2}) var<storage, read_write> out: array<${t}>;`;
}

/** Operand offsets of flat index `i`: contiguous from their offsets, or unravelled over the coalesced dims. */
function offsets(k: number, contig: boolean, R: number, splat?: readonly boolean[]): string {
  const ns = names(k);
  const head = fusedHead(k);
  if (contig) return ns.map((n, j) => `let i${n} = p(${2 + j}u)${splat?.[j] ? '' : ' + i32(i)'};`).join(' ');
  return stridedOffsets(
    ns.map((n) => `i${n}`),
    head,
    ns.map((_, j) => head + (j + 1) * R),
    ns.map((_, j) => 2 + j),
    R,
  );
}

/** One element per invocation; `contig`: x and every array contiguous from their offsets (no unravel). */
export function fusedWgsl(steps: readonly ElementwiseStep[], contig: boolean, R: number): string {
  const k = arrayCount(steps);
  const { fn, exprs } = chainFn(steps, fusedDimsEnd(k, R));
  const args = names(k).map((n) => `${n}[i${n}]`);
  return `${paramsPrelude(fusedWords(steps, R))}${elementwiseHelpers(exprs)}${fn}
${bindings(k, 'f32')}
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(0u))) { return; }
  let i = idx;
  ${offsets(k, contig, R)}
  out[idx] = chain(${args.join(', ')});
}`;
}

/** Four elements per invocation (vec4 loads and stores; a broadcast operand's element splatted). */
export function fusedVec4Wgsl(steps: readonly ElementwiseStep[], plan: Vec4Plan): string {
  const k = arrayCount(steps);
  const { fn, exprs } = chainFn(steps, fusedDimsEnd(k, plan.R));
  const ns = names(k);
  const loads = ns.map((n, j) =>
    plan.splat[j] ? `let ${n}v = vec4<f32>(${n}[i${n} / 4][i${n} % 4]);` : `let ${n}v = ${n}[i${n} / 4];`,
  );
  const comps = [0, 1, 2, 3].map((c) => `o[${c}] = chain(${ns.map((n) => `${n}v[${c}]`).join(', ')});`);
  return `${paramsPrelude(fusedWords(steps, plan.R))}${elementwiseHelpers(exprs)}${fn}
${bindings(k, 'vec4<f32>')}
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx * 4u >= u32(p(0u))) { return; }
  let i = idx * 4u;
  ${offsets(k, plan.contig, plan.R, plan.splat)}
  ${loads.join('\n  ')}
  var o: vec4<f32>;
  ${comps.join('\n  ')}
  out[idx] = o;
}`;
}
