/**
 * A decoded ONNX graph made ready to run: nodes in topological order, each value's ONNX type, the
 * constants (initializers, Constant nodes, and host shape arithmetic on them folded once), the values a
 * subgraph reads from the graphs around it, and each value's last use, after which a run frees it.
 */
import { OnnxGraphError } from './errors.js';
import { evalHost, HOST_MAX, HOST_OPS, type HostTensor, hostFromOnnx } from './host-eval.js';
import type { OnnxAttribute, OnnxGraph, OnnxNode, OnnxTensor, OnnxValueInfo } from './proto.js';
import type { Lowered } from './table.js';
import { constantType, inferOutputTypes } from './types.js';

/** The ops the session runs itself (subgraphs), not through the op table. */
export const CONTROL_FLOW_OPS: ReadonlySet<string> = new Set(['If', 'Loop', 'Scan']);

/** A value known before any run: an initializer, a Constant node's value or a folded shape computation. */
export interface ConstantDef {
  readonly type: string;
  readonly dims: readonly number[];
  /** Host values (one float64 each), for constants of at most HOST_MAX elements. */
  readonly host?: Float64Array;
  /** The decoded data, uploaded once when a device op reads the constant. */
  readonly data?: OnnxTensor['data'];
}

export interface GNode {
  readonly node: OnnxNode;
  /** The node's name, or `#i` (its position in its graph) where the model gives none. */
  readonly name: string;
  readonly op: string;
  /** Subgraphs by attribute name (If: then_branch, else_branch; Loop, Scan: body). */
  readonly subgraphs: ReadonlyMap<string, Graph>;
  /** Values of this graph or the ones around it that the subgraphs read (beyond `node.inputs`). */
  readonly implicit: readonly string[];
  readonly inputTypes: readonly string[];
  readonly outputTypes: readonly string[];
  /** Names of this graph to unbind once the node has run (their last use). */
  readonly release: string[];
  /** Plans by input shapes, types and host values (a repeated run does not plan again). */
  readonly plans: Map<string, Lowered>;
  /**
   * The nodes a fused node replaced, in order (fuse-elementwise.ts): run one by one instead where its input is
   * a host value (shape arithmetic stays on the host).
   */
  readonly fusedFrom?: readonly GNode[];
}

export class Graph {
  readonly nodes: GNode[] = [];
  readonly constants = new Map<string, ConstantDef>();
  /** Every value's ONNX type ('' where unknown), including the outer-scope values this graph reads. */
  readonly types = new Map<string, string>();
  /** Names defined outside this graph that its nodes (or their subgraphs) read. */
  readonly freeVars: string[] = [];
  /** Graph inputs no node reads (unbound as a run starts). */
  readonly unusedInputs: string[] = [];
  /** Graph inputs that are not initializers (what a caller or the enclosing op must feed). */
  readonly inputs: readonly OnnxValueInfo[];
  readonly outputs: readonly OnnxValueInfo[];

  constructor(
    readonly source: OnnxGraph,
    readonly opset: number,
    /** The If/Loop/Scan nodes (outermost first) whose attribute holds this graph. */
    readonly path: readonly string[] = [],
    outer: ReadonlyMap<string, string> = new Map(),
  ) {
    const inits = new Set(source.initializers.map((t) => t.name));
    this.inputs = source.inputs.filter((v) => !inits.has(v.name));
    this.outputs = source.outputs;
    const declared = new Map<string, string>();
    for (const v of [...source.valueInfo, ...source.outputs]) if (v.dtype) declared.set(v.name, v.dtype);
    const defined = new Set<string>();
    const define = (name: string, where: string): void => {
      if (name === '') return;
      if (defined.has(name)) throw new OnnxGraphError(`${this.where()}: value '${name}' is defined twice (${where})`);
      defined.add(name);
    };
    for (const v of source.inputs) {
      define(v.name, 'graph input');
      this.types.set(v.name, v.dtype ?? '');
    }
    for (const t of source.initializers) {
      if (!source.inputs.some((v) => v.name === t.name)) define(t.name, 'initializer');
      this.constants.set(t.name, constantOf(t));
      this.types.set(t.name, t.dtype);
    }
    const named = source.nodes.map((n, i) => ({ node: n, name: n.name || `#${i}`, index: i }));
    for (const { node, name } of named) for (const o of node.outputs) define(o, `output of node ${name}`);
    // Free variables of each node's subgraphs: decided by names alone, before types (topological order needs them).
    const implicitOf = named.map(({ node }) => subgraphFreeVars(node));
    for (const [k, { node, name }] of named.entries())
      for (const v of [...node.inputs, ...implicitOf[k]!])
        if (v !== '' && !defined.has(v) && !this.freeVars.includes(v)) {
          if (!outer.has(v))
            throw new OnnxGraphError(
              `${this.where()}: node ${name} (${node.opType}) reads '${v}', which is never defined`,
            );
          this.freeVars.push(v);
          this.types.set(v, outer.get(v)!);
        }
    const order = topologicalOrder(named, implicitOf, this.where());
    for (const k of order) this.addNode(named[k]!.node, named[k]!.name, implicitOf[k]!, declared);
    this.planReleases();
  }

  /** "the graph" or the path of the node whose subgraph this is, for messages. */
  where(): string {
    return this.path.length ? `subgraph of ${this.path.join(' > ')}` : 'the graph';
  }

  private addNode(node: OnnxNode, name: string, implicit: string[], declared: Map<string, string>): void {
    const inputTypes = node.inputs.map((v) => (v === '' ? '' : (this.types.get(v) ?? '')));
    if (node.opType === 'Constant' && node.domain === '' && node.outputs.length === 1) {
      const c = constantNode(node);
      if (c) {
        this.constants.set(node.outputs[0]!, c);
        this.types.set(node.outputs[0]!, c.type);
        return;
      }
    }
    const subgraphs = new Map<string, Graph>();
    for (const a of node.attributes) {
      if (a.type !== 5) continue;
      subgraphs.set(a.name, new Graph(a.value as OnnxGraph, this.opset, [...this.path, name], this.types));
    }
    const body = subgraphs.get('body') ?? subgraphs.get('then_branch');
    let bodyOutputs = body?.outputs.map((v) => v.dtype ?? '');
    if (node.opType === 'Loop') bodyOutputs = bodyOutputs?.slice(1);
    const outputTypes = inferOutputTypes(node, inputTypes, bodyOutputs).map((t, i) => {
      const o = node.outputs[i]!;
      return declared.get(o) || t;
    });
    node.outputs.forEach((o, i) => o !== '' && this.types.set(o, outputTypes[i]!));
    if (this.fold(node, outputTypes)) return;
    this.nodes.push({
      node,
      name,
      op: node.opType,
      subgraphs,
      implicit,
      inputTypes,
      outputTypes,
      release: [],
      plans: new Map(),
    });
  }

  /** Host shape arithmetic whose inputs are all constants runs once, here: its result is a constant. */
  private fold(node: OnnxNode, outputTypes: string[]): boolean {
    if (!HOST_OPS.has(node.opType) || node.opType === 'Shape' || node.opType === 'Size') return false;
    const inputs: (HostTensor | undefined)[] = [];
    for (const v of node.inputs) {
      if (v === '') {
        inputs.push(undefined);
        continue;
      }
      const c = this.constants.get(v);
      if (!c?.host) return false;
      inputs.push({ type: c.type, dims: c.dims, data: c.host });
    }
    const out = evalHost(
      node,
      this.opset,
      inputs,
      inputs.map((t) => t?.dims),
      outputTypes,
    );
    if (!out) return false;
    this.constants.set(node.outputs[0]!, { type: out[0]!.type, dims: out[0]!.dims, host: out[0]!.data });
    return true;
  }

  /** The nodes that read each value (inputs and subgraphs' implicit reads; a node once per value), in order. */
  readers(): Map<string, GNode[]> {
    const readers = new Map<string, GNode[]>();
    for (const n of this.nodes)
      for (const v of new Set([...n.node.inputs, ...n.implicit])) {
        const r = readers.get(v);
        if (r) r.push(n);
        else readers.set(v, [n]);
      }
    return readers;
  }

  /**
   * Each local value is released after its last reader; one nobody reads, right after its producer. Planned
   * again (from scratch) by a transform that moves or replaces nodes (fuse-activation.ts).
   */
  planReleases(): void {
    for (const g of this.nodes) g.release.length = 0;
    this.unusedInputs.length = 0;
    const keep = new Set(this.outputs.map((v) => v.name));
    const last = new Map<string, number>();
    this.nodes.forEach((g, i) => {
      for (const v of [...g.node.inputs, ...g.implicit]) if (v !== '') last.set(v, i);
    });
    const local = (v: string): boolean => !keep.has(v) && !this.constants.has(v) && !this.freeVars.includes(v);
    for (const g of this.nodes)
      for (const o of g.node.outputs) if (o !== '' && !last.has(o) && local(o)) g.release.push(o);
    for (const [v, i] of last) if (local(v)) this.nodes[i]!.release.push(v);
    for (const v of this.inputs) if (!last.has(v.name) && local(v.name)) this.unusedInputs.push(v.name);
  }
}

/** Names a node's subgraphs read from outside themselves (recursively), in first-use order. */
function subgraphFreeVars(node: OnnxNode): string[] {
  const out: string[] = [];
  for (const a of node.attributes) {
    const graphs = a.type === 5 ? [a.value as OnnxGraph] : a.type === 10 ? (a.value as OnnxGraph[]) : [];
    for (const g of graphs) for (const v of graphFreeVars(g)) if (!out.includes(v)) out.push(v);
  }
  return out;
}

function graphFreeVars(g: OnnxGraph): string[] {
  const inside = new Set<string>([...g.inputs.map((v) => v.name), ...g.initializers.map((t) => t.name)]);
  for (const n of g.nodes) for (const o of n.outputs) inside.add(o);
  const out: string[] = [];
  for (const n of g.nodes)
    for (const v of [...n.inputs, ...subgraphFreeVars(n)])
      if (v !== '' && !inside.has(v) && !out.includes(v)) out.push(v);
  for (const v of g.outputs) if (!inside.has(v.name) && !out.includes(v.name)) out.push(v.name);
  return out;
}

/** Kahn's algorithm over producer → consumer edges (subgraph reads included); a cycle is an OnnxGraphError. */
function topologicalOrder(
  named: readonly { node: OnnxNode; name: string }[],
  implicitOf: readonly string[][],
  where: string,
): number[] {
  const producer = new Map<string, number>();
  named.forEach(({ node }, k) => {
    for (const o of node.outputs) if (o !== '') producer.set(o, k);
  });
  const pending = named.map(() => 0);
  const consumers = named.map(() => [] as number[]);
  named.forEach(({ node }, k) => {
    const deps = new Set<number>();
    for (const v of [...node.inputs, ...implicitOf[k]!]) {
      const p = producer.get(v);
      if (p !== undefined && p !== k) deps.add(p);
      else if (p === k) throw new OnnxGraphError(`${where}: node ${named[k]!.name} reads its own output '${v}'`);
    }
    pending[k] = deps.size;
    for (const d of deps) consumers[d]!.push(k);
  });
  const order = named.flatMap((_, k) => (pending[k] === 0 ? [k] : []));
  for (let i = 0; i < order.length; i++) for (const c of consumers[order[i]!]!) if (--pending[c]! === 0) order.push(c);
  if (order.length < named.length) {
    const stuck = named.filter((_, k) => pending[k]! > 0).map((n) => n.name);
    throw new OnnxGraphError(`${where}: the nodes ${stuck.slice(0, 8).join(', ')} form a cycle`);
  }
  return order;
}

/** An initializer or a Constant's tensor as a constant: host values where it is small. */
export function constantOf(t: OnnxTensor): ConstantDef {
  const size = t.dims.reduce((p, d) => p * d, 1);
  const host = size <= HOST_MAX ? hostFromOnnx(t)?.data : undefined;
  return { type: t.dtype, dims: t.dims, host, data: t.data };
}

/** A Constant node's value (value, value_float(s), value_int(s)); undefined for the forms the session does not hold. */
function constantNode(node: OnnxNode): ConstantDef | undefined {
  if (node.attributes.length !== 1) return undefined;
  const a: OnnxAttribute = node.attributes[0]!;
  const type = constantType(node);
  switch (a.name) {
    case 'value': {
      const t = a.value as OnnxTensor;
      return t.data ? constantOf(t) : undefined;
    }
    case 'value_float':
      return { type, dims: [], host: Float64Array.of(Math.fround(a.value as number)) };
    case 'value_int':
      return { type, dims: [], host: Float64Array.of(a.value as number) };
    case 'value_floats':
    case 'value_ints': {
      const v = a.value as number[];
      const data = type === 'float32' ? Float32Array.from(v) : undefined;
      return { type, dims: [v.length], host: Float64Array.from(data ?? v), data };
    }
    default:
      return undefined;
  }
}
