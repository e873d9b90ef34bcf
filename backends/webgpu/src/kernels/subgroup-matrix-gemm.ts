/**
 * The tensor-core GEMM family (`chromium_experimental_subgroup_matrix`): one generator for every element type the
 * adapter's subgroup-matrix configurations offer — int8 (i8×i8→i32 16×16×32: matmul-subgroup-matrix.ts) and
 * float16 (f16×f16→f32 16×16×16: matmul-subgroup-matrix-f16.ts). An element type is a parameter
 * (SubgroupMatrixType): its fragment types, its packing in 32-bit words, how a register is stored into workgroup
 * memory, and whether B is read transposed or as rows; the tile shapes, the slabs, the padding, the prefetch and
 * the grouped order are the same code.
 *
 * C [Mp, Np] = A [Mp, Kp] · B (as [Kp, Np] rows, or transposed as [Np, Kp]), operands four (int8) or two (float16)
 * to a word, rows padded to the tile, K to the slab depth. Four subgroups of 32 invocations in a 2×2 grid per
 * workgroup, each computing (16·fm)×(16·fn) as fm×fn result matrices, fully unrolled (WGSL has no unroll hint).
 * Slabs 64 bytes deep along K go through workgroup memory with rows padded by 16 bytes: at a 64-byte stride the 8
 * rows a tensor-core fragment reads share 4 banks (4-way conflicts), at 80 they fall in 8 distinct ones. The next
 * slab is loaded into registers while the current one is multiplied, and workgroups walk groups of 8 tile rows
 * column by column, for L2 reuse. Subgroup-matrix stores cannot be masked: C is padded (the caller crops) unless
 * `direct` (M and N multiples of the tile: C is the output itself, at element offset param 5).
 *
 * Params (i32 words): 3 A's offset and 4 B's offset (elements; read where the type takes `offsets`, else the
 * operands are packed copies from 0), 5 C's offset (direct), 10 Kp in words, 11 Np; where the type takes
 * `offsets`, a batch of two levels over the grid's z: item z = io·(param 12) + ii reads A from 13·io + 6·ii
 * elements further and B from 14·io + 7·ii, and writes C from 8·z.
 * Split-K (`split`, types that read offsets): one more param word, the split depth D (a multiple of the slab
 * depth); inner item ii walks K over min(D, Kp − ii·D) from its offsets (the caller steps A by D and B by D rows
 * through params 6 and 7), writing its partial product at 8·z: the caller sums the partials.
 */
import { paramsPrelude } from '../layout.js';

/** An element type of the family. */
export interface SubgroupMatrixType {
  readonly name: 'int8' | 'float16';
  /** Operand elements per 32-bit word. */
  readonly perWord: 4 | 2;
  /** K of one multiply-accumulate (the configuration's K). */
  readonly mmaK: number;
  /** WGSL enables (besides subgroup matrices). */
  readonly enables: string;
  /** The operands' word type in storage and registers (vec4 of it per load). */
  readonly word: 'i32' | 'u32';
  /** The workgroup-memory element type the fragments load from. */
  readonly shared: 'i32' | 'f16';
  /** C's element type and the fragment types. */
  readonly c: 'i32' | 'f32';
  readonly left: string;
  readonly right: string;
  readonly result: string;
  /** B read as rows [Kp, Np] (right fragments row-major) rather than transposed [Np, Kp]. */
  readonly bRows: boolean;
  /** A's and B's element offsets come from params 3 and 4 (operands read where they are), else 0. */
  readonly offsets: boolean;
  /** Param words of the kernel. */
  readonly words: number;
}

/** A workgroup tile: fm×fn result matrices of 16×16 per subgroup, four subgroups in a 2×2 grid. */
export interface SubgroupMatrixTile {
  readonly name: 'large' | 'medium' | 'small';
  readonly fm: number;
  readonly fn: number;
  /** Rows and columns of C per workgroup: the padding of A's rows and B's columns. */
  readonly rows: number;
  readonly cols: number;
  /** Bytes of workgroup memory (the slabs of A and B). */
  readonly storage: number;
}

const SLAB_BYTES = 64; // slab depth along K
const PAD_BYTES = 16; // slab row padding

/** Slab depth along K in elements of `type` (64 bytes): also the padding of K. */
export const slabDepth = (type: SubgroupMatrixType): number => (SLAB_BYTES / 4) * type.perWord;

/** Workgroup-memory elements of a slab row of `bytes` (i32 words hold four int8; f16 one binary16). */
const sharedElements = (type: SubgroupMatrixType, bytes: number): number =>
  type.shared === 'i32' ? bytes / 4 : bytes / 2;

/** The tile `name` of fm×fn result matrices per subgroup for `type`. */
export function subgroupMatrixTile(
  type: SubgroupMatrixType,
  name: 'large' | 'medium' | 'small',
  fm: number,
  fn: number,
): SubgroupMatrixTile {
  const [rows, cols] = [32 * fm, 32 * fn];
  const bytes = type.bRows
    ? rows * (SLAB_BYTES + PAD_BYTES) + slabDepth(type) * ((cols * 4) / type.perWord + PAD_BYTES)
    : (rows + cols) * (SLAB_BYTES + PAD_BYTES);
  return { name, fm, fn, rows, cols, storage: bytes };
}

/**
 * The form of the subgroup-matrix builtins a kernel is written in:
 * - 'legacy': majorness a runtime argument (`subgroupMatrixLoad<T>(p, offset, colMajor, stride)`), the slabs
 *   arrays of the fragments' storage type (i32 for int8, f16 for float16), offsets and strides in operand elements.
 *   Deprecated in Dawn (Tint warns on every call) but the only form of older builds;
 * - 'vector': the proposal's form (gpuweb #6275, #6345): majorness a template parameter
 *   (`subgroupMatrixLoad<T, row_major>(p, offset, stride)`, `subgroupMatrixStore<row_major>(p, offset, m, stride)`)
 *   with the slabs arrays of vec4 words: one workgroup store per loaded vec4 instead of four (int8) or eight
 *   (float16), offsets and strides counted in vec4s (every fragment starts on a 16-byte boundary: rows of 80
 *   bytes, fragments 32 bytes deep).
 */
export type SubgroupMatrixBuiltins = 'legacy' | 'vector';

/** WGSL storing register `q` (a vec4 of words) into workgroup array `dst` from element offset `o`. */
function storeRegister(type: SubgroupMatrixType, dst: string, q: string, o: string, vector: boolean): string {
  if (vector) return `    ${dst}[(${o}) / ${sharedPerVec4(type)}u] = ${q};`;
  if (type.shared === 'i32') {
    const words = ['x', 'y', 'z', 'w'].map((c, w) => `${dst}[o${w ? ` + ${w}u` : ''}] = q.${c};`).join(' ');
    return `    { let q = ${q}; let o = ${o}; ${words} }`;
  }
  const halves = ['x', 'y', 'z', 'w'].map((c, w) => {
    const [lo, hi] = [`${dst}[o + ${2 * w}u]`, `${dst}[o + ${2 * w + 1}u]`];
    return `let h${c} = bitcast<vec2<f16>>(q.${c}); ${lo} = h${c}.x; ${hi} = h${c}.y;`;
  });
  return `    { let q = ${q}; let o = ${o};\n      ${halves.join('\n      ')} }`;
}

/** Workgroup-memory elements (of the legacy form's slabs) in one vec4 of words. */
const sharedPerVec4 = (type: SubgroupMatrixType): number => sharedElements(type, 16);

/** The WGSL of one element type's kernel on one tile, its builtins in form `builtins`. */
export function subgroupMatrixGemmWgsl(
  type: SubgroupMatrixType,
  t: SubgroupMatrixTile,
  direct = false,
  builtins: SubgroupMatrixBuiltins = 'legacy',
  split = false,
): string {
  if (split && !type.offsets) throw new Error('subgroup-matrix GEMM: split-K needs a type that reads offsets');
  const vector = builtins === 'vector';
  // a fragment load from workgroup array `p`: offset and stride in operand elements (the legacy form's units)
  const fragment = (m: string, p: string, offset: string, colMajor: boolean, stride: number): string => {
    if (!vector) return `subgroupMatrixLoad<${m}>(&${p}, ${offset}, ${colMajor}, ${stride}u)`;
    const unit = 4 * type.perWord; // operand elements per vec4 of words
    const major = colMajor ? 'col_major' : 'row_major';
    return `subgroupMatrixLoad<${m}, ${major}>(&${p}, (${offset}) / ${unit}u, ${stride / unit}u)`;
  };
  const { fm, fn, rows, cols } = t;
  const KT = slabDepth(type);
  const perVec4 = 4 * type.perWord; // operand elements per vec4 load
  const VR = KT / perVec4; // vec4 per slab row of A (and of Bᵀ)
  // workgroup-memory elements per slab row (and the element offset of one vec4 in it)
  const ROW = sharedElements(type, SLAB_BYTES + PAD_BYTES);
  const step = sharedElements(type, 16);
  const perElem = type.shared === 'i32' ? 1 : type.perWord / 2; // fragment offsets: elements of the operand type
  const rowOffset = ROW * (type.shared === 'i32' ? 4 : 1); // a slab row in operand elements (fragment strides)
  const ROWS = rowOffset;
  const CV = cols / perVec4; // vec4 per slab row of B as rows
  const RSB = sharedElements(type, (cols * 4) / type.perWord + PAD_BYTES); // B-rows slab stride (shared elements)
  const [va, vb] = [(rows * VR) / 128, type.bRows ? (KT * CV) / 128 : (cols * VR) / 128];
  const L: string[] = [];
  const acc = (i: number, j: number): string => `acc${i}_${j}`;
  for (let i = 0; i < fm; i++) for (let j = 0; j < fn; j++) L.push(`  var ${acc(i, j)}: CM;`);
  for (let e = 0; e < va; e++) L.push(`  var a${e}: vec4<${type.word}>;`);
  for (let e = 0; e < vb; e++) L.push(`  var b${e}: vec4<${type.word}>;`);
  const at = (e: number): string => `(t + ${e * 128}u)`;
  // Loads slab `k` of both operands into registers (the prefetch).
  const load = (k: string): void => {
    for (let e = 0; e < va; e++)
      L.push(`    a${e} = a[oa + (tm * ${rows}u + ${at(e)} / ${VR}u) * kv + ${k} / ${perVec4}u + ${at(e)} % ${VR}u];`);
    for (let e = 0; e < vb; e++)
      L.push(
        type.bRows
          ? `    b${e} = b[ob + (${k} + ${at(e)} / ${CV}u) * nv + tn * ${CV}u + ${at(e)} % ${CV}u];`
          : `    b${e} = b[ob + (tn * ${cols}u + ${at(e)} / ${VR}u) * kv + ${k} / ${perVec4}u + ${at(e)} % ${VR}u];`,
      );
  };
  load('0u');
  L.push(`  for (var k = 0u; k < kl; k += ${KT}u) {`);
  for (let e = 0; e < va; e++)
    L.push(
      storeRegister(type, 'sa', `a${e}`, `(${at(e)} / ${VR}u) * ${ROW}u + (${at(e)} % ${VR}u) * ${step}u`, vector),
    );
  for (let e = 0; e < vb; e++)
    L.push(
      storeRegister(
        type,
        'sb',
        `b${e}`,
        type.bRows
          ? `(${at(e)} / ${CV}u) * ${RSB}u + (${at(e)} % ${CV}u) * ${step}u`
          : `(${at(e)} / ${VR}u) * ${ROW}u + (${at(e)} % ${VR}u) * ${step}u`,
        vector,
      ),
    );
  L.push('    workgroupBarrier();', `    let kn = min(k + ${KT}u, kl - ${KT}u);`);
  load('kn');
  const rsb = RSB * (type.shared === 'i32' ? 4 : 1);
  for (let kk = 0; kk < KT; kk += type.mmaK) {
    L.push('    {');
    for (let i = 0; i < fm; i++)
      L.push(`      let l${i} = ${fragment('LM', 'sa', `ar + ${16 * i * rowOffset + kk * perElem}u`, false, ROWS)};`);
    for (let j = 0; j < fn; j++) {
      // B as rows: row kk of the slab, column sc + 16j; transposed: row sc + 16j of Bᵀ, column kk
      const [offset, colMajor, stride] = type.bRows
        ? [`${kk * rsb}u + sc + ${16 * j}u`, false, rsb]
        : [`br + ${16 * j * rowOffset + kk * perElem}u`, true, ROWS];
      L.push(`      let r${j} = ${fragment('RM', 'sb', offset, colMajor, stride)};`);
    }
    for (let i = 0; i < fm; i++)
      for (let j = 0; j < fn; j++)
        L.push(`      ${acc(i, j)} = subgroupMatrixMultiplyAccumulate(l${i}, r${j}, ${acc(i, j)});`);
    L.push('    }');
  }
  L.push('    workgroupBarrier();', '  }');
  for (let i = 0; i < fm; i++)
    for (let j = 0; j < fn; j++)
      L.push(
        `  subgroupMatrixStore${vector ? '<row_major>' : ''}(&c, ` +
          `base + (tm * ${rows}u + sr + ${16 * i}u) * np + tn * ${cols}u + sc + ${16 * j}u, ` +
          `${acc(i, j)}${vector ? '' : ', false'}, np);`,
      );
  // the operands' and C's vec4 / element offsets: a batch item over the grid's z where the type reads offsets
  const operandOffsets = [
    type.bRows ? `  let nv = np / ${perVec4}u;` : '',
    type.offsets ? '  let item = wg.z;\n  let io = item / u32(p(12u));\n  let ii = item % u32(p(12u));' : '',
    `  let oa = ${type.offsets ? `(u32(p(3u)) + io * u32(p(13u)) + ii * u32(p(6u))) / ${perVec4}u` : '0u'};`,
    `  let ob = ${type.offsets ? `(u32(p(4u)) + io * u32(p(14u)) + ii * u32(p(7u))) / ${perVec4}u` : '0u'};`,
    `  let base = ${direct ? 'u32(p(5u))' : '0u'}${type.offsets ? ' + item * u32(p(8u))' : ''};`,
    // split-K: inner item ii walks K from ii·(param words) (its A and B offsets), at most that many, to Kp
    split ? `  let kl = min(u32(p(${type.words}u)), kp - ii * u32(p(${type.words}u)));` : '  let kl = kp;',
  ]
    .filter((l) => l !== '')
    .join('\n');
  const sbSize = type.bRows ? KT * RSB : cols * ROW;
  // a slab of `n` legacy elements: as they are, or as vec4 words
  const slab = (n: number): string =>
    vector ? `array<vec4<${type.word}>, ${n / sharedPerVec4(type)}>` : `array<${type.shared}, ${n}>`;
  return `${type.enables}enable chromium_experimental_subgroup_matrix;
${paramsPrelude(type.words + (split ? 1 : 0))}
@group(0) @binding(1) var<storage, read> a: array<vec4<${type.word}>>;
@group(0) @binding(2) var<storage, read> b: array<vec4<${type.word}>>;
@group(0) @binding(3) var<storage, read_write> c: array<${type.c}>;
alias LM = ${type.left};
alias RM = ${type.right};
alias CM = ${type.result};
var<workgroup> sa: ${slab(rows * ROW)};
var<workgroup> sb: ${slab(sbSize)};
@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) t: u32, @builtin(subgroup_id) sg: u32) {
  let kp = u32(p(10u)) * ${type.perWord}u;
  let kv = kp / ${perVec4}u;
  let np = u32(p(11u));
${operandOffsets}
  // Groups of 8 tile rows, walked column by column.
  let pid = wg.y * nwg.x + wg.x;
  let first = pid / (8u * nwg.x) * 8u;
  let gm = min(nwg.y - first, 8u);
  let tm = first + pid % (8u * nwg.x) % gm;
  let tn = pid % (8u * nwg.x) / gm;
  let sr = sg / 2u * ${16 * fm}u;
  let sc = sg % 2u * ${16 * fn}u;
  let ar = sr * ${rowOffset}u;
${type.bRows ? '' : `  let br = sc * ${rowOffset}u;\n`}${L.join('\n')}
}`;
}
