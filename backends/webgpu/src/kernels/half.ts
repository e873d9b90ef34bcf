/**
 * WGSL for float16 arrays stored in 2 bytes per element (the packedFloat16 hook, hal/src/contract/hooks.ts):
 * IEEE binary16 bits, element i in the low (i even) or high (i odd) half of u32 word i/2, the byte layout
 * of WGSL's array<f16>. Core WGSL on every adapter, shader-f16 or not: the kernels decode the bits to
 * f32 and encode f32 results back with integer operations (f16Wgsl), so that neither an adapter's
 * float conversions nor `pack2x16float`'s implementation-defined rounding decide a result — the values
 * are those of the cpu and wasm backends bit for bit, and the arithmetic is float32's.
 *
 * - Elementwise (unary, binary): one invocation per output element, two when the output is float16 (the
 *   two halves of one word: no two invocations write one word). Same params as elementwise.ts.
 * - Copy: into float32, int32 or a narrow integer dtype one invocation per element; into float16 either
 *   one invocation per destination word (a contiguous destination region: the halves outside it are kept)
 *   or, for a strided destination, one per element with atomicAnd/atomicOr on its word.
 */
import type { BinaryOp, DType, UnaryOp } from '@polyhal/hal';
import { FLAT_ARGS, FLAT_INDEX, paramsPrelude, stridedOffsets } from '../layout.js';
import { convert, copyWords } from './copy.js';
import { binaryExpr, elementwiseHelpers, elementwiseWords, unaryExpr } from './elementwise.js';

/**
 * f16_bits: float32 bits → binary16 bits, nearest, ties to even (13 fraction bits dropped; below 2^-14
 * a multiple of 2^-24; ±Inf from 65520; NaN stays a quiet NaN with its sign). f16_value: binary16 bits →
 * the exact f32, subnormals included. half_at: element i of a u32 array of halves, decoded.
 */
const F16_INTEGER_WGSL = `
fn f16_bits(u: u32) -> u32 {
  let s = (u >> 16u) & 0x8000u;
  let a = u & 0x7fffffffu;
  if (a > 0x7f800000u) { return s | 0x7e00u | ((a >> 13u) & 0x3ffu); }
  if (a >= 0x477ff000u) { return s | 0x7c00u; }
  if (a >= 0x38800000u) {
    let rem = a & 0x1fffu;
    var r = a - rem;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 0x2000u) != 0u)) { r = r + 0x2000u; }
    return s | ((r - 0x38000000u) >> 13u);
  }
  let e = a >> 23u;
  if (e < 102u) { return s; }
  let m = (a & 0x7fffffu) | 0x800000u;
  let shift = 126u - e;
  let q = m >> shift;
  let rem = m & ((1u << shift) - 1u);
  let half = 1u << (shift - 1u);
  var r = q;
  if (rem > half || (rem == half && (q & 1u) != 0u)) { r = q + 1u; }
  return s | r;
}
fn f16_value(h: u32) -> f32 {
  let s = (h & 0x8000u) << 16u;
  let e = (h >> 10u) & 0x1fu;
  let m = h & 0x3ffu;
  if (e == 0x1fu) { return bitcast<f32>(s | 0x7f800000u | (m << 13u)); }
  if (e != 0u) { return bitcast<f32>(s | ((e + 112u) << 23u) | (m << 13u)); }
  if (m == 0u) { return bitcast<f32>(s); }
  let lead = firstLeadingBit(m);
  return bitcast<f32>(s | ((lead + 103u) << 23u) | ((m << (23u - lead)) & 0x7fffffu));
}
`;

/**
 * The same two functions on the adapter's conversions, `unpack2x16float` and `pack2x16float` (core WGSL),
 * NaN and overflow still decided on the bits (WGSL leaves pack2x16float of them indeterminate). Used only
 * where half-check.ts found them to give the integer functions' results (nearest even, subnormals kept).
 */
const F16_HARDWARE_WGSL = `
fn f16_bits(u: u32) -> u32 {
  let a = u & 0x7fffffffu;
  if (a > 0x7f800000u) { return ((u >> 16u) & 0x8000u) | 0x7e00u | ((a >> 13u) & 0x3ffu); }
  if (a >= 0x477ff000u) { return ((u >> 16u) & 0x8000u) | 0x7c00u; }
  return pack2x16float(vec2<f32>(bitcast<f32>(u), 0.0)) & 0xffffu;
}
fn f16_value(h: u32) -> f32 { return unpack2x16float(h).x; }
`;

/** How float16 kernels convert: integer operations on the bits, or the adapter's conversions (checked). */
export type HalfConversions = 'integer' | 'hardware';

/** f16_bits, f16_value and half_bits (element i of a u32 array of halves, as bits) for `conv`. */
export const f16Wgsl = (conv: HalfConversions): string =>
  `${conv === 'hardware' ? F16_HARDWARE_WGSL : F16_INTEGER_WGSL}
fn half_bits(w: u32, i: i32) -> u32 { return (w >> ((u32(i) & 1u) << 4u)) & 0xffffu; }
`;

const T = (d: DType): string => (d === 'float32' ? 'f32' : 'i32');

/** Which operands and the output are float16 in 2-byte storage. */
export interface HalfOperands {
  inputs: boolean[];
  out: boolean;
}

export const halfKey = (h: HalfOperands): string =>
  `${h.inputs.map((b) => (b ? 'h' : 'w')).join('')}${h.out ? 'h' : 'w'}`;

/**
 * WGSL setting `i<name>` to each operand's element offset for output element `i`: contiguous operands from their
 * offsets (params 2, 3), else strided over R dims (shape at param 4, each operand's strides after it).
 */
export function operandOffsets(names: readonly string[], contig: boolean, R: number): string {
  return contig
    ? names.map((n, k) => `let i${n} = p(${2 + k}u) + i32(i);`).join(' ')
    : stridedOffsets(
        names.map((n) => `i${n}`),
        4,
        names.map((_, k) => 4 + (k + 1) * R),
        names.map((_, k) => 2 + k),
        R,
      );
}

/** The kernel body over output elements (two per invocation into a float16 output). */
function elementwiseBody(names: string[], half: HalfOperands, contig: boolean, R: number, expr: string): string {
  const index = operandOffsets(names, contig, R);
  const loads = names
    .map((n, k) =>
      half.inputs[k] ? `let ${n}_ = f16_value(half_bits(${n}[u32(i${n}) >> 1u], i${n}));` : `let ${n}_ = ${n}[i${n}];`,
    )
    .join(' ');
  const bind = names.length === 1 ? 'let x = a_;' : 'let x = a_; let y = b_;';
  const per = half.out ? 2 : 1;
  const store = half.out ? `r[k] = f16_bits(bitcast<u32>(${expr}));` : `out[i] = ${expr};`;
  return `@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  let n = u32(p(0u));
  if (idx * ${per}u >= n) { return; }
  var r = array<u32, 2>(0u, 0u);
  for (var k = 0u; k < ${per}u; k++) {
    let i = idx * ${per}u + k;
    if (i >= n) { break; }
    ${index}
    ${loads}
    ${bind}
    ${store}
  }
  ${half.out ? 'out[idx] = r[0] | (r[1] << 16u);' : ''}
}`;
}

function bindings(names: string[], half: HalfOperands, t: string, outT: string): string {
  const ins = names.map(
    (n, k) => `@group(0) @binding(${k + 1}) var<storage, read> ${n}: array<${half.inputs[k] ? 'u32' : t}>;`,
  );
  const slot = names.length + 1;
  const out = `@group(0) @binding(${slot}) var<storage, read_write> out: array<${half.out ? 'u32' : outT}>;`;
  return [...ins, out].join('\n');
}

/** Binary op on float16 operands (2-byte storage); `outDtype` bool (i32) for the comparisons, else float16. */
export function binaryHalfWgsl(
  op: BinaryOp,
  outDtype: DType,
  half: HalfOperands,
  contig: boolean,
  R: number,
  conv: HalfConversions,
): string {
  const expr = binaryExpr(op, 'float32');
  return `${paramsPrelude(elementwiseWords(R))}${elementwiseHelpers(expr)}${f16Wgsl(conv)}
${bindings(['a', 'b'], half, 'f32', T(outDtype))}
${elementwiseBody(['a', 'b'], half, contig, R, expr)}`;
}

/** Unary op on a float16 operand (2-byte storage) into float16. */
export function unaryHalfWgsl(
  op: UnaryOp,
  half: HalfOperands,
  contig: boolean,
  R: number,
  conv: HalfConversions,
): string {
  const f = unaryExpr(op, 'float32');
  const expr = `select(${f}, x, is_nan(x))`; // NaN in → NaN out (elementwise.ts)
  return `${paramsPrelude(elementwiseWords(R))}${elementwiseHelpers(f)}${f16Wgsl(conv)}
${bindings(['a'], half, 'f32', 'f32')}
${elementwiseBody(['a'], half, contig, R, expr)}`;
}

/** How a copy writes into a float16 destination: a whole contiguous region by words, or element by element. */
export type HalfCopyMode = 'words' | 'atomic' | 'wide';

/**
 * Copy/cast from `from` (the source's storage dtype; float16 when `srcHalf`) into `to` (the destination's
 * dtype; float16 in 2-byte storage when `mode` is 'words' or 'atomic'). Params as copy.ts.
 */
export function copyHalfWgsl(
  from: DType,
  to: DType,
  srcHalf: boolean,
  mode: HalfCopyMode,
  R: number,
  conv: HalfConversions,
): string {
  const srcT = srcHalf || from === 'float32' ? 'u32' : 'i32';
  const load = srcHalf ? 'half_bits(src[u32(is) >> 1u], is)' : 'src[is]';
  // the source's value as binary16 bits (a float16 destination) or as copy.ts's `v` (any other)
  const bits = srcHalf ? 'sv' : from === 'float32' ? 'f16_bits(sv)' : 'f16_bits(bitcast<u32>(f32(sv)))';
  const narrowTo = to === 'int8' || to === 'uint8';
  const wideV = narrowTo ? 'bitcast<u32>(f16_value(sv))' : 'f16_value(sv)';
  const srcOffsets = (i: string): string =>
    stridedOffsets(['is'], 4, [4 + R], [2], R).replace('var rem = i32(i);', `var rem = i32(${i});`);
  const prelude = `${paramsPrelude(copyWords(R))}${f16Wgsl(conv)}
@group(0) @binding(1) var<storage, read> src: array<${srcT}>;`;
  if (mode === 'words') {
    // one invocation per destination word of the region [od, od + n): halves outside it are kept
    return `${prelude}
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  let n = u32(p(0u));
  let od = u32(p(3u));
  let w = (od >> 1u) + idx;
  if (w > ((od + n - 1u) >> 1u)) { return; }
  var word = 0u;
  var keep = 0u;
  for (var k = 0u; k < 2u; k++) {
    let e = 2u * w + k;
    if (e < od || e >= od + n) { keep |= 0xffffu << (k * 16u); continue; }
    ${srcOffsets('e - od')}
    let sv = ${load};
    word |= ${bits} << (k * 16u);
  }
  if (keep != 0u) { word |= dst[w] & keep; }
  dst[w] = word;
}`;
  }
  const index = `${FLAT_INDEX}
  if (idx >= u32(p(0u))) { return; }
  let i = idx;
  ${stridedOffsets(['is', 'id'], 4, [4 + R, 4 + 2 * R], [2, 3], R)}
  let sv = ${load};`;
  if (mode === 'atomic') {
    return `${prelude}
@group(0) @binding(2) var<storage, read_write> dst: array<atomic<u32>>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${index}
  let sh = (u32(id) & 1u) << 4u;
  atomicAnd(&dst[u32(id) >> 1u], ~(0xffffu << sh));
  atomicOr(&dst[u32(id) >> 1u], ${bits} << sh);
}`;
  }
  const td = to === 'float32' ? 'f32' : 'i32';
  return `${prelude}
@group(0) @binding(2) var<storage, read_write> dst: array<${td}>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${index}
  let v = ${wideV};
  dst[id] = ${convert('float32', to)};
}`;
}

/**
 * The contiguous case: every operand and the output float16, contiguous from a word-aligned offset, `W`
 * words (2W elements) per invocation — one u32 (W = 1: even offsets) or one vec4<u32> (W = 4: offsets and
 * the count multiples of 8) loaded per operand. Past an odd count the last word's high half is padding.
 */
export function elementwiseHalfWordsWgsl(
  op: UnaryOp | BinaryOp,
  arity: 1 | 2,
  W: 1 | 4,
  conv: HalfConversions,
): string {
  const f = arity === 1 ? unaryExpr(op as UnaryOp, 'float32') : binaryExpr(op as BinaryOp, 'float32');
  const expr = arity === 1 ? `select(${f}, x, is_nan(x))` : f;
  const names = arity === 1 ? ['a'] : ['a', 'b'];
  const t = W === 4 ? 'vec4<u32>' : 'u32';
  const shift = W === 4 ? 3 : 1; // elements → index of the W-word unit
  const comp = (v: string, c: number): string => (W === 4 ? `${v}[${c}]` : v);
  const lanes: string[] = [];
  for (let c = 0; c < W; c++) {
    const load = (n: string, k: number): string =>
      `let ${n === 'a' ? 'x' : 'y'} = f16_value((${comp(`${n}w`, c)} >> ${16 * k}u) & 0xffffu);`;
    const half = (k: number): string =>
      `{ ${names.map((n) => load(n, k)).join(' ')} h${k} = f16_bits(bitcast<u32>(${expr})); }`;
    lanes.push(`${half(0)} ${half(1)} ${W === 4 ? `o[${c}]` : 'o'} = h0 | (h1 << 16u);`);
  }
  return `${paramsPrelude(elementwiseWords(1))}${elementwiseHelpers(f)}${f16Wgsl(conv)}
${names.map((n, k) => `@group(0) @binding(${k + 1}) var<storage, read> ${n}: array<${t}>;`).join('\n')}
@group(0) @binding(${names.length + 1}) var<storage, read_write> out: array<${t}>;
@compute @workgroup_size(256) fn main(${FLAT_ARGS}) {
  ${FLAT_INDEX}
  if (idx * ${2 * W}u >= u32(p(0u))) { return; }
  ${names.map((n, k) => `let ${n}w = ${n}[(u32(p(${2 + k}u)) >> ${shift}u) + idx];`).join('\n  ')}
  var o: ${t};
  var h0: u32;
  var h1: u32;
  ${lanes.join('\n  ')}
  out[idx] = o;
}`;
}
