/**
 * `polyhal-conformance --captured`: the suite in captured mode (captured.ts) on each backend named, the text
 * report (captured-report.ts) and, with --json, the per-case results. A backend without capture (cpu, wasm) is
 * said to compute as called, and runs no case. Exit code: 0 every case passed, 1 a case failed or timed out or a
 * backend did not start, 2 the factory did not settle or the --json file could not be written.
 */
import { writeFileSync } from 'node:fs';
import { type CapturedConformanceResult, runCapturedConformance } from './captured.js';
import { capturedTextReport } from './captured-report.js';
import { type BackendFactory, ConformanceTimeoutError } from './runner.js';

/** What the captured command takes from the command line. */
export interface CapturedCommandOptions {
  seed: number;
  filter?: string;
  timeoutMs: number;
  /** The --json path, checked writable already. */
  json?: string;
}

/** Runs the captured mode on each backend, prints the report; returns the exit code. */
export async function capturedCommand(
  backends: readonly { name: string; factory: BackendFactory }[],
  o: CapturedCommandOptions,
): Promise<number> {
  const runs: CapturedConformanceResult[] = [];
  let code = 0;
  for (const { name, factory } of backends) {
    try {
      const r = await runCapturedConformance(factory, { seed: o.seed, filter: o.filter, timeoutMs: o.timeoutMs });
      runs.push(r);
      if (r.failed > 0) code = Math.max(code, 1);
      if (r.timedOut) break;
    } catch (e) {
      const m = (e as Error)?.message ?? String(e);
      console.error(`error: ${m.startsWith(`${name}: `) ? m : `${name}: ${m}`}`);
      code = e instanceof ConformanceTimeoutError ? 2 : Math.max(code, 1);
    }
  }
  console.log(capturedTextReport(runs));
  if (o.json) {
    try {
      writeFileSync(o.json, JSON.stringify(runs, null, 2));
    } catch (e) {
      console.error(`error: --json ${o.json}: the report could not be written (${(e as Error).message})`);
      return 2;
    }
  }
  return code;
}
