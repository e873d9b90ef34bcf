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
  // Every matmul split across 2 worker threads (threadThreshold 1), to check the threaded kernels.
  'wasm-threads': async () => (await import('@polyhal/backend-wasm')).createWasmBackend({ threads: 2, threadThreshold: 1 }),
  webgpu: async () => (await import('@polyhal/backend-webgpu')).createWebGpuBackend(),
};
let failed = 0;
for (const name of args.filter((a) => !a.startsWith('--'))) {
  try {
    const r = await runConformance(factories[name]);
    failed += r.failed;
    const failures = r.results.filter((x) => !x.pass).map((x) => `${x.id}: ${x.message}`);
    // --full: the whole result (for the scoreboard); otherwise a summary line.
    console.log(JSON.stringify(args.includes('--full') ? { ...r, backend: name } : { backend: name, runtime: r.runtime, device: r.deviceName, passed: r.passed, failed: r.failed, failures }));
  } catch (e) {
    failed++;
    console.log(JSON.stringify({ backend: name, error: String(e?.message ?? e) }));
  }
}
if (globalThis.Deno) Deno.exit(failed ? 1 : 0);
else process.exit(failed ? 1 : 0);
