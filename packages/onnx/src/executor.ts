/**
 * Runs a Graph: nodes in topological order, each on the host (shape arithmetic: host-eval.ts), through
 * the session's control flow (If, Loop, Scan: control-flow.ts) or lowered onto the backend through the
 * op table, with a plan per node cached by input shapes, types and host values. Every buffer a node's
 * lowering creates that is not one of its outputs is freed at once; each value is unbound after its
 * last use (graph.ts), and its buffer freed with the last value that holds it (values.ts).
 *
 * The same code runs the dry pass of `InferenceSession.create` on a MetaBackend (`Exec.dry`): there an
 * unsupported node is recorded, and a node that fails for another reason (a shape that only the probe
 * dims make wrong) just leaves what depends on it unchecked.
 */
import { type ComputeBackend, type DeviceBuffer, isDType, type NDArray, PolyHalError } from '@polyhal/hal';
import { runControlFlow } from './control-flow.js';
import { OnnxNodeError, OnnxUnsupportedError, type UnsupportedNode } from './errors.js';
import { CONTROL_FLOW_OPS, type GNode, type Graph } from './graph.js';
import { DIMS_ONLY_OPS, evalHost, HOST_OPS } from './host-eval.js';
import { mappingOf } from './ops.js';
import type { OnnxTensor } from './proto.js';
import { Attrs, type Lowered, type NodeContext, NotExpressible, type OpMapping } from './table.js';
import { deviceDType } from './types.js';
import { type Heap, readHost, type Scope, uploadHost, Value } from './values.js';

/** What one run did; `InferenceSession.lastRun` reports it. */
export interface RunStats {
  /** Nodes evaluated on the host (shape arithmetic on small int64 tensors and scalars). */
  hostNodes: number;
  /** Nodes lowered onto the backend. */
  deviceNodes: number;
  /** Node plans made in this run (0 once every node's input shapes have been seen). */
  plans: number;
  /**
   * Device arrays read back mid-run: a host input of an op (a shape, axes) that was computed on the
   * device, an If or Loop condition computed there. 0 for graphs whose shape arithmetic stays on the host.
   */
  deviceReads: number;
  /** Host values (shape tensors, small feeds) uploaded because a device op reads them. */
  uploads: number;
  /**
   * The most bytes of device memory the run held at once: its intermediates, outputs and the
   * temporaries of the node running (not the constants, uploaded once at create, nor the caller's arrays).
   */
  peakBytes: number;
  /** The run was recorded for replay (the second run of its feed signature on a backend that captures: replay.ts). */
  captured: boolean;
  /**
   * The run replayed a recording: no node ran in JavaScript, the recorded kernels were encoded again in one
   * submission. The other counts are those of the captured run (the same work); `plans` is 0.
   */
  replayed: boolean;
}

export const emptyStats = (): RunStats => ({
  hostNodes: 0,
  deviceNodes: 0,
  plans: 0,
  deviceReads: 0,
  uploads: 0,
  peakBytes: 0,
  captured: false,
  replayed: false,
});

/** One run (or dry pass) of a graph and its subgraphs. */
export interface Exec {
  readonly be: ComputeBackend;
  readonly heap: Heap;
  readonly opset: number;
  readonly stats: RunStats;
  /** The constants of a graph as values on `be`. */
  constants(g: Graph): ReadonlyMap<string, Value>;
  /**
   * Outputs of nodes whose inputs are all constants, computed once and kept (pinned) for the session:
   * shape arithmetic on a subgraph's view of outer constants, a weight's transposition.
   */
  readonly folded: Map<GNode, (Value | undefined)[]>;
  /** Set in a dry pass: the unsupported nodes found. */
  readonly dry?: UnsupportedNode[];
  /**
   * Called after each node of `g` (and of its subgraphs) has run, with its outputs bound in `scope` and
   * before any is released; the run waits for it (`InferenceSession.run`'s `onNode`).
   */
  readonly observe?: (n: GNode, g: Graph, scope: Scope) => Promise<void>;
}

const HOST_INPUTS = new WeakMap<OpMapping, ReadonlySet<number>>();

/** The inputs a mapping reads on the host, as a set (made once per mapping). */
function hostInputs(mapping: OpMapping): ReadonlySet<number> {
  let s = HOST_INPUTS.get(mapping);
  if (!s) HOST_INPUTS.set(mapping, (s = new Set(mapping.host ?? [])));
  return s;
}

/** Ops whose outputs differ from run to run with the same inputs: never folded. */
const RANDOM = /^(Random|Bernoulli|Multinomial)/;

/** Runs every node of `g` in `scope` (where its inputs are bound); its outputs are left bound there. */
export async function runGraph(g: Graph, scope: Scope, x: Exec): Promise<void> {
  for (const v of g.unusedInputs) scope.drop(v);
  for (const n of g.nodes) {
    try {
      await runNode(n, g, scope, x);
    } catch (e) {
      if (!x.dry) throw wrap(e, n, g);
      if (e instanceof OnnxUnsupportedError) x.dry.push(...e.nodes.filter((u) => u.kind !== 'input'));
    }
    if (x.observe) await x.observe(n, g, scope);
    for (const v of n.release) scope.drop(v);
  }
}

/** An error of node `n` as the caller sees it: the session's own errors as they are, others in an OnnxNodeError. */
function wrap(e: unknown, n: GNode, g: Graph): unknown {
  if (e instanceof OnnxNodeError || e instanceof OnnxUnsupportedError) return e;
  if (e instanceof PolyHalError && e.name === 'OnnxInt64RangeError') return e;
  return new OnnxNodeError(n.op, n.name, g.path, e);
}

async function runNode(n: GNode, g: Graph, scope: Scope, x: Exec): Promise<void> {
  const inputs = n.node.inputs.map((v) => (v === '' ? undefined : scope.get(v)));
  const absent = n.node.inputs.find((v, i) => v !== '' && !inputs[i]);
  if (absent !== undefined) {
    if (x.dry) return; // a node before it failed in the dry pass: nothing to check here
    throw new OnnxNodeError(n.op, n.name, g.path, new Error(`its input '${absent}' was not produced`));
  }
  if (n.fusedFrom && inputs[0]?.host && !inputs[0].dev) {
    // a fused chain on a host value (shape arithmetic): its nodes one by one, on the host as before fusion
    for (const link of n.fusedFrom) await runNode(link, g, scope, x);
    for (const link of n.fusedFrom.slice(0, -1)) scope.drop(link.node.outputs[0]!);
    return;
  }
  if (CONTROL_FLOW_OPS.has(n.op)) return runControlFlow(n, scope, inputs, x, runGraph);
  const cached = x.folded.get(n);
  if (cached) {
    n.node.outputs.forEach((name, k) => name !== '' && cached[k] && scope.set(name, cached[k]));
    return;
  }
  const fold = inputs.some((v) => v) && inputs.every((v) => !v || v.pinned) && !RANDOM.test(n.op);
  if (HOST_OPS.has(n.op) && (DIMS_ONLY_OPS.has(n.op) || inputs.every((v) => !v || v.host))) {
    const out = evalHost(
      n.node,
      x.opset,
      inputs.map((v) => (v?.host ? v.hostTensor() : undefined)),
      inputs.map((v) => v?.dims),
      n.outputTypes,
    );
    if (out) {
      const v = Value.fromHost(out[0]!, fold);
      scope.set(n.node.outputs[0]!, v);
      if (fold) x.folded.set(n, [v]);
      x.stats.hostNodes++;
      return;
    }
  }
  const mapping = mappingOf(n.node.domain, n.op);
  if (!mapping)
    throw unsupported(n, g, new NotExpressible('op', `op ${n.node.domain ? `${n.node.domain}.` : ''}${n.op}`));
  const host = hostInputs(mapping);
  for (const [i, v] of inputs.entries()) {
    if (!v) continue;
    if (host.has(i) && !v.host) {
      v.host = await readHost(x.be, v.dev!);
      x.stats.deviceReads++;
    } else if (!host.has(i) && !v.dev) {
      x.heap.attach(v, uploadHost(x.be, v, n.node.inputs[i]!));
      x.stats.uploads++;
    }
  }
  let key = '';
  for (let i = 0; i < inputs.length; i++) {
    const v = inputs[i];
    key += v ? `|${v.type}[${v.dims.join(',')}]${host.has(i) ? `=${v.host!.join(',')}` : ''}` : '|';
  }
  let lowered = n.plans.get(key);
  if (!lowered) {
    try {
      lowered = plan(mapping, contextFor(n, x, inputs, host), x.be);
    } catch (e) {
      if (e instanceof NotExpressible) throw unsupported(n, g, e);
      throw e;
    }
    n.plans.set(key, lowered);
    x.stats.plans++;
  }
  const devIn = inputs.map((v, i) => (v && !host.has(i) ? v.dev : undefined));
  const kept: (Value | undefined)[] = [];
  execute(
    x,
    (be) => lowered(be, devIn),
    (outs) =>
      n.node.outputs.forEach((name, k) => {
        const y = outs[k];
        if (name === '' || !y) return;
        const t = n.outputTypes[k]!;
        const v = new Value(t && deviceDType(t) === y.dtype ? t : y.dtype, y.shape, undefined, undefined, fold);
        x.heap.attach(v, y); // a folded output is pinned: the session keeps its buffer
        scope.set(name, v);
        kept[k] = v;
      }),
  );
  if (fold) x.folded.set(n, kept);
  x.stats.deviceNodes++;
}

function unsupported(n: GNode, g: Graph, e: NotExpressible): OnnxUnsupportedError {
  return new OnnxUnsupportedError([{ op: n.op, node: n.name, kind: e.kind, reason: e.reason, path: g.path }]);
}

/** The mapping's plan after the runner's checks: dtypes it accepts (int64 as int32) and every attribute read. */
function plan(mapping: OpMapping, ctx: NodeContext, be: ComputeBackend): Lowered {
  const host = new Set(mapping.host ?? []);
  const dtypes = mapping.dtypes ?? ['float32'];
  const accepts = (t: string): boolean => dtypes.includes(t) || (t === 'int64' && dtypes.includes('int32'));
  for (const t of [...ctx.inputTypes.filter((_, i) => !host.has(i)), ...ctx.outputTypes]) {
    if (t !== '' && !accepts(t)) throw new NotExpressible('dtype', `dtype ${t}`);
    if (isDType(t) && !(be.supportsDType?.(t) ?? t !== 'float64'))
      throw new NotExpressible('dtype', `dtype ${t} (not on backend ${be.name})`);
  }
  const lowered = mapping.plan(ctx);
  const unread = ctx.attrs.unread();
  if (unread.length)
    throw new NotExpressible('attribute', `attribute ${unread.map((a) => `'${a}'`).join(', ')} not mapped`);
  return lowered;
}

const TYPED: Record<string, (d: Float64Array) => NonNullable<OnnxTensor['data']>> = {
  float32: (d) => Float32Array.from(d),
  float16: (d) => Float32Array.from(d),
  float64: (d) => d,
  int64: (d) => BigInt64Array.from(d, (v) => BigInt(v)),
};

/** The NodeContext of a node with real input shapes, types and host values (the runner's conventions). */
function contextFor(n: GNode, x: Exec, inputs: (Value | undefined)[], host: ReadonlySet<number>): NodeContext {
  const asHal = (t: string): string => (t === 'int64' ? 'int32' : t);
  return {
    node: n.node,
    opset: x.opset,
    attrs: new Attrs(n.op, n.node.attributes),
    // device values of int64 are int32 on the HAL; host inputs keep their type
    inputTypes: inputs.map((v, i) => (!v ? '' : host.has(i) ? v.type : asHal(v.type))),
    outputTypes: n.outputTypes.map(asHal),
    inputShapes: inputs.map((v) => v?.dims),
    hostInputs: inputs.map((v, i) =>
      v && host.has(i)
        ? {
            name: n.node.inputs[i]!,
            dtype: v.type,
            dims: [...v.dims],
            data: (TYPED[v.type] ?? ((d: Float64Array) => Int32Array.from(d)))(v.host!),
          }
        : undefined,
    ),
    numbers: (i) => {
      const v = inputs[i];
      if (!v) return undefined;
      if (!v.host) throw new NotExpressible('input', `input ${i} is not on the host`);
      return Array.from(v.host);
    },
  };
}

const isArray = (v: unknown): v is NDArray =>
  typeof v === 'object' && v !== null && 'buffer' in v && 'shape' in v && 'strides' in v;
const isBuffer = (v: unknown): v is DeviceBuffer =>
  typeof v === 'object' && v !== null && 'byteLength' in v && 'owner' in v && 'id' in v && !('buffer' in v);

/**
 * A view of a backend whose methods record the buffer of every array (or buffer) they return into `sink` (while
 * it is set): one per backend, its method wrappers made once (a node's lowering calls through it every run).
 */
interface Tracker {
  readonly view: ComputeBackend;
  sink: DeviceBuffer[] | null;
}

const trackers = new WeakMap<ComputeBackend, Tracker>();

function trackerOf(be: ComputeBackend): Tracker {
  const known = trackers.get(be);
  if (known) return known;
  const wrappers = new Map<PropertyKey, (...args: unknown[]) => unknown>();
  const tracker: Tracker = { view: be, sink: null };
  const note = (r: unknown): void => {
    const sink = tracker.sink;
    if (!sink) return;
    if (isArray(r)) sink.push(r.buffer);
    else if (isBuffer(r)) sink.push(r);
  };
  (tracker as { view: ComputeBackend }).view = new Proxy(be, {
    get(target, key) {
      const v = Reflect.get(target, key, target) as unknown;
      if (typeof v !== 'function') return v;
      let w = wrappers.get(key);
      if (!w) {
        // the method is looked up at each call: an instance may replace one (compile watches the random ones)
        w = (...args: unknown[]) => {
          const r = (Reflect.get(target, key, target) as (...a: unknown[]) => unknown).apply(target, args);
          if (Array.isArray(r)) r.forEach(note);
          else if (isArray(r) || isBuffer(r)) note(r);
          else if (typeof r === 'object' && r !== null && !(r instanceof Promise)) Object.values(r).forEach(note);
          return r;
        };
        wrappers.set(key, w);
      }
      return w;
    },
  });
  trackers.set(be, tracker);
  return tracker;
}

/**
 * Runs `fn` on a tracking view of the backend, hands its outputs to `bind` (which binds the ones kept),
 * then frees every buffer `fn` created that nothing holds: its temporaries and unused outputs.
 */
export function execute(x: Exec, fn: (be: ComputeBackend) => NDArray[], bind: (outs: NDArray[]) => void): void {
  const created: DeviceBuffer[] = [];
  const tracker = trackerOf(x.be);
  const outer = tracker.sink;
  tracker.sink = created;
  try {
    const outs = fn(tracker.view);
    tracker.sink = outer;
    let fresh = 0;
    for (const b of new Set(created)) if (!x.heap.isHeld(b)) fresh += b.byteLength;
    x.heap.notePeak(fresh);
    bind(outs);
  } finally {
    tracker.sink = outer;
    for (const b of new Set(created)) if (!x.heap.isHeld(b)) x.be.deallocate(b);
  }
}
