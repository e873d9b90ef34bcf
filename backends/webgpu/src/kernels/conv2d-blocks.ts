/**
 * WGSL 2-D convolution as register blocks, for software adapters (lavapipe, SwiftShader), where workgroup memory
 * is the same memory and a barrier switches between invocations (kernels/matmul-blocks.ts measured the same for
 * the GEMM): each invocation computes a TM×TN block of one batch item and group's [Og, P] output (TM output
 * channels × TN pixels) in registers, reading w and x straight through their strides, k = (c, ky, kx) in order
 * (the order of kernels/conv2d.ts). Invocations are numbered flat over (n·groups + q, block row, block column),
 * 64 to a workgroup; rows and columns past the edge read the last one and are not written. Params: kernels/conv2d.ts's,
 * then 29 the batch items × groups; `pointwise` (1×1, stride 1, no padding) skips the window arithmetic.
 */
import { paramsPrelude } from '../layout.js';
import { CONV2D_WORDS } from './conv2d.js';

export const CONV_BLOCK_THREADS = 64;
/** kernels/conv2d.ts's params (bias included), then 29 the batch items × groups. */
export const CONV2D_BLOCK_WORDS = CONV2D_WORDS + 1;

export function conv2dBlocksWgsl(tm: number, tn: number, pointwise: boolean): string {
  const rows = Array.from({ length: tm }, (_, i) => i);
  const cols = Array.from({ length: tn }, (_, j) => j);
  const fma = rows.flatMap((i) => cols.map((j) => `acc${i}_${j} += a${i} * b${j};`)).join(' ');
  const colSetup = cols
    .map((j) => {
      const pix = `let q${j} = min(p0 + ${j}, P - 1); let oy${j} = q${j} / OW; let ox${j} = q${j} % OW;`;
      return pointwise
        ? `${pix} let xp${j} = oy${j} * p(19u) + ox${j} * p(20u);`
        : `${pix} let iy${j} = oy${j} * p(10u) - p(14u); let ix${j} = ox${j} * p(11u) - p(15u);`;
    })
    .join('\n  ');
  const loads = (wk: string): string => rows.map((i) => `let a${i} = w[wr${i} + ${wk}];`).join(' ');
  const body = pointwise
    ? `${cols.map((j) => `let b${j} = x[xc + xp${j}];`).join(' ')}
    ${loads('c * p(23u)')}
    ${fma}`
    : `for (var ky = 0; ky < kh; ky++) {
      for (var kx = 0; kx < kw; kx++) {
        let dy = ky * p(12u); let dx = kx * p(13u);
        ${cols
          .map(
            (j) => `var b${j} = 0.0; { let yy = iy${j} + dy; let xx = ix${j} + dx;
        if (yy >= 0 && yy < H && xx >= 0 && xx < W) { b${j} = x[xc + yy * p(19u) + xx * p(20u)]; } }`,
          )
          .join('\n        ')}
        ${loads('c * p(23u) + ky * p(24u) + kx * p(25u)')}
        ${fma}
      }
    }`;
  return `${paramsPrelude(CONV2D_BLOCK_WORDS)}
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<storage, read> bias: array<f32>;
@compute @workgroup_size(${CONV_BLOCK_THREADS}) fn main(@builtin(workgroup_id) wid: vec3u,
    @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let idx = i32((wid.y * nwg.x + wid.x) * ${CONV_BLOCK_THREADS}u + lid.x);
  let Og = p(0u); let P = p(1u); let groups = p(3u); let Cg = p(4u);
  let H = p(5u); let W = p(6u); let OW = p(7u); let kh = p(8u); let kw = p(9u);
  let GM = (Og + ${tm - 1}) / ${tm}; let GN = (P + ${tn - 1}) / ${tn};
  let items = p(29u);
  if (idx >= items * GM * GN) { return; }
  let item = idx / (GM * GN); let blk = idx % (GM * GN);
  let m0 = (blk / GN) * ${tm}; let p0 = (blk % GN) * ${tn};
  let n = item / groups; let q = item % groups;
  let xn = p(16u) + n * p(17u) + q * Cg * p(18u);
  let wq = p(21u) + q * Og * p(22u);
  ${rows.map((i) => `let wr${i} = wq + min(m0 + ${i}, Og - 1) * p(22u);`).join('\n  ')}
  ${colSetup}
  ${rows.map((i) => cols.map((j) => `var acc${i}_${j} = 0.0;`).join(' ')).join('\n  ')}
  for (var c = 0; c < Cg; c++) {
    let xc = xn + c * p(18u);
    ${body}
  }
  let O = Og * groups;
  ${rows
    .map(
      (i) => `if (m0 + ${i} < Og) {
    let row = (n * O + q * Og + m0 + ${i}) * P;
    var bv = 0.0;
    if (p(28u) != 0) { bv = bias[p(26u) + (q * Og + m0 + ${i}) * p(27u)]; }
    ${cols.map((j) => `if (p0 + ${j} < P) { y[row + p0 + ${j}] = acc${i}_${j} + bv; }`).join('\n    ')}
  }`,
    )
    .join('\n  ')}
}`;
}
