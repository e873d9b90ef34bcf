/**
 * Conformance of whole ONNX models: `runOnnxModel` runs a model through InferenceSession on the reference
 * (@polyhal/backend-reference: float64 arithmetic rounded once per op; cpu where it is not installed or
 * cannot run the model), then on each backend, and compares every node's outputs with the reference's as
 * they are produced (InferenceSession.run's `onNode`). Nodes run in one deterministic order, so the first
 * output beyond tolerance names the node where a backend leaves it: the nodes before it agreed.
 */
import { type ComputeBackend, KNOWN_BACKENDS } from '@polyhal/hal';
import { type Feeds, InferenceSession, type NodeRun, OnnxUnsupportedError, type OutputTensor } from '@polyhal/onnx';
import { compareOutput, modelTolerance, type OutputComparison } from './onnx-model-compare.js';
import type { InputSource } from './onnx-model-inputs.js';
import { type BackendFactory, ConformanceTimeoutError } from './runner.js';

/** A backend to check: its name (for reports and the tolerance table) and its factory. */
export interface ModelBackend {
  /** Its name (`cpu`, `wasm`, `webgpu`, ...): reports and the tolerance table use it. */
  readonly name: string;
  /** Makes the backend the model runs on (the run disposes it). */
  readonly factory: BackendFactory;
}

/** Options of runOnnxModel. */
export interface OnnxModelOptions {
  /**
   * Feeds by input name (every input). `polyhal-conformance` builds them with `modelFeeds`: `--input` files,
   * generated values for the rest.
   */
  feeds: Feeds;
  /** Where each input came from, copied into the result for the report. */
  inputSources?: readonly InputSource[];
  /** The error allowed per node output (relative to its scale) for every backend; default: modelTolerance(name). */
  tolerance?: number;
  /** Milliseconds each backend's whole run (factory, create, run) may take; default 300 000. */
  timeoutMs?: number;
  /** The reference; default: the `reference` backend, else cpu. */
  reference?: ModelBackend;
}

/** One backend's run of the model, node by node against the reference. */
export interface OnnxModelBackendResult {
  /** The backend's name. */
  backend: string;
  /** Its device. */
  deviceName: string;
  /** passed: every output within tolerance; failed: some beyond it; error: the run did not finish. */
  status: 'passed' | 'failed' | 'error';
  /** Nodes observed (a node of a Loop or Scan body once per iteration). */
  nodes: number;
  /** Node outputs compared. */
  outputs: number;
  /** Node outputs beyond tolerance. */
  failures: number;
  /** The first output beyond tolerance, in the order the nodes ran: the node where the backend leaves it. */
  firstFailure?: OutputComparison;
  /** The output with the largest error (relative to its scale). */
  worst?: OutputComparison;
  /** The model's outputs, each compared. */
  modelOutputs: OutputComparison[];
  /** For status 'error': what stopped the run (the typed error's name and message). */
  error?: string;
  /** Milliseconds of the run with per-node reads (not a performance figure). */
  ms: number;
}

/** What runOnnxModel returns: the reference it compared with, the inputs, and one result per backend. */
export interface OnnxModelResult {
  /** The model's path, or 'model' for bytes. */
  model: string;
  /** The backend every node was compared with, and its device. */
  reference: string;
  /** The reference backend's device. */
  referenceDevice: string;
  /** Why the reference is not the `reference` backend, where it is not. */
  referenceNote?: string;
  /** Each input, with where its values came from. */
  inputs: readonly InputSource[];
  /** Nodes the reference run observed. */
  nodes: number;
  /** One result per backend checked, in the order given. */
  results: OnnxModelBackendResult[];
}

/** One node's outputs as observed: its identity and host values. */
interface Observed {
  node: string;
  path: readonly string[];
  op: string;
  outputs: Record<string, OutputTensor>;
}

/** The reference backend where its package is installed, else undefined. */
async function referenceFactory(): Promise<BackendFactory | undefined> {
  const known = KNOWN_BACKENDS.find((k) => k.name === 'reference');
  try {
    const entry = await known!.load();
    return () => entry.create();
  } catch {
    return undefined;
  }
}

async function cpuFactory(): Promise<BackendFactory> {
  const entry = await KNOWN_BACKENDS.find((k) => k.name === 'cpu')!.load();
  return () => entry.create();
}

/** `p`, or a ConformanceTimeoutError naming `what` after `ms`. */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ConformanceTimeoutError(what, ms)), ms);
  });
  return Promise.race([p, expired]).finally(() => clearTimeout(timer));
}

/** Runs the model on a backend, giving each node's outputs to `observe`; disposes the backend. */
async function observedRun(
  model: Uint8Array | string,
  be: ComputeBackend,
  feeds: Feeds,
  observe: (o: Observed) => void,
): Promise<Record<string, OutputTensor>> {
  // 'basic': no elementwise chain fusion, so that an error is named at the model's own node
  const session = await InferenceSession.create(model, { backend: be, graphOptimizationLevel: 'basic' });
  try {
    return await session.run(feeds, {
      onNode: async (n: NodeRun) => observe({ node: n.node, path: n.path, op: n.op, outputs: await n.read() }),
    });
  } finally {
    await session.release();
  }
}

const describeError = (e: unknown): string => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));

/**
 * Runs `model` (bytes or a path) on the reference, then on each of `backends`, comparing every node's outputs
 * with the reference's. A backend whose factory, session or run fails gets status 'error' with the reason.
 *
 * Errors (nothing compared): the reference's — OnnxDecodeError for bytes that are not a model, OnnxGraphError,
 * OnnxUnsupportedError, OnnxFeedError for feeds that do not fit the model's inputs, OnnxNodeError — as thrown.
 * The reference run keeps every node's outputs on the host until the last backend is compared.
 */
export async function runOnnxModel(
  model: Uint8Array | string,
  backends: readonly ModelBackend[],
  options: OnnxModelOptions,
): Promise<OnnxModelResult> {
  const timeoutMs = options.timeoutMs ?? 300_000;
  let reference = options.reference;
  let referenceNote: string | undefined;
  if (!reference) {
    const factory = await referenceFactory();
    reference = factory ? { name: 'reference', factory } : { name: 'cpu', factory: await cpuFactory() };
    if (!factory) referenceNote = '@polyhal/backend-reference is not installed: cpu is the reference';
  }
  /** The reference's run: every node's outputs in order, the model's outputs, its device. */
  const referenceRun = async (ref: ModelBackend) => {
    const be = await ref.factory();
    const observed: Observed[] = [];
    try {
      const run = observedRun(model, be, options.feeds, (o) => observed.push(o));
      return { observed, outputs: await within(run, timeoutMs, 'the reference run'), device: be.deviceName };
    } finally {
      be.dispose();
    }
  };
  let ref: Awaited<ReturnType<typeof referenceRun>>;
  try {
    ref = await referenceRun(reference);
  } catch (e) {
    // a model the reference backend cannot run (an op or dtype it lacks) is compared with cpu instead
    if (options.reference || reference.name !== 'reference' || !(e instanceof OnnxUnsupportedError)) throw e;
    referenceNote = `the reference backend cannot run this model (${e.message.split('\n')[0]}): cpu is the reference`;
    reference = { name: 'cpu', factory: await cpuFactory() };
    ref = await referenceRun(reference);
  }
  const { observed, outputs: refOutputs, device: referenceDevice } = ref;
  const results: OnnxModelBackendResult[] = [];
  for (const b of backends) {
    results.push(await checkBackend(model, b, options, observed, refOutputs, timeoutMs));
  }
  return {
    model: typeof model === 'string' ? model : 'model',
    reference: reference.name,
    referenceDevice,
    ...(referenceNote ? { referenceNote } : {}),
    inputs: options.inputSources ?? [],
    nodes: observed.length,
    results,
  };
}

async function checkBackend(
  model: Uint8Array | string,
  b: ModelBackend,
  options: OnnxModelOptions,
  observed: readonly Observed[],
  refOutputs: Record<string, OutputTensor>,
  timeoutMs: number,
): Promise<OnnxModelBackendResult> {
  const tolerance = options.tolerance ?? modelTolerance(b.name);
  const r: OnnxModelBackendResult = {
    backend: b.name,
    deviceName: '',
    status: 'passed',
    nodes: 0,
    outputs: 0,
    failures: 0,
    modelOutputs: [],
    ms: 0,
  };
  const note = (c: OutputComparison): void => {
    r.outputs++;
    if (!c.pass) {
      r.failures++;
      r.firstFailure ??= c;
    }
    if (!r.worst || c.error > r.worst.error) r.worst = c;
  };
  let diverged: string | undefined;
  const observe = (o: Observed): void => {
    const k = r.nodes++;
    const want = observed[k];
    if (diverged) return;
    if (!want || want.node !== o.node || want.path.join('>') !== o.path.join('>')) {
      // control flow took another branch or iteration count than on the reference: nothing more lines up
      diverged = `node ${k + 1} is ${o.node} (${o.op}), the reference's ${want ? `${want.node} (${want.op})` : 'none'}`;
      note({
        node: o.node,
        path: o.path,
        op: o.op,
        output: '',
        dtype: '',
        dims: [],
        maxAbsError: Infinity,
        scale: 0,
        error: Infinity,
        tolerance,
        pass: false,
        reason: `the run took another path than the reference's (${diverged})`,
      });
      return;
    }
    for (const [name, w] of Object.entries(want.outputs)) note(compareOutput(o, name, o.outputs[name], w, tolerance));
  };
  const start = performance.now();
  let be: ComputeBackend | undefined;
  try {
    const outputs = await within(
      (async () => {
        be = await b.factory();
        r.deviceName = be.deviceName;
        return observedRun(model, be, options.feeds, observe);
      })(),
      timeoutMs,
      `${b.name}: the model's run`,
    );
    if (!diverged && r.nodes !== observed.length)
      r.modelOutputs.push({
        ...{ node: '(model)', path: [], op: '', output: '', dtype: '', dims: [] },
        ...{ maxAbsError: Infinity, scale: 0, error: Infinity, tolerance, pass: false },
        reason: `${r.nodes} nodes ran, the reference's ${observed.length}`,
      });
    for (const [name, w] of Object.entries(refOutputs))
      r.modelOutputs.push(
        compareOutput({ node: '(model output)', path: [], op: '' }, name, outputs[name], w, tolerance),
      );
    r.status = r.failures > 0 || r.modelOutputs.some((c) => !c.pass) ? 'failed' : 'passed';
  } catch (e) {
    r.status = 'error';
    r.error = describeError(e);
  } finally {
    r.ms = performance.now() - start;
    try {
      be?.dispose();
    } catch {
      // a backend that fails to dispose after a failed run: its result says what failed first
    }
  }
  return r;
}
