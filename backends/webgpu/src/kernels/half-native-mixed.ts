/**
 * Elementwise ops on the `shader-f16` path outside the float16-only contiguous kernels of half-native.ts: operands
 * that mix float16 and float32 (the float32 product plus the float16 bias of a float16 Linear on the tensor cores,
 * into float32), a float32 or bool output (comparisons), or a broadcast operand (float16 attention scores times a
 * float16 scalar into float16): four elements per invocation, each operand read as one vec4<f16> or vec4<f32> —
 * contiguous from its offset ('vec'), a row of `row` elements repeated along the output ('row': [rows, n] + [n];
 * vec4 `idx % (row / 4)` of the row), or one element splatted ('scalar': every stride 0). The output is
 * contiguous: vec4<f16>, vec4<f32> or vec4<i32> (bool).
 *
 * Each element is computed with the expressions of the one-element kernel (elementwiseNativeWgsl in
 * half-native.ts), so the results are the same bit for bit: float16 operands converted exactly (`f32(h)`), the op
 * in f32 (elementwise.ts's expressions), the result rounded with `to_h` only where the output is float16; add,
 * sub and mul of float16 operands into float16 in f16 itself (computesInF16).
 *
 * Params as elementwise.ts with R = 1: p(0) the count (a multiple of 4), p(1) the row length in vec4s ('row'
 * operands), p(2), p(3) the operands' element offsets (multiples of 4 but for 'scalar' operands).
 */
import type { BinaryOp, DType, UnaryOp } from '@polyhal/hal';
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude } from '../layout.js';
import { binaryExpr, elementwiseHelpers, elementwiseWords, unaryExpr } from './elementwise.js';
import type { HalfOperands } from './half.js';
import { computesInF16, F16_NATIVE_PRELUDE, F16_NATIVE_WGSL } from './half-native.js';

/** How an operand is read: a contiguous vec4, a vec4 of a repeated row, or one element splatted. */
export type MixedLoad = 'vec' | 'row' | 'scalar';

const SIGN: Partial<Record<string, string>> = { add: '+', sub: '-', mul: '*' };

/** The WGSL scalar type of the output. */
const outType = (outDtype: DType, half: boolean): string => (half ? 'f16' : outDtype === 'float32' ? 'f32' : 'i32');

/**
 * The kernel of `op` (`arity` operands, float16 where `half.inputs`), the output float16 where `half.out`, else of
 * `outDtype` (float32; bool as i32 for the comparisons); `loads`: how each operand is read.
 */
export function elementwiseNativeMixedWgsl(
  op: UnaryOp | BinaryOp,
  arity: 1 | 2,
  outDtype: DType,
  half: HalfOperands,
  loads: readonly MixedLoad[],
): string {
  const names = arity === 1 ? ['a'] : ['a', 'b'];
  const inF16 = computesInF16(op, arity, half);
  const f = arity === 1 ? unaryExpr(op as UnaryOp, 'float32') : binaryExpr(op as BinaryOp, 'float32');
  const expr = arity === 1 ? `select(${f}, x, is_nan(x))` : f;
  const value = inF16 ? `x ${SIGN[op]!} y` : half.out ? `to_h(${expr})` : expr;
  const t = (k: number): string => (half.inputs[k] ? 'f16' : 'f32');
  const ins = names.map((n, k) => {
    const elem = loads[k] === 'scalar' ? t(k) : `vec4<${t(k)}>`;
    return `@group(0) @binding(${k + 1}) var<storage, read> ${n}: array<${elem}>;`;
  });
  const at = (n: string, k: number): string =>
    loads[k] === 'scalar'
      ? `${n}[u32(p(${2 + k}u))]`
      : loads[k] === 'row'
        ? `${n}[(u32(p(${2 + k}u)) >> 2u) + idx % u32(p(1u))]`
        : `${n}[(u32(p(${2 + k}u)) >> 2u) + idx]`;
  const vals = names.map((n, k) => `let ${n}v = ${at(n, k)};`).join(' ');
  // lane c of operand k as the one-element kernel loads it: f32(h) for a float16 operand unless computed in f16
  const lane = (n: string, k: number, c: number): string => {
    const v = loads[k] === 'scalar' ? `${n}v` : `${n}v[${c}]`;
    return half.inputs[k] && !inF16 ? `f32(${v})` : v;
  };
  const lanes = [0, 1, 2, 3].map(
    (c) => `{ ${names.map((n, k) => `let ${'xy'[k]} = ${lane(n, k, c)};`).join(' ')} r[${c}] = ${value}; }`,
  );
  const o = outType(outDtype, half.out);
  const helpers = inF16 ? '' : elementwiseHelpers(f);
  return `${F16_NATIVE_PRELUDE}${paramsPrelude(elementwiseWords(1))}${helpers}${F16_NATIVE_WGSL}
${ins.join('\n')}
@group(0) @binding(${names.length + 1}) var<storage, read_write> out: array<vec4<${o}>>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx * 4u >= u32(p(0u))) { return; }
  ${vals}
  var r: vec4<${o}>;
  ${lanes.join('\n  ')}
  out[idx] = r;
}`;
}
