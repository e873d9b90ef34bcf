/**
 * InferenceSession: an ONNX model on a PolyHAL backend, with the API of onnxruntime-web's session.
 *
 * ```ts
 * const session = await InferenceSession.create(modelBytesOrPath, { backend: 'wasm' });
 * const { y } = await session.run({ x: { dtype: 'float32', dims: [1, 3], data: new Float32Array(3) } });
 * await session.release();
 * ```
 */
import {
  type ComputeBackend,
  createBackend,
  DEFAULT_BACKENDS,
  type DeviceBuffer,
  InvalidArgumentError,
  type NDArray,
  KNOWN_BACKENDS,
  nodeBuiltin,
  registeredBackends,
  type SelectionReport,
  UseAfterFreeError,
} from '@polyhal/hal';
import { dedupe, dryRun, staticCheck } from './check.js';
import { OnnxGraphError, OnnxUnsupportedError } from './errors.js';
import { emptyStats, type Exec, type RunStats, runGraph } from './executor.js';
import { type Feeds, type OutputTensor, type PreparedFeed, prepareFeeds, toOutput } from './feeds.js';
import { type GNode, Graph } from './graph.js';
import { fuseHardSwish } from './fuse-activation.js';
import { fuseElementwise } from './fuse-elementwise.js';
import { foldConvAffine } from './optimize.js';
import { type DecodeModelOptions, decodeModel, type OnnxModel, type OnnxValueInfo } from './proto.js';
import { externalDataFromDirectory, type SyncFileSystem } from './proto-external.js';
import { CapturedRuns, endRunCapture, replayRun, runKey } from './replay.js';
import { deviceDType } from './types.js';
import { constantValue, Heap, readHost, Scope, Value } from './values.js';

export interface SessionOptions {
  /**
   * Where the model runs: a backend name ('cpu', 'wasm', 'webgpu', 'reference': this project's are
   * imported when named), a ComputeBackend instance (used as is: `release()` does not dispose it), or
   * omitted for the usual selection (`createBackend()`: POLYHAL_BACKEND, polyhal.config.json, else the
   * best available of webgpu, wasm, cpu).
   */
  backend?: string | ComputeBackend;
  /**
   * Values of symbolic input dims by name (onnxruntime's freeDimensionOverrides): a feed must have them,
   * and the check at create plans every node with them.
   */
  freeDimensionOverrides?: Readonly<Record<string, number>>;
  /**
   * Capture and replay (onnxruntime's option of the same name), on backends that can (webgpu): the second run
   * of a feed signature (types, dims, host values) is recorded and later runs of it replay the recording
   * without lowering any node in JavaScript — the same kernels, the same bits. Default true; false runs every
   * node every time. Up to MAX_CAPTURED_RUNS recordings are kept, each holding its run's intermediates on the
   * device until `release()` (see replay.ts for what is never captured).
   */
  enableGraphCapture?: boolean;
  /**
   * The graph rewrites made at create (onnxruntime's option of the same name): 'disabled' none; 'basic' folds the
   * per-channel affine ops after each Conv into its weights (optimize.ts) and fuses the four-node hard swish into
   * one HardSwish (fuse-activation.ts); 'extended' and 'all' (the default) also fuse chains of elementwise nodes
   * into one FusedElementwise node each (fuse-elementwise.ts: one kernel per chain on webgpu). Per-node
   * conformance (`polyhal-conformance --onnx-model`) runs with 'basic', so that an error is named at the model's
   * own node. InvalidArgumentError for another value.
   */
  graphOptimizationLevel?: 'disabled' | 'basic' | 'extended' | 'all';
}

const OPTIMIZATION_LEVELS = ['disabled', 'basic', 'extended', 'all'] as const;

/** A node that has just run, as `RunOptions.onNode` sees it. */
export interface NodeRun {
  /** The node's name, or `#i` (its index in its graph) where the model gives none. */
  readonly node: string;
  /** Its op type. */
  readonly op: string;
  /** The If/Loop/Scan nodes (outermost first) whose subgraph holds the node; empty at the top level. */
  readonly path: readonly string[];
  /** Its output names in the model's order ('' marks an omitted optional output). */
  readonly outputNames: readonly string[];
  /**
   * Its outputs on the host by name (a device read per output, as `run` returns outputs). Valid only until
   * the callback's promise settles: the run frees values after their last use.
   */
  read(): Promise<Record<string, OutputTensor>>;
}

/** Options of one `InferenceSession.run`. */
export interface RunOptions {
  /**
   * Opt-in observer, called after each node has run (nodes of If/Loop/Scan subgraphs too, once per
   * iteration) with the node and a reader of its outputs. The run waits for the promise it returns; an error
   * it throws fails the run. For debugging, per-node timing and per-node conformance
   * (`polyhal-conformance --onnx-model`); without it a run reads nothing back but its outputs.
   */
  readonly onNode?: (n: NodeRun) => void | Promise<void>;
}

type Fs = SyncFileSystem & { promises: { readFile(p: string): Promise<Uint8Array> } };

/**
 * The bytes of a model and where they came from: a path is read with Node's fs (external data from the
 * model's directory), a URL (or a path where there is no fs: browsers) fetched.
 */
async function load(model: unknown): Promise<{ bytes: Uint8Array; options: DecodeModelOptions }> {
  if (model instanceof Uint8Array) return { bytes: model, options: {} };
  if (model instanceof ArrayBuffer) return { bytes: new Uint8Array(model), options: {} };
  if (typeof model !== 'string')
    throw new InvalidArgumentError('InferenceSession.create: the model must be a Uint8Array, an ArrayBuffer or a path');
  const fs = /^(https?|blob|data):/i.test(model) ? undefined : await nodeBuiltin<Fs>('fs');
  if (fs) {
    const cut = Math.max(model.lastIndexOf('/'), model.lastIndexOf('\\'));
    const externalData = externalDataFromDirectory(cut >= 0 ? model.slice(0, cut) : '.', fs);
    try {
      return { bytes: await fs.promises.readFile(model), options: { source: model, externalData } };
    } catch (e) {
      throw new InvalidArgumentError(`InferenceSession.create: cannot read ${model}: ${(e as Error).message}`);
    }
  }
  let res: Response;
  try {
    res = await fetch(model);
  } catch (e) {
    throw new InvalidArgumentError(`InferenceSession.create: cannot fetch ${model}: ${(e as Error).message}`);
  }
  if (!res.ok) throw new InvalidArgumentError(`InferenceSession.create: fetching ${model} answered ${res.status}`);
  return { bytes: new Uint8Array(await res.arrayBuffer()), options: { source: model } };
}

const isBackend = (b: unknown): b is ComputeBackend =>
  typeof b === 'object' && b !== null && typeof (b as ComputeBackend).fromArray === 'function';

async function resolveBackend(
  b: unknown,
): Promise<{ backend: ComputeBackend; owned: boolean; report?: SelectionReport }> {
  if (isBackend(b)) return { backend: b, owned: false };
  if (b !== undefined && typeof b !== 'string')
    throw new InvalidArgumentError(
      'InferenceSession.create: options.backend must be a backend name or a ComputeBackend',
    );
  // this project's backends register when their package is imported: import the ones named (or the default set)
  const wanted = b === undefined ? DEFAULT_BACKENDS : KNOWN_BACKENDS.filter((k) => k.name === b);
  const loaded = new Set(registeredBackends());
  await Promise.allSettled(wanted.filter((k) => !loaded.has(k.name)).map((k) => k.load()));
  const { backend, report } = await createBackend(b === undefined ? {} : { backend: b });
  return { backend, owned: true, report };
}

/** The executor's hook for `RunOptions.onNode`: the node's identity and a reader of its outputs. */
function observer(be: ComputeBackend, onNode: NonNullable<RunOptions['onNode']>): Exec['observe'] {
  return async (n, g, scope) => {
    const read = async (): Promise<Record<string, OutputTensor>> => {
      const out: Record<string, OutputTensor> = {};
      for (const name of n.node.outputs) {
        const v = name === '' ? undefined : scope.get(name);
        if (v) out[name] = toOutput(v.type, v.dims, v.host ?? (await be.read(v.dev!)));
      }
      return out;
    };
    await onNode({ node: n.name, op: n.op, path: g.path, outputNames: n.node.outputs, read });
  };
}

/**
 * An ONNX model ready to run on one backend: `create` decodes and checks it and uploads its constants,
 * `run` computes its outputs from feeds, `release` frees what it holds.
 */
export class InferenceSession {
  /** Names of the inputs `run` takes (initializers excluded), in the model's order. */
  readonly inputNames: readonly string[];
  /** Names of the outputs `run` returns, in the model's order. */
  readonly outputNames: readonly string[];
  /** The inputs' declared types and dims (null: symbolic, `dimParams` names it). */
  readonly inputMetadata: readonly OnnxValueInfo[];
  /** The outputs' declared types and dims, as the model declares them. */
  readonly outputMetadata: readonly OnnxValueInfo[];
  private released = false;
  private queue: Promise<unknown> = Promise.resolve();
  private last: RunStats | undefined;
  /** Outputs of nodes whose inputs are all constants, computed by the first run that reaches them. */
  private readonly folded = new Map<GNode, (Value | undefined)[]>();
  /** Recordings by feed signature, where the backend captures and enableGraphCapture is on (replay.ts). */
  private readonly captured: CapturedRuns | null;

  private constructor(
    /** The backend the model runs on. */
    readonly backend: ComputeBackend,
    private readonly owned: boolean,
    /** How the backend was chosen (where the session created it). */
    readonly selection: SelectionReport | undefined,
    private readonly graph: Graph,
    private readonly opset: number,
    private readonly constants: Map<Graph, Map<string, Value>>,
    private readonly pinned: Set<DeviceBuffer>,
    private readonly fixed: Readonly<Record<string, number>>,
    capture: boolean,
  ) {
    this.captured = capture ? new CapturedRuns() : null;
    this.inputMetadata = graph.inputs;
    this.outputMetadata = graph.outputs;
    this.inputNames = graph.inputs.map((v) => v.name);
    this.outputNames = graph.outputs.map((v) => v.name);
  }

  /**
   * Decodes the model (bytes, or a path read with Node's fs / a URL fetched where there is no fs),
   * folds the per-channel affine ops after each Conv (BatchNormalization, Mul/Add/Sub by a constant) into its
   * weights (optimize.ts: the conv then writes their output), fuses the Add → Clip → Mul → Div hard swish
   * into one HardSwish node (fuse-activation.ts) and chains of elementwise nodes into one FusedElementwise node
   * each (fuse-elementwise.ts; `graphOptimizationLevel` says which), picks the backend, checks the whole graph
   * and uploads the constants once.
   *
   * Errors: OnnxDecodeError (not an ONNX model), OnnxGraphError (a value never defined or defined twice, a
   * cycle), OnnxUnsupportedError listing every node the session cannot run (op, node name, reason) before
   * anything is computed, OnnxInt64RangeError (an int64 constant beyond int32), InvalidArgumentError (bad
   * options), and createBackend's errors (UnknownBackendError, BackendUnavailableError).
   */
  static async create(
    model: Uint8Array | ArrayBuffer | string,
    options: SessionOptions = {},
  ): Promise<InferenceSession> {
    if (typeof options !== 'object' || options === null)
      throw new InvalidArgumentError('InferenceSession.create: options must be an object');
    if (options.graphOptimizationLevel !== undefined && !OPTIMIZATION_LEVELS.includes(options.graphOptimizationLevel))
      throw new InvalidArgumentError(
        `InferenceSession.create: graphOptimizationLevel must be one of ${OPTIMIZATION_LEVELS.join(', ')}, not ` +
          `${String(options.graphOptimizationLevel)}`,
      );
    const fixed = options.freeDimensionOverrides ?? {};
    for (const [k, v] of Object.entries(fixed))
      if (!Number.isInteger(v) || v < 0)
        throw new InvalidArgumentError(`InferenceSession.create: freeDimensionOverrides.${k} must be a size, not ${v}`);
    const { bytes, options: decodeOptions } = await load(model);
    const decoded: OnnxModel = decodeModel(bytes, decodeOptions);
    const opset = decoded.opsets.get('') ?? 1;
    const graph = new Graph(decoded, opset);
    const level = OPTIMIZATION_LEVELS.indexOf(options.graphOptimizationLevel ?? 'all');
    if (level >= 1) {
      foldConvAffine(graph); // inference transforms on constants (optimize.ts)
      fuseHardSwish(graph); // Add → Clip → Mul → Div as one HardSwish (fuse-activation.ts)
    }
    if (level >= 2) fuseElementwise(graph); // chains of unary and scalar nodes as one node (fuse-elementwise.ts)
    const { backend, owned, report } = await resolveBackend(options.backend);
    const pinned = new Set<DeviceBuffer>();
    try {
      const failures = dedupe([...staticCheck(graph, backend), ...(await dryRun(graph, backend, opset, fixed))]);
      if (failures.length) throw new OnnxUnsupportedError(failures);
      const constants = new Map<Graph, Map<string, Value>>();
      const upload = (g: Graph): void => {
        const m = new Map<string, Value>();
        for (const [name, c] of g.constants) {
          if (!deviceDType(c.type)) continue;
          const v = constantValue(backend, c, name, c.type.startsWith('float'));
          if (v.dev) pinned.add(v.dev.buffer);
          m.set(name, v);
        }
        constants.set(g, m);
        for (const n of g.nodes) for (const sub of n.subgraphs.values()) upload(sub);
      };
      upload(graph);
      const capture =
        options.enableGraphCapture !== false && typeof backend.beginCapture === 'function' && !hasRandomOps(graph);
      return new InferenceSession(backend, owned, report, graph, opset, constants, pinned, fixed, capture);
    } catch (e) {
      for (const b of pinned) backend.deallocate(b);
      if (owned) backend.dispose();
      throw e;
    }
  }

  /** What the last run did: nodes on the host and the device, plans made, read-backs, peak memory (bytes). */
  get lastRun(): RunStats | undefined {
    return this.last && { ...this.last };
  }

  /**
   * Capture and replay (SessionOptions.enableGraphCapture): whether it is on, the recordings kept and the device
   * bytes they hold, and why feed signatures were refused (e.g. a condition read back from the device).
   */
  get graphCapture(): { enabled: boolean; runs: number; bytes: number; refused: string[] } {
    const c = this.captured;
    return { enabled: c !== null, runs: c?.size ?? 0, bytes: c?.bytes ?? 0, refused: c ? [...c.refused.values()] : [] };
  }

  /** Bytes of device memory the constants hold (uploaded once, freed by release()). */
  get constantBytes(): number {
    let n = 0;
    for (const b of this.pinned) n += b.byteLength;
    return n;
  }

  /**
   * Runs the model on `feeds` (every input by name: `{ dtype | type, dims, data }` — an onnxruntime Tensor
   * works as is — or a tensor of a backend such as an @polyhal/autograd Tensor) and resolves with every
   * output by name, on the host. Runs queue one after another. Every buffer a run creates is freed before
   * it settles, on success or failure.
   *
   * Errors: OnnxFeedError and OnnxInt64RangeError for bad feeds (before anything is uploaded);
   * OnnxUnsupportedError for a node that its run-time shapes make unsupported; OnnxNodeError for a node
   * that fails (its cause: the HAL's ShapeMismatchError, OutOfMemoryError, ...); UseAfterFreeError after
   * release(). `options.onNode` observes each node as it runs (see RunOptions).
   */
  run(feeds: Feeds, options: RunOptions = {}): Promise<Record<string, OutputTensor>> {
    if (this.released) return Promise.reject(new UseAfterFreeError('InferenceSession.run: the session was released'));
    const next = this.queue.then(() => this.runNow(feeds, options));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async runNow(feeds: Feeds, options: RunOptions): Promise<Record<string, OutputTensor>> {
    const be = this.backend;
    const prepared = prepareFeeds(this.graph.inputs, feeds, be, this.fixed);
    const key = this.captured && !options.onNode ? runKey(prepared) : null;
    if (key !== null) {
      const run = this.captured!.get(key);
      if (run) {
        const out = await replayRun(run, prepared);
        this.last = { ...run.stats, plans: 0, captured: false, replayed: true };
        return out;
      }
    }
    const capture = key !== null && this.captured!.shouldCapture(key);
    const heap = new Heap(be, this.pinned);
    const stats = emptyStats();
    const scope = new Scope(heap, undefined, this.constantsOf(this.graph));
    let capturing = false;
    const copies: NDArray[] = [];
    try {
      const uploaded: number[] = [];
      for (const [i, p] of prepared.entries()) {
        const v = await this.feedValue(p, heap);
        if (v.dev && !p.array) uploaded.push(i);
        scope.set(p.name, v);
      }
      if (capture) {
        be.beginCapture!(uploaded.map((i) => scope.get(prepared[i]!.name)!.dev!.buffer));
        capturing = true;
      }
      const x: Exec = {
        be,
        heap,
        opset: this.opset,
        stats,
        constants: (g) => this.constantsOf(g),
        folded: this.folded,
        observe: options.onNode && observer(be, options.onNode),
      };
      await runGraph(this.graph, scope, x);
      const values = this.graph.outputs.map((info) => {
        const v = scope.get(info.name);
        if (!v)
          throw new OnnxGraphError(`the model's output '${info.name}' was not produced (an omitted optional output?)`);
        return v;
      });
      if (capturing) {
        capturing = false;
        const names = this.graph.outputs.map((o) => o.name);
        const run = endRunCapture(be, names, values, uploaded, stats, copies);
        if (typeof run === 'string') this.captured!.refuse(key!, run);
        else this.captured!.store(key!, run);
      }
      const out: Record<string, OutputTensor> = {};
      for (const [k, info] of this.graph.outputs.entries()) {
        const v = values[k]!;
        out[info.name] = toOutput(v.type, v.dims, v.host ?? (await be.read(v.dev!)));
      }
      return out;
    } finally {
      if (capturing) be.abortCapture!();
      for (const c of copies) be.free(c);
      scope.clear();
      if (heap.held) heap.freeAll();
      stats.peakBytes = heap.peakBytes;
      this.last = stats;
    }
  }

  private constantsOf(g: Graph): ReadonlyMap<string, Value> {
    return this.constants.get(g)!;
  }

  private async feedValue(p: PreparedFeed, heap: Heap): Promise<Value> {
    const be = this.backend;
    if (p.host) return new Value(p.type, p.dims, p.host);
    if (p.array) {
      heap.callerPinned.add(p.array.buffer);
      return new Value(p.type, p.dims, undefined, p.array);
    }
    const dtype = deviceDType(p.type)!;
    const data = p.upload ?? (await readHost(p.foreign!.backend, p.foreign!.value));
    const v = new Value(p.type, p.dims);
    heap.attach(v, be.fromArray(data, p.dims, dtype));
    return v;
  }

  /**
   * Frees the constants and, where the session created its backend, disposes it (a backend passed in
   * stays usable), once the runs already asked for have settled. A run asked for after release() rejects
   * with UseAfterFreeError; releasing twice does nothing.
   */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await this.queue;
    this.captured?.releaseAll();
    for (const b of this.pinned) this.backend.deallocate(b);
    this.pinned.clear();
    if (this.owned) this.backend.dispose();
  }
}

/** Whether a graph (or a subgraph of it) has an op whose outputs differ from run to run: never captured. */
function hasRandomOps(g: Graph): boolean {
  return g.nodes.some(
    (n) => /^(Random|Bernoulli|Multinomial)/.test(n.op) || [...n.subgraphs.values()].some(hasRandomOps),
  );
}
