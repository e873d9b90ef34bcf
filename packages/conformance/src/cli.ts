/**
 * polyhal-conformance: runs the conformance suite on one or more backends — ours by name, or any
 * third-party backend from a module that exports a factory — and prints the op × dtype matrix.
 * polyhal-conformance --backend cpu|wasm|webgpu|all|./path/to/module.js [--json out.json] [--html out.html]
 * [--seed N] [--filter OP] [--timeout MS]
 *   polyhal-conformance --backend ... --onnx-node-tests DIR [--json out.json] [--filter TEST] [--timeout MS]
 *     runs ONNX's backend node tests (DIR: onnx/backend/test/data/node) instead of the suite: passed /
 *     failed / not expressible per op × backend, the reasons grouped; --json gets the per-test rows.
 *   polyhal-conformance --backend ... --onnx-model model.onnx [--input name=file]... [--tolerance X] [--json out]
 *     runs a whole ONNX model on each backend and compares every node's outputs with the reference backend's
 *     (onnx-model-cli.ts: its exit codes; --seed seeds the inputs given no file, --timeout bounds each run).
 *   polyhal-conformance --backend ... --captured [--json out.json] [--seed N] [--filter OP] [--timeout MS]
 *     runs the suite in captured mode (captured.ts): each case captured and replayed, with new inputs against the
 *     oracle and with its own inputs bit for bit against the eager run; a backend without capture says so.
 * Numbers are decimal integers: --seed 0 to 2^32 − 1, --timeout 1 to 2^31 − 1 ms. --json and --html are
 * checked before any backend is created: a path whose directory is missing, a directory, or a file that
 * cannot be written is bad usage.
 * Exit code: 0 all passed, 1 a case failed or timed out, or a backend did not start (its factory
 * threw, e.g. BackendHookError), 2 bad usage (malformed option, a filter that matches no case, a
 * module that exports no factory or whose factory returns no backend, a report path that cannot be
 * written), a factory that does not settle within the timeout, or a report file that could not be
 * written at the end (disk full: the text report has printed already). The report (text, --json,
 * --html) prints whenever a backend was loaded: a backend that did not start has every case failed,
 * not run, with the reason.
 */
import { closeSync, constants, existsSync, openSync, type Stats, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { type ComputeBackend, DEFAULT_BACKENDS } from '@polyhal/hal';
import { htmlReport, textTable } from './report.js';
import { onnxTextReport } from './onnx/report.js';
import { type OnnxNodeTestsResult, runOnnxNodeTests } from './onnx/runner.js';
import { onnxModelCommand } from './onnx-model-cli.js';
import { capturedCommand } from './captured-cli.js';
import {
  type BackendFactory,
  type ConformanceResult,
  ConformanceTimeoutError,
  DEFAULT_TIMEOUT_MS,
  notStartedResult,
  runConformance,
  selectCases,
  selectContractCases,
} from './runner.js';

/**
 * Our backends by name: the default set of KNOWN_BACKENDS (cpu, wasm, webgpu), each created with its
 * defaults. A Map: a name such as '__proto__' or 'toString' is no backend.
 */
const BUILT_IN = new Map<string, () => Promise<BackendFactory>>(
  DEFAULT_BACKENDS.map((b) => [
    b.name,
    async () => {
      const entry = await b.load();
      return () => entry.create();
    },
  ]),
);
/** The values --backend takes, for --help and the unknown-backend error: 'cpu, wasm, webgpu, all'. */
const BACKEND_CHOICES = `${[...BUILT_IN.keys()].join(', ')}, all`;

/** A module path: its default export, `createBackend`, or its only exported function is the factory. */
async function moduleFactory(path: string): Promise<BackendFactory> {
  const m = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
  const candidates = [m['default'], m['createBackend'], ...Object.values(m)].filter((v) => typeof v === 'function');
  if (!candidates.length)
    throw new Error(`${path} exports no backend factory (export default () => backend, or createBackend)`);
  return candidates[0] as BackendFactory;
}

/** The members of `ComputeBackend` that the runner calls before any case; a factory's result must have them. */
const REQUIRED = ['fromArray', 'read', 'free', 'dispose', 'liveBufferCount', 'memoryStats'] as const;

/** `factory`, checked: a result that is not a backend is a usage error that says what it was. */
function checkedFactory(name: string, factory: BackendFactory): BackendFactory {
  return async () => {
    const be = (await factory()) as unknown;
    const o = be as Record<string, unknown> | null;
    const what = be === null ? 'null' : Array.isArray(be) ? 'an array' : typeof be;
    if (typeof o !== 'object' || o === null || typeof o['name'] !== 'string') {
      throw new UsageError(
        `${name}: the factory returned ${what}, not a ComputeBackend (an object with name, ` +
          `${REQUIRED.join(', ')}, ...)`,
      );
    }
    const missing = REQUIRED.filter((k) => typeof o[k] !== 'function');
    if (missing.length)
      throw new UsageError(
        `${name}: the factory returned an object that is not a ComputeBackend: no ` +
          `${missing.join(', ')} method${missing.length > 1 ? 's' : ''}`,
      );
    return be as ComputeBackend;
  };
}

/** A usage error found after parsing (bad module, bad filter): exit code 2. */
class UsageError extends Error {}

/**
 * A parser of a decimal integer option in [min, max] (no sign, exponent, hex or fraction); anything else is
 * a usage error that says what the option takes.
 */
const decimalInt =
  (flag: string, min: number, max: number, unit = '') =>
  (v: string): number => {
    const n = Number(v);
    if (!/^[0-9]+$/.test(v) || n < min || n > max)
      throw new InvalidArgumentError(`${flag} must be a decimal integer from ${min} to ${max}${unit}, got '${v}'.`);
    return n;
  };

/** Node runs a timer of more than 2^31 − 1 ms after 1 ms: the largest --timeout. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;
/** Case inputs hash the seed as 32 bits (random.ts): the largest --seed that is not another's alias. */
const MAX_SEED = 2 ** 32 - 1;

/**
 * Why `path` cannot take a report, or undefined when it can. Changes nothing: an existing file is opened
 * for writing (neither truncated nor appended to) and closed; a new one is created and removed at once; a
 * device or pipe (/dev/stdout) is taken as it is.
 */
function unwritable(path: string): string | undefined {
  const full = resolve(path);
  const cannot = (e: unknown) => `cannot be written (${(e as Error).message})`;
  let st: Stats | undefined;
  try {
    st = statSync(full);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ENOTDIR') {
      let p = dirname(full);
      while (!existsSync(p) && dirname(p) !== p) p = dirname(p);
      return `${p} is not a directory`;
    }
    if (code !== 'ENOENT') return cannot(e);
  }
  if (st?.isDirectory()) return 'is a directory, not a file';
  if (st && !st.isFile()) return undefined;
  if (!st && !existsSync(dirname(full))) return `the directory ${dirname(full)} does not exist`;
  try {
    if (st) closeSync(openSync(full, constants.O_WRONLY));
    else {
      closeSync(openSync(full, 'wx'));
      unlinkSync(full);
    }
  } catch (e) {
    return cannot(e);
  }
  return undefined;
}

/** Writes a report file; a failure (disk full) is said on stderr, by flag and path. Returns whether it was written. */
function writeReport(flag: string, path: string, text: string): boolean {
  try {
    writeFileSync(path, text);
    return true;
  } catch (e) {
    console.error(
      `error: ${flag} ${path}: the report could not be written (${(e as Error).message}); the text report ` +
        'above has the results',
    );
    return false;
  }
}

/** A parser of --tolerance: a decimal number in (0, 1]. */
function tolerance(v: string): number {
  const n = Number(v);
  if (!/^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(v) || !(n > 0 && n <= 1))
    throw new InvalidArgumentError(`--tolerance must be a decimal number in (0, 1], e.g. 1e-4, got '${v}'.`);
  return n;
}

/** What is wrong with the --onnx-model options together, if anything. */
function onnxModelUsage(o: {
  onnxModel?: string;
  onnxNodeTests?: string;
  html?: string;
  filter?: string;
  input?: string[];
  tolerance?: number;
}): string | undefined {
  if (o.onnxModel === undefined) {
    if (o.input) return '--input applies to --onnx-model';
    if (o.tolerance !== undefined) return '--tolerance applies to --onnx-model';
    return undefined;
  }
  if (o.onnxNodeTests !== undefined) return '--onnx-model and --onnx-node-tests are separate runs: give one';
  if (o.html !== undefined) return '--html is not available with --onnx-model (use --json)';
  if (o.filter !== undefined) return '--filter is not available with --onnx-model (it runs the whole model)';
  return undefined;
}

export async function main(argv: string[]): Promise<number> {
  const program = new Command()
    .name('polyhal-conformance')
    .description('Run the PolyHAL conformance suite against backends and the float64 oracle.')
    .option('--backend <name>', `${BACKEND_CHOICES}, or a path to a module exporting a backend factory`, 'all')
    .option('--json <file>', 'write the result matrix as JSON')
    .option('--html <file>', 'write an HTML report')
    .option('--seed <n>', `input seed (0 to ${MAX_SEED})`, decimalInt('--seed', 0, MAX_SEED), 1)
    .option('--filter <text>', 'only cases whose id contains this text (e.g. an op name)')
    .option(
      '--onnx-node-tests <dir>',
      "run ONNX's backend node tests from this directory (test_*/model.onnx, test_data_set_*/*.pb) " +
        'instead of the suite',
    )
    .option(
      '--onnx-model <file>',
      "run a whole ONNX model on each backend and compare every node's outputs with the reference backend's " +
        'instead of the suite',
    )
    .option(
      '--input <name=file>',
      '--onnx-model: the values of input name, from a .npy or TensorProto (.pb) file (repeatable; inputs ' +
        'given no file get seeded values where their dims are fixed)',
      (v: string, prev: string[] | undefined) => [...(prev ?? []), v],
    )
    .option(
      '--tolerance <x>',
      '--onnx-model: the error allowed per node output, relative to its largest |value| (default 1e-4; ' +
        '3e-4 on webgpu)',
      tolerance,
    )
    .option(
      '--captured',
      'run the suite in captured mode: each case captured, then replayed with new and with its inputs',
    )
    .option(
      '--timeout <ms>',
      `milliseconds the backend factory and each case may take to settle (1 to ${MAX_TIMEOUT_MS})`,
      decimalInt('--timeout', 1, MAX_TIMEOUT_MS, ' (milliseconds)'),
      DEFAULT_TIMEOUT_MS,
    )
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  try {
    program.parse(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) return e.code === 'commander.helpDisplayed' ? 0 : 2;
    throw e;
  }
  const o = program.opts<{
    backend: string;
    json?: string;
    html?: string;
    seed: number;
    filter?: string;
    timeout: number;
    onnxNodeTests?: string;
    onnxModel?: string;
    input?: string[];
    tolerance?: number;
    captured?: boolean;
  }>();
  const modelProblem = onnxModelUsage(o);
  if (modelProblem) {
    console.error(`error: ${modelProblem}`);
    return 2;
  }
  if (o.captured && (o.onnxNodeTests !== undefined || o.onnxModel !== undefined || o.html !== undefined)) {
    console.error('error: --captured runs the suite: it takes neither --onnx-node-tests, --onnx-model nor --html');
    return 2;
  }
  if (o.onnxNodeTests !== undefined && o.html !== undefined) {
    console.error('error: --html is not available with --onnx-node-tests (use --json for the per-test rows)');
    return 2;
  }
  if (
    o.onnxNodeTests === undefined &&
    o.onnxModel === undefined &&
    o.filter !== undefined &&
    selectCases(o.filter).length + selectContractCases(o.filter).length === 0
  ) {
    const ops = [...new Set(selectCases().map((c) => c.op))].join(', ');
    console.error(
      `error: --filter '${o.filter}' matches no case (case ids look like 'exp/float32/[17]' or ` +
        `'contract/...'; ops: ${ops})`,
    );
    return 2;
  }
  for (const [flag, path] of [
    ['--json', o.json],
    ['--html', o.html],
  ] as const) {
    const problem = path === undefined ? undefined : unwritable(path);
    if (problem) {
      console.error(`error: ${flag} ${path}: ${problem}`);
      return 2;
    }
  }
  const names = o.backend === 'all' ? [...BUILT_IN.keys()] : [o.backend];
  const results: ConformanceResult[] = [];
  let factoryTimedOut = false;
  const onnxRuns: OnnxNodeTestsResult[] = [];
  const modelBackends: { name: string; factory: BackendFactory }[] = [];
  for (const name of names) {
    let factory: BackendFactory;
    try {
      const isModule = name.includes('/') || name.endsWith('.js') || name.endsWith('.mjs');
      const builtIn = BUILT_IN.get(name);
      if (!builtIn && !isModule)
        throw new UsageError(`unknown backend '${name}' (${BACKEND_CHOICES}, or a module path)`);
      const load = builtIn ? builtIn() : moduleFactory(name);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const expired = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new ConformanceTimeoutError(`loading ${name}`, o.timeout)), o.timeout);
      });
      factory = checkedFactory(name, await Promise.race([load, expired]).finally(() => clearTimeout(timer)));
    } catch (e) {
      console.error(`error: ${name}: ${(e as Error).message}`);
      return 2;
    }
    if (o.onnxModel !== undefined || o.captured) {
      modelBackends.push({ name, factory });
      continue;
    }
    if (o.onnxNodeTests !== undefined) {
      try {
        onnxRuns.push(await runOnnxNodeTests(factory, o.onnxNodeTests, { filter: o.filter, timeoutMs: o.timeout }));
      } catch (e) {
        const m = (e as Error).message;
        console.error(`error: ${m.startsWith(`${name}: `) ? m : `${name}: ${m}`}`);
        return 2;
      }
      continue;
    }
    let result: ConformanceResult;
    try {
      result = await runConformance(factory, { seed: o.seed, filter: o.filter, timeoutMs: o.timeout });
    } catch (e) {
      // The factory returned no backend (usage), threw, or did not settle: the backend did not start.
      // The report still prints, every case failed and not run, with the reason.
      const m = (e as Error)?.message ?? String(e);
      console.error(`error: ${m.startsWith(`${name}: `) ? m : `${name}: ${m}`}`);
      if (e instanceof UsageError) return 2;
      if (e instanceof ConformanceTimeoutError) factoryTimedOut = true;
      result = notStartedResult(name, e, { seed: o.seed, filter: o.filter });
    }
    results.push(result);
    if (result.timedOut) {
      console.error(
        `error: ${name}: case ${result.timedOut} did not settle within ${o.timeout} ms; the run ` +
          `stopped there (raise --timeout if the backend is just slow)`,
      );
      break;
    }
  }
  if (o.captured)
    return capturedCommand(modelBackends, { seed: o.seed, filter: o.filter, timeoutMs: o.timeout, json: o.json });
  if (o.onnxModel !== undefined)
    return onnxModelCommand(
      {
        model: o.onnxModel,
        inputs: o.input ?? [],
        seed: o.seed,
        tolerance: o.tolerance,
        // a whole model takes longer than a case: 300 s unless --timeout says otherwise
        timeoutMs: program.getOptionValueSource('timeout') === 'default' ? undefined : o.timeout,
        writeJson: o.json === undefined ? undefined : (text) => writeReport('--json', o.json!, text),
      },
      modelBackends,
    );
  if (o.onnxNodeTests !== undefined) {
    console.log(onnxTextReport(onnxRuns));
    if (o.json && !writeReport('--json', o.json, JSON.stringify(onnxRuns, null, 2))) return 2;
    return onnxRuns.some((r) => r.failed > 0) ? 1 : 0;
  }
  console.log(textTable(results));
  const jsonWritten = !o.json || writeReport('--json', o.json, JSON.stringify(results, null, 2));
  const htmlWritten = !o.html || writeReport('--html', o.html, htmlReport(results));
  if (factoryTimedOut || !jsonWritten || !htmlWritten) return 2;
  return results.some((r) => r.failed > 0 || r.timedOut) ? 1 : 0;
}
