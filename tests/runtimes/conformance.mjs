// Runner-agnostic conformance entry for other runtimes (Deno, Bun): runs the suite on the backends
// named in the arguments and prints one JSON line per backend with runtime, device and results.
//   deno run -A --unstable-webgpu tests/runtimes/conformance.mjs cpu wasm webgpu
//   bun tests/runtimes/conformance.mjs cpu wasm webgpu
//   node --experimental-wasm-relaxed-simd tests/runtimes/conformance.mjs wasm wasm-threads
import { runConformance } from '@polyhal/conformance';

const args = globalThis.Deno ? Deno.args : process.argv.slice(2);
if (globalThis.Bun && args.includes('webgpu')) {
  // bun-webgpu lives in .tools/ (see scripts/install-runtimes.mjs); POLYHAL_BUN_WEBGPU points at it.
  const { setupGlobals } = await import(process.env.POLYHAL_BUN_WEBGPU ?? 'bun-webgpu');
  await setupGlobals();
}
const factories = {
  cpu: async () => new (await import('@polyhal/backend-cpu')).CpuBackend(),
  wasm: async () => (await import('@polyhal/backend-wasm')).createWasmBackend(),
  // Every matmul and elementwise op split across 2 worker threads (thresholds 1), to check the threaded kernels.
  'wasm-threads': async () =>
    (await import('@polyhal/backend-wasm')).createWasmBackend({
      threads: 2,
      threadThreshold: 1,
      elementwiseThreadThreshold: 1,
    }),
  webgpu: async () => (await import('@polyhal/backend-webgpu')).createWebGpuBackend(),
};
// Whether the wasm backend's matmul rounds once per multiply-add (-1 + (1+2^-23)(1-2^-23) = -2^-46
// fused, 0 unfused), next to what relaxedMaddIsFused() and the backend report.
async function fusedCheck() {
  const { createWasmBackend, relaxedMaddIsFused } = await import('@polyhal/backend-wasm');
  const be = await createWasmBackend({ threads: 1 });
  const c = await be.read(be.matmul(be.fromArray([-1, 1 + 2 ** -23], [1, 2]), be.fromArray([1, 1 - 2 ** -23], [2, 1])));
  const r = { fusedProbe: relaxedMaddIsFused(), fusedBackend: be.fusedMultiplyAdd, fusedMatmul: c[0] === -(2 ** -46) };
  be.dispose();
  return r;
}
let failed = 0;
for (const name of args.filter((a) => !a.startsWith('--'))) {
  try {
    const r = await runConformance(factories[name]);
    failed += r.failed;
    const failures = r.results.filter((x) => !x.pass).map((x) => `${x.id}: ${x.message}`);
    // --full: the whole result (for the scoreboard); otherwise a summary line.
    const line = {
      backend: name,
      runtime: r.runtime,
      device: r.deviceName,
      passed: r.passed,
      failed: r.failed,
      failures,
    };
    if (name === 'wasm') Object.assign(line, await fusedCheck());
    console.log(JSON.stringify(args.includes('--full') ? { ...r, backend: name } : line));
  } catch (e) {
    failed++;
    console.log(JSON.stringify({ backend: name, error: String(e?.message ?? e) }));
  }
}
if (globalThis.Deno) Deno.exit(failed ? 1 : 0);
else process.exit(failed ? 1 : 0);
