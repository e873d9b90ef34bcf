/**
 * The tensor-core kernels' two forms of the subgroup-matrix builtins (kernels/subgroup-matrix-gemm.ts): the
 * 'vector' form must address the same bytes of workgroup memory as the 'legacy' one — every fragment load at the
 * same byte offset with the same byte stride, every register stored at a whole vec4 — and hold the same bytes of
 * slabs; and the choice at creation (subgroup-matrix-check.ts) must fall back to 'legacy' wherever the vector form
 * does not compile. No adapter here has subgroup matrices (lavapipe): the kernels themselves ran on an H200 (both
 * forms gave the same bits: benches/probes/webgpu-sgm-builtins.ts), so these tests check the generated text.
 */
import { describe, expect, test } from '@jest/globals';
import { SUBGROUP_MATRIX } from '../../backends/webgpu/src/device.js';
import {
  HALF_SGM_LARGE,
  HALF_SGM_MEDIUM,
  HALF_SGM_SMALL,
  halfSubgroupMatrixWgsl,
} from '../../backends/webgpu/src/kernels/matmul-subgroup-matrix-f16.js';
import {
  SGM_LARGE,
  SGM_MEDIUM,
  subgroupMatrixMatmulWgsl,
} from '../../backends/webgpu/src/kernels/matmul-subgroup-matrix.js';
import type {
  SubgroupMatrixBuiltins,
  SubgroupMatrixTile,
} from '../../backends/webgpu/src/kernels/subgroup-matrix-gemm.js';
import { subgroupMatrixBuiltins } from '../../backends/webgpu/src/subgroup-matrix-check.js';

type Gen = (t: SubgroupMatrixTile, direct: boolean, b: SubgroupMatrixBuiltins) => string;
const KERNELS: [string, Gen, SubgroupMatrixTile[]][] = [
  ['int8', subgroupMatrixMatmulWgsl, [SGM_LARGE, SGM_MEDIUM]],
  ['float16', halfSubgroupMatrixWgsl, [HALF_SGM_LARGE, HALF_SGM_MEDIUM, HALF_SGM_SMALL]],
];
const BYTES: Record<string, number> = { i32: 4, f16: 2, 'vec4<i32>': 16, 'vec4<u32>': 16 };

/** The bytes of workgroup array `name` declared in `wgsl`. */
function slabBytes(wgsl: string, name: string): number {
  const m = new RegExp(`var<workgroup> ${name}: array<(.+), (\\d+)>;`).exec(wgsl);
  if (!m) throw new Error(`no workgroup array ${name}`);
  return BYTES[m[1]!]! * Number(m[2]);
}

/**
 * Evaluates a WGSL u32 expression of the kernels (literals with `u`, + * / %, names in `env`) as WGSL does: in
 * integers, `/` truncating (BigInt arithmetic).
 */
function evaluate(expr: string, env: Record<string, number>): number {
  const js = expr.replace(/(\d+)u\b/g, '$1n');
  const names = Object.keys(env);
  return Number(new Function(...names, `return ${js};`)(...names.map((n) => BigInt(env[n]!))));
}

/** The fragment loads of `wgsl`: array, offset expression, stride expression, majorness. */
function loads(wgsl: string): { array: string; offset: string; stride: string; colMajor: boolean }[] {
  const out: { array: string; offset: string; stride: string; colMajor: boolean }[] = [];
  for (const m of wgsl.matchAll(/subgroupMatrixLoad<(\w+)(?:, (row|col)_major)?>\(&(\w+), (.+)\);/g)) {
    const args = m[4]!.split(', ');
    if (m[2]) out.push({ array: m[3]!, offset: args[0]!, stride: args[1]!, colMajor: m[2] === 'col' });
    else out.push({ array: m[3]!, offset: args[0]!, stride: args[2]!, colMajor: args[1] === 'true' });
  }
  return out;
}

describe("subgroup-matrix builtins: the vector form addresses the legacy form's bytes", () => {
  for (const [name, gen, tiles] of KERNELS)
    for (const tile of tiles)
      for (const direct of [false, true])
        test(`${name} ${tile.name}${direct ? ' direct' : ''}`, () => {
          const [legacy, vector] = [gen(tile, direct, 'legacy'), gen(tile, direct, 'vector')];
          // no call in the deprecated form (a boolean majorness argument) is left in the vector form
          expect(vector).not.toMatch(/subgroupMatrixLoad<\w+>\(/);
          expect(vector).not.toMatch(/subgroupMatrixStore\(/);
          expect(vector).toMatch(/subgroupMatrixStore<row_major>\(&c, /);
          for (const slab of ['sa', 'sb']) expect(slabBytes(vector, slab)).toBe(slabBytes(legacy, slab));
          // operand elements per byte of the legacy slabs' units: int8 loads count int8 elements, float16 halves
          const elemBytes = name === 'int8' ? 1 : 2;
          const [l, v] = [loads(legacy), loads(vector)];
          expect(v.length).toBe(l.length);
          expect(l.length).toBeGreaterThan(0);
          // at every subgroup of the 2×2 grid (the kernels' `ar`, `br` and `sc` from `sg`)
          const rows = (slabBytes(legacy, 'sa') / (tile.rows * elemBytes)) | 0; // legacy row length in elements
          for (let sg = 0; sg < 4; sg++) {
            const sr = Math.floor(sg / 2) * 16 * tile.fm;
            const sc = (sg % 2) * 16 * tile.fn;
            const env = { ar: sr * rows, br: sc * rows, sc };
            for (const [i, x] of l.entries()) {
              const y = v[i]!;
              expect([y.array, y.colMajor]).toEqual([x.array, x.colMajor]);
              // whole vec4s: a division that truncated would land short of the legacy form's byte
              expect(evaluate(y.offset, env) * 16).toBe(evaluate(x.offset, env) * elemBytes);
              expect(evaluate(y.stride, env) * 16).toBe(evaluate(x.stride, env) * elemBytes);
            }
          }
          // every register lands on a whole vec4, for every invocation
          const stores = [...vector.matchAll(/ {4}(s[ab])\[\((.+)\) \/ (\d+)u\] = [ab]\d+;/g)];
          expect(stores.length).toBeGreaterThan(0);
          for (const s of stores) for (let t = 0; t < 128; t++) expect(evaluate(s[2]!, { t }) % Number(s[3])).toBe(0);
        });
});

describe('subgroup-matrix builtins: the choice at creation', () => {
  /** A device with subgroup matrices (and `shader-f16` where `half`) whose compiler answers `messages`. */
  const device = (answer: 'ok' | 'error' | 'validation' | 'throws', half = true): never =>
    ({
      features: new Set([SUBGROUP_MATRIX, ...(half ? ['shader-f16'] : [])]),
      pushErrorScope: () => undefined,
      popErrorScope: async () => (answer === 'validation' ? { message: 'invalid' } : null),
      createShaderModule: ({ code }: { code: string }) => {
        if (answer === 'throws') throw new Error('no compiler');
        return {
          code,
          getCompilationInfo: async () => ({ messages: answer === 'error' ? [{ type: 'error', message: 'x' }] : [] }),
        };
      },
    }) as never;

  test("'auto' takes the vector form where it compiles, else the legacy one", async () => {
    expect(await subgroupMatrixBuiltins(device('ok'), {})).toBe('vector');
    expect(await subgroupMatrixBuiltins(device('ok', false), {})).toBe('vector');
    expect(await subgroupMatrixBuiltins(device('error'), {})).toBe('legacy');
    expect(await subgroupMatrixBuiltins(device('validation'), {})).toBe('legacy');
    expect(await subgroupMatrixBuiltins(device('throws'), {})).toBe('legacy');
  });

  test('a device without subgroup matrices, and a form asked for, compile nothing', async () => {
    const none = { features: new Set<string>(), createShaderModule: () => expect('no compile').toBe('') } as never;
    expect(await subgroupMatrixBuiltins(none, {})).toBe('legacy');
    const unused = { ...(device('error') as object), createShaderModule: () => expect('no compile').toBe('') } as never;
    expect(await subgroupMatrixBuiltins(unused, { subgroupMatrixBuiltins: 'vector' })).toBe('vector');
    expect(await subgroupMatrixBuiltins(unused, { subgroupMatrixBuiltins: 'legacy' })).toBe('legacy');
  });
});
