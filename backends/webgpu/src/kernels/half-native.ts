/**
 * WGSL for float16 arrays (binary16, 2 bytes per element: kernels/half.ts) on the `shader-f16` path: operands are
 * bound as `array<f16>`, `array<vec2<f16>>` or `array<vec4<f16>>` and loaded as f16 — no integer decoding of
 * words. What is computed in f16 and what in f32 keeps the results of the emulated kernels (half.ts) bit for bit:
 *
 * - `add`, `sub`, `mul` of two float16 operands into float16 run in f16 (vector arithmetic on vec4<f16>): IEEE
 *   f16 arithmetic is correctly rounded, and the float32 result rounded to float16 is the same value (a product
 *   of two halves is exact in float32; a sum rounds twice, innocuously: 24 ≥ 2·11 + 2). WGSL promises correct
 *   rounding for them but lets implementations flush subnormals and assume no infinities: half-native-check.ts
 *   tries the device's f16 arithmetic on such operands at creation.
 * - every other op (div and sqrt included: WGSL bounds f16 division by 2.5 ulp and sqrt by its inverseSqrt, not
 *   correct rounding) converts each f16 operand to f32 (`f32(h)`: exact), computes in f32 with the expressions
 *   of elementwise.ts and rounds once to f16 with `to_h`: the hardware conversion `f16(v)` for finite values
 *   below 65520, whose rounding the check compares with nearest-even, subnormals included; ±Inf from 65520 and
 *   NaN decided on the bits (WGSL leaves f16() of them indeterminate).
 * - neg, abs and relu of contiguous operands (the 8-wide kernel) work on the sign bits of the words: exact.
 * - reductions read f16 and accumulate in f32 (nativeReduceWgsl: the float32 kernel of reduce.ts on f16 loads).
 */
import type { BinaryOp, DType, UnaryOp } from '@polyhal/hal';
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude } from '../layout.js';
import { binaryExpr, elementwiseHelpers, elementwiseWords, unaryExpr } from './elementwise.js';
import { type HalfOperands, operandOffsets } from './half.js';

/** The binary ops computed in f16 itself (correctly rounded in IEEE f16, the same value as float32 then rounded). */
export const NATIVE_F16_OPS: ReadonlySet<string> = new Set(['add', 'sub', 'mul']);

const NATIVE_F16_SIGN: Partial<Record<BinaryOp, string>> = { add: '+', sub: '-', mul: '*' };

/**
 * `enable f16;` and to_h: an f32 → the f16 nearest to it (ties to even; ±Inf from 65520; NaN → quiet NaN with
 * its sign and top payload bits, as kernels/half.ts's f16_bits).
 */
export const F16_NATIVE_PRELUDE = `enable f16;
`;

export const F16_NATIVE_WGSL = `
fn to_h(v: f32) -> f16 {
  let u = bitcast<u32>(v);
  let a = u & 0x7fffffffu;
  if (a >= 0x477ff000u) {
    let s = (u >> 16u) & 0x8000u;
    return bitcast<vec2<f16>>(select(s | 0x7c00u, s | 0x7e00u | ((a >> 13u) & 0x3ffu), a > 0x7f800000u)).x;
  }
  return f16(v);
}
`;

/**
 * half-check.ts's interface (f16_bits: f32 bits → binary16 bits; f16_value: binary16 bits → f32) on the native
 * conversions, to check them with checkHardwareFloat16 as the kernels use them.
 */
export const F16_NATIVE_CONVERSIONS = `${F16_NATIVE_PRELUDE}${F16_NATIVE_WGSL}
fn f16_bits(u: u32) -> u32 { return bitcast<u32>(vec2<f16>(to_h(bitcast<f32>(u)), 0.0h)) & 0xffffu; }
fn f16_value(h: u32) -> f32 { return f32(bitcast<vec2<f16>>(h).x); }
`;

const T = (d: DType): string => (d === 'float32' ? 'f32' : 'i32');

/** The f32 expression of `op` on x (and y), NaN kept for unary ops as elementwise.ts does. */
function f32Expr(op: UnaryOp | BinaryOp, arity: 1 | 2): { f: string; expr: string } {
  const f = arity === 1 ? unaryExpr(op as UnaryOp, 'float32') : binaryExpr(op as BinaryOp, 'float32');
  return { f, expr: arity === 1 ? `select(${f}, x, is_nan(x))` : f };
}

/** Whether `op` of `arity` with every operand and the output float16 runs in f16 arithmetic. */
export const computesInF16 = (op: string, arity: number, half: HalfOperands): boolean =>
  arity === 2 && NATIVE_F16_OPS.has(op) && half.out && half.inputs.every(Boolean);

/**
 * Unary or binary op over any strided operands, one element per invocation: float16 operands bound as
 * array<f16> (the others f32), the output array<f16> when float16, else the op's f32 or i32 (comparisons).
 * Params as elementwise.ts.
 */
export function elementwiseNativeWgsl(
  op: UnaryOp | BinaryOp,
  arity: 1 | 2,
  outDtype: DType,
  half: HalfOperands,
  contig: boolean,
  R: number,
): string {
  const names = arity === 1 ? ['a'] : ['a', 'b'];
  const inF16 = computesInF16(op, arity, half);
  const { f, expr } = f32Expr(op, arity);
  const index = operandOffsets(names, contig, R);
  const vars = ['x', 'y'];
  const loads = names
    .map((n, k) => `let ${vars[k]} = ${half.inputs[k] && !inF16 ? `f32(${n}[i${n}])` : `${n}[i${n}]`};`)
    .join(' ');
  const value = inF16 ? `x ${NATIVE_F16_SIGN[op as BinaryOp]!} y` : half.out ? `to_h(${expr})` : expr;
  const ins = names.map(
    (n, k) => `@group(0) @binding(${k + 1}) var<storage, read> ${n}: array<${half.inputs[k] ? 'f16' : 'f32'}>;`,
  );
  const outT = half.out ? 'f16' : T(outDtype);
  const helpers = inF16 ? '' : elementwiseHelpers(f);
  return `${F16_NATIVE_PRELUDE}${paramsPrelude(elementwiseWords(R))}${helpers}${F16_NATIVE_WGSL}
${ins.join('\n')}
@group(0) @binding(${names.length + 1}) var<storage, read_write> out: array<${outT}>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx >= u32(p(0u))) { return; }
  let i = idx;
  ${index}
  ${loads}
  out[i] = ${value};
}`;
}

/**
 * Unary ops of the 8-wide kernel on the binary16 bits of each word (exact: the f32 kernel's results, which change
 * the sign bit only): neg flips the signs, abs clears them, relu zeroes the negative halves (−0 included; NaN kept).
 */
const WORD_OPS: Partial<Record<string, string>> = {
  neg: 'av ^ vec4<u32>(0x80008000u)',
  abs: 'av & vec4<u32>(0x7fff7fffu)',
  relu: 'vec4<u32>(relu2(av.x), relu2(av.y), relu2(av.z), relu2(av.w))',
};

/**
 * relu of the two halves of a word, branch-free: a half whose sign is set and which is not NaN ((h & 0x7fff) ≤
 * 0x7c00) becomes +0. Adding 0x03ff to each half's low 15 bits carries into its bit 15 exactly when it is NaN (no
 * carry crosses halves: 0x7fff + 0x03ff < 0x10000); (bits >> 15) · 0xffff spreads each kept sign bit over its half.
 * On an H200 13% faster at 64M elements than a loop over the halves (benches/probes/webgpu-f16-elementwise.ts).
 */
const RELU2_WGSL = `
fn relu2(w: u32) -> u32 {
  let nan = ((w & 0x7fff7fffu) + 0x03ff03ffu) & 0x80008000u;
  let neg = w & 0x80008000u & ~nan;
  return w & ~((neg >> 15u) * 0xffffu);
}
`;

/**
 * The contiguous case: every operand and the output float16, contiguous; `W` elements per invocation: 8 as one
 * vec4<u32> per operand, each word bitcast to a vec2<f16> (W = 8: offsets and the count multiples of 8; 16-byte
 * loads, as float32's vec4 kernels), 4 as one vec4<f16> (offsets and the count multiples of 4) or 2 as one
 * vec2<f16> (even offsets; past an odd count the last pair's high half is padding). Params as
 * elementwiseHalfWordsWgsl (half.ts). neg, abs and relu in the 8-wide kernel work on the bits (WORD_OPS).
 */
export function elementwiseNativeVecWgsl(op: UnaryOp | BinaryOp, arity: 1 | 2, W: 2 | 4 | 8): string {
  const word = W === 8 && arity === 1 ? WORD_OPS[op] : undefined;
  if (word) {
    return `${F16_NATIVE_PRELUDE}${paramsPrelude(elementwiseWords(1))}${RELU2_WGSL}
@group(0) @binding(1) var<storage, read> a: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4<u32>>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx * 8u >= u32(p(0u))) { return; }
  let av = a[(u32(p(2u)) >> 3u) + idx];
  out[idx] = ${word};
}`;
  }
  const names = arity === 1 ? ['a'] : ['a', 'b'];
  const t = W === 8 ? 'vec4<u32>' : `vec${W}<f16>`;
  const shift = W === 8 ? 3 : W === 4 ? 2 : 1;
  const half: HalfOperands = { inputs: names.map(() => true), out: true };
  const loads = names.map((n, k) => `let ${n}v = ${n}[(u32(p(${2 + k}u)) >> ${shift}u) + idx];`).join('\n  ');
  // the f16 values of unit `u` of operand n (a vec2<f16> or vec4<f16>), and the output unit from them
  const unit = (n: string, u: number): string => (W === 8 ? `bitcast<vec2<f16>>(${n}v[${u}])` : `${n}v`);
  const store = (u: number, v: string): string => (W === 8 ? `o[${u}] = bitcast<u32>(${v});` : `o = ${v};`);
  const units = W === 8 ? 4 : 1;
  const per = W === 8 ? 2 : W;
  let body = '';
  let helpers = '';
  const native = computesInF16(op, arity, half);
  const { f, expr } = f32Expr(op, arity);
  if (!native) helpers = elementwiseHelpers(f);
  for (let u = 0; u < units; u++) {
    if (native) {
      body += `${store(u, `${unit('a', u)} ${NATIVE_F16_SIGN[op as BinaryOp]!} ${unit('b', u)}`)}\n  `;
      continue;
    }
    const lanes: string[] = [];
    for (let c = 0; c < per; c++) {
      const xs = names.map((n, k) => `let ${'xy'[k]} = f32(${n}h[${c}]);`).join(' ');
      lanes.push(`{ ${xs} r[${c}] = to_h(${expr}); }`);
    }
    body += `{ ${names.map((n) => `let ${n}h = ${unit(n, u)};`).join(' ')} var r: vec${per}<f16>;
    ${lanes.join('\n    ')}
    ${store(u, 'r')} }\n  `;
  }
  return `${F16_NATIVE_PRELUDE}${paramsPrelude(elementwiseWords(1))}${helpers}${F16_NATIVE_WGSL}
${names.map((n, k) => `@group(0) @binding(${k + 1}) var<storage, read> ${n}: array<${t}>;`).join('\n')}
@group(0) @binding(${names.length + 1}) var<storage, read_write> out: array<${t}>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx * ${W}u >= u32(p(0u))) { return; }
  ${loads}
  var o: ${t};
  ${body}out[idx] = o;
}`;
}

/**
 * A float32 reduction kernel of reduce.ts (`reduceWgsl(op, 'float32', …)`) made to read its input as array<f16>:
 * each element converted exactly to f32 (`f32(h)`) where the float32 kernel reads its bits; everything after
 * (the f32 accumulation, the flags of NaN and ±Inf, the f32 output) unchanged.
 */
export function nativeReduceWgsl(float32Kernel: string): string {
  const binding = '@group(0) @binding(1) var<storage, read> x: array<u32>;';
  const load = 'let bits = x[off]; let v = bitcast<f32>(bits);';
  if (!float32Kernel.includes(binding) || !float32Kernel.includes(load))
    throw new Error('webgpu: the float32 reduction kernel no longer has the form nativeReduceWgsl rewrites');
  return `${F16_NATIVE_PRELUDE}${float32Kernel
    .replace(binding, '@group(0) @binding(1) var<storage, read> x: array<f16>;')
    .replaceAll(load, 'let v = f32(x[off]); let bits = bitcast<u32>(v);')}`;
}
