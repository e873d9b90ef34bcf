/**
 * Runs the whole conformance suite on the WebGPU backend of this machine's GPU (for the real-GPU
 * machine, bundled with esbuild) and writes the result matrix as JSON; then once more with split-K
 * forced to 3 on every matmul that can split (the split path is otherwise taken only by large
 * matmuls with few output tiles); then a third time on a device created with Dawn's allow_unsafe_apis, where
 * an adapter that offers int8 subgroup matrices (tensor cores) runs every int8 product of 16 or more rows on
 * them (`int8Kernel: 'subgroup-matrix'`; `int8Packing: 'always'`: small products otherwise skip the packed
 * kernels), with robustness on: the 64×128 tile; then the int8 cases once more with robustness off on the
 * 128×128 tile (`int8Tile`), which 'auto' gives only large products; then the float16 matmul cases on a device with
 * f16 subgroup matrices (`vulkan_enable_f16_on_nvidia`), every product on the tensor cores (`float16Matmul`), and
 * once more with split-K forced to 3.
 *   node gpu-conformance.mjs [--json out.json]
 */
import { writeFileSync } from 'node:fs';
import { runConformance } from '@polyhal/conformance';
import { createWebGpuBackend } from '@polyhal/backend-webgpu';

const i = process.argv.indexOf('--json');
const r = await runConformance(() => createWebGpuBackend());
console.log(`conformance on webgpu — ${r.deviceName}, ${r.runtime}: ${r.passed} passed, ${r.failed} failed`);
for (const c of r.results.filter((x) => !x.pass)) console.log(`  FAIL ${c.id}: ${c.message}`);
const worst = [...r.results].sort((a, b) => b.maxUlpError - a.maxUlpError).slice(0, 8);
for (const c of worst) console.log(`  ${c.id}: max ulp ${c.maxUlpError}, max abs ${c.maxAbsError.toExponential(2)}`);
if (i > 0) writeFileSync(process.argv[i + 1]!, JSON.stringify(r, null, 2));
const s = await runConformance(() => createWebGpuBackend({ matmulSplitK: 3 }));
console.log(`conformance on webgpu with split-K 3: ${s.passed} passed, ${s.failed} failed`);
for (const c of s.results.filter((x) => !x.pass)) console.log(`  FAIL ${c.id}: ${c.message}`);
const t = await runConformance(() =>
  createWebGpuBackend({
    dawnFlags: ['enable-dawn-features=allow_unsafe_apis'],
    int8Packing: 'always',
    int8Kernel: 'subgroup-matrix',
  }),
);
console.log(`conformance on webgpu with allow_unsafe_apis — ${t.deviceName}: ${t.passed} passed, ${t.failed} failed`);
for (const c of t.results.filter((x) => !x.pass)) console.log(`  FAIL ${c.id}: ${c.message}`);
// The 128×128 subgroup-matrix tile, which 'auto' gives large products with robustness off, on every int8 case.
const u = await runConformance(
  () =>
    createWebGpuBackend({
      dawnFlags: ['enable-dawn-features=allow_unsafe_apis,disable_robustness'],
      int8Packing: 'always',
      int8Kernel: 'subgroup-matrix',
      int8Tile: '128x128',
    }),
  { filter: /int8|Integer|quantize/i },
);
console.log(
  `conformance of int8 cases, robustness off, 128×128 tiles — ${u.deviceName}: ${u.passed} passed, ${u.failed} failed`,
);
for (const c of u.results.filter((x) => !x.pass)) console.log(`  FAIL ${c.id}: ${c.message}`);
// float16 products on tensor cores for every size (float16Matmul: 'subgroup-matrix'), where the adapter offers f16
// subgroup matrices (Dawn on NVIDIA: vulkan_enable_f16_on_nvidia), robustness on: every matmul case of float16.
const h = await runConformance(
  () =>
    createWebGpuBackend({
      dawnFlags: ['enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia'],
      float16Matmul: 'subgroup-matrix',
    }),
  { filter: /matmul.*float16|float16.*matmul/i },
);
console.log(`conformance of float16 matmul on tensor cores — ${h.deviceName}: ${h.passed} passed, ${h.failed} failed`);
for (const c of h.results.filter((x) => !x.pass)) console.log(`  FAIL ${c.id}: ${c.message}`);
// the same with split-K forced to 3 (products of one item whose tile divides M and N: partials over the grid's z)
const hs = await runConformance(
  () =>
    createWebGpuBackend({
      dawnFlags: ['enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia'],
      float16Matmul: 'subgroup-matrix',
      matmulSplitK: 3,
    }),
  { filter: /matmul.*float16|float16.*matmul/i },
);
console.log(`conformance of float16 matmul on tensor cores, split-K 3: ${hs.passed} passed, ${hs.failed} failed`);
for (const c of hs.results.filter((x) => !x.pass)) console.log(`  FAIL ${c.id}: ${c.message}`);
process.exit(r.failed || s.failed || t.failed || u.failed || h.failed || hs.failed ? 1 : 0);
