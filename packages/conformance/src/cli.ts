/**
 * polyhal-conformance: runs the conformance suite on one or more backends — ours by name, or any
 * third-party backend from a module that exports a factory — and prints the op × dtype matrix.
 *   polyhal-conformance --backend cpu|wasm|webgpu|all|./path/to/module.js [--json out.json] [--html out.html] [--seed N] [--filter OP]
 * Exit code: 0 all passed, 1 a case failed, 2 bad usage or a backend that cannot start.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command, CommanderError } from 'commander';
import type { ComputeBackend } from '@polyhal/hal';
import { htmlReport, textTable } from './report.js';
import { type BackendFactory, type ConformanceResult, runConformance } from './runner.js';

const BUILT_IN: Record<string, () => Promise<BackendFactory>> = {
  cpu: async () => {
    const m = await import('@polyhal/backend-cpu' as string) as { CpuBackend: new () => ComputeBackend };
    return () => new m.CpuBackend();
  },
  wasm: async () => {
    const m = await import('@polyhal/backend-wasm' as string) as { createWasmBackend: () => Promise<ComputeBackend> };
    return () => m.createWasmBackend();
  },
  webgpu: async () => {
    const m = await import('@polyhal/backend-webgpu' as string) as { createWebGpuBackend: () => Promise<ComputeBackend> };
    return () => m.createWebGpuBackend();
  },
};

/** A module path: its default export, `createBackend`, or its only exported function is the factory. */
async function moduleFactory(path: string): Promise<BackendFactory> {
  const m = await import(pathToFileURL(resolve(path)).href) as Record<string, unknown>;
  const candidates = [m['default'], m['createBackend'], ...Object.values(m)].filter((v) => typeof v === 'function');
  if (!candidates.length) throw new Error(`${path} exports no backend factory (export default () => backend, or createBackend)`);
  return candidates[0] as BackendFactory;
}

export async function main(argv: string[]): Promise<number> {
  const program = new Command().name('polyhal-conformance')
    .description('Run the PolyHAL conformance suite against backends and the float64 oracle.')
    .option('--backend <name>', 'cpu, wasm, webgpu, all, or a path to a module exporting a backend factory', 'all')
    .option('--json <file>', 'write the result matrix as JSON')
    .option('--html <file>', 'write an HTML report')
    .option('--seed <n>', 'input seed', (v) => {
      if (!/^\d+$/.test(v)) throw new CommanderError(2, 'seed', `--seed must be a non-negative integer, got '${v}'`);
      return Number(v);
    }, 1)
    .option('--filter <text>', 'only cases whose id contains this text (e.g. an op name)')
    .exitOverride();
  try {
    program.parse(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) return e.code === 'commander.helpDisplayed' ? 0 : 2;
    throw e;
  }
  const o = program.opts<{ backend: string; json?: string; html?: string; seed: number; filter?: string }>();
  const names = o.backend === 'all' ? Object.keys(BUILT_IN) : [o.backend];
  const results: ConformanceResult[] = [];
  for (const name of names) {
    let factory: BackendFactory;
    try {
      factory = BUILT_IN[name] ? await BUILT_IN[name]!() : name.includes('/') || name.endsWith('.js') || name.endsWith('.mjs') ? await moduleFactory(name) : (() => {
        throw new Error(`unknown backend '${name}' (cpu, wasm, webgpu, all, or a module path)`);
      })();
      results.push(await runConformance(factory, { seed: o.seed, filter: o.filter }));
    } catch (e) {
      console.error(`error: ${name}: ${(e as Error).message}`);
      return 2;
    }
  }
  console.log(textTable(results));
  if (o.json) writeFileSync(o.json, JSON.stringify(results, null, 2));
  if (o.html) writeFileSync(o.html, htmlReport(results));
  return results.some((r) => r.failed > 0) ? 1 : 0;
}
