/**
 * Elementwise chain fusion, applied by `InferenceSession.create` after the hard swish fusion: a run of float32
 * nodes each of which is one HAL unary op (Relu, Sigmoid, HardSwish, Exp, ...), an Add, Sub, Mul or Div with a
 * single-element float32 constant or with a second float32 tensor (a constant or any other value: a bias, a
 * residual), a Clip with constant bounds, or a HardSigmoid, where each link's output is read by the next link
 * alone and is no graph output, becomes one `FusedElementwise` node (domain
 * FUSED_DOMAIN) whose steps are the links' HAL ops in order: the HAL's `fusedElementwise`, one kernel per chain
 * on webgpu instead of one per op (PP-OCRv4 det: HardSwish → Mul → Add 24 times, HardSigmoid 10 times). A single
 * Clip (two steps) or HardSigmoid (four) is fused alone. The steps are exactly what the nodes' own mappings
 * compute (ops-elementwise.ts: Clip is maximum then minimum, HardSigmoid mul, add, maximum, minimum), each
 * rounded to float32, so the outputs are the unfused ones' (up to the fused multiply-adds a GPU may contract,
 * which its arithmetic class allows). The fused node keeps the last link's name and output; its inputs are the
 * chain's input, then the tensor operands (a step `{ op, input: j }` names input j). Where a tensor operand does
 * not broadcast to the chain's shape when it runs (the graph's shapes are not all known before), the steps run
 * as the separate ops instead, broadcasting as the nodes would; where its input is a host value (shape
 * arithmetic on small tensors), the executor runs the links one by one on the host instead.
 */
import type { BinaryOp, ComputeBackend, ElementwiseStep, NDArray, UnaryOp } from '@polyhal/hal';
import { clipBounds, scalar } from './fuse-activation.js';
import type { GNode, Graph } from './graph.js';
import type { OpMapping } from './table.js';

/** The domain of the nodes this session makes itself (not an ONNX operator set). */
export const FUSED_DOMAIN = 'ai.polyhal';

/** ONNX ops whose mapping is one HAL unary op on float32 (ops-elementwise.ts: `unary(...)`). */
const UNARY: Readonly<Record<string, UnaryOp>> = {
  Relu: 'relu',
  Sigmoid: 'sigmoid',
  Tanh: 'tanh',
  Exp: 'exp',
  Log: 'log',
  Neg: 'neg',
  Sqrt: 'sqrt',
  Reciprocal: 'recip',
  Abs: 'abs',
  Erf: 'erf',
  Softplus: 'softplus',
  HardSwish: 'hardSwish',
};

/** ONNX binary ops whose float32 mapping is the HAL op of the same arithmetic. */
const BINARY = { Add: 'add', Sub: 'sub', Mul: 'mul', Div: 'div' } as const;

/** A step as the fused node stores it: a tensor operand by its index among the node's inputs. */
export type StoredStep =
  | Exclude<ElementwiseStep, { readonly array: NDArray }>
  | { readonly op: BinaryOp; readonly input: number; readonly arrayFirst?: boolean };

/** A link's step with a tensor operand, by the operand's name (numbered when the chain is made). */
type LinkStep =
  | Exclude<ElementwiseStep, { readonly array: NDArray }>
  | {
      readonly op: BinaryOp;
      readonly tensor: string;
      readonly arrayFirst: boolean;
    };

/** `rank`: the single-element constants' largest rank a link reads (its output broadcasts to at least that rank). */
interface Link {
  readonly input: string;
  readonly steps: LinkStep[];
  readonly rank: number;
}

/**
 * The link a node makes, or undefined where it is none; `open(v)`: whether v is the output of a chain that a
 * link reading it would extend (a binary node of two tensors extends the chain of either operand).
 */
function linkOf(g: Graph, n: GNode, open: (v: string) => boolean): Link | undefined {
  if (n.node.domain !== '' || n.subgraphs.size > 0 || n.node.outputs.length !== 1) return undefined;
  if (g.types.get(n.node.outputs[0]!) !== 'float32') return undefined;
  const floatInput = (v: string | undefined): v is string =>
    v !== undefined && v !== '' && !g.constants.has(v) && g.types.get(v) === 'float32';
  const [a, b] = n.node.inputs;
  // none of these ops takes an attribute: one that has any stays a node of its own, so that its mapping's check
  // names it (a fused node would drop the attribute unread)
  const plain = n.node.attributes.length === 0;
  const unary = UNARY[n.op];
  if (unary)
    return plain && n.node.inputs.length === 1 && floatInput(a)
      ? { input: a, steps: [{ op: unary }], rank: 0 }
      : undefined;
  const binary = BINARY[n.op as keyof typeof BINARY];
  if (binary && plain && n.node.inputs.length === 2) {
    const rank = (v: string): number => g.constants.get(v)!.dims.length;
    if (floatInput(a) && scalar(g, b) !== undefined)
      return { input: a, steps: [{ op: binary, scalar: scalar(g, b)! }], rank: rank(b!) };
    if (floatInput(b) && scalar(g, a) !== undefined)
      return { input: b, steps: [{ op: binary, scalar: scalar(g, a)!, scalarFirst: true }], rank: rank(a!) };
    // two tensors (the second may be a constant): the chain runs through the first, or the second where only
    // it ends an open chain; the other is the step's array operand
    const tensor = (v: string | undefined): v is string => v !== undefined && v !== '' && g.types.get(v) === 'float32';
    if (!tensor(a) || !tensor(b) || a === b) return undefined;
    if (floatInput(a) && (open(a) || !open(b) || !floatInput(b)))
      return { input: a, steps: [{ op: binary, tensor: b, arrayFirst: false }], rank: 0 };
    if (floatInput(b)) return { input: b, steps: [{ op: binary, tensor: a, arrayFirst: true }], rank: 0 };
    return undefined;
  }
  if (n.op === 'Clip' && floatInput(a)) {
    const bounds = clipBounds(g, n);
    if (!bounds) return undefined;
    const steps: LinkStep[] = [];
    if (bounds[0] !== undefined) steps.push({ op: 'maximum', scalar: bounds[0] });
    if (bounds[1] !== undefined) steps.push({ op: 'minimum', scalar: bounds[1] });
    return steps.length ? { input: a, steps, rank: 0 } : undefined;
  }
  if (n.op === 'HardSigmoid' && n.node.inputs.length === 1 && floatInput(a)) {
    const at = (k: string, d: number): number => {
      const x = n.node.attributes.find((t) => t.name === k);
      return x?.type === 1 ? (x.value as number) : d;
    };
    const steps: LinkStep[] = [
      { op: 'mul', scalar: at('alpha', 0.2) },
      { op: 'add', scalar: at('beta', 0.5) },
      { op: 'maximum', scalar: 0 },
      { op: 'minimum', scalar: 1 },
    ];
    return n.node.attributes.every((t) => t.name === 'alpha' || t.name === 'beta')
      ? { input: a, steps, rank: 0 }
      : undefined;
  }
  return undefined;
}

interface Chain {
  readonly input: string;
  readonly nodes: GNode[];
  readonly steps: LinkStep[];
  rank: number;
}

/** The chain's steps as the fused node stores them, and its tensor operands (inputs 1, 2, ... of the node). */
function stored(c: Chain): { steps: StoredStep[]; tensors: string[] } {
  const tensors: string[] = [];
  const steps = c.steps.map((s): StoredStep => {
    if (!('tensor' in s)) return s;
    let j = tensors.indexOf(s.tensor);
    if (j < 0) j = tensors.push(s.tensor) - 1;
    return { op: s.op, input: j + 1, arrayFirst: s.arrayFirst };
  });
  return { steps, tensors };
}

/** Fuses the elementwise chains of `g` and its subgraphs into FusedElementwise nodes; returns how many. */
export function fuseElementwise(g: Graph): number {
  let fused = 0;
  for (const n of g.nodes) for (const sub of n.subgraphs.values()) fused += fuseElementwise(sub);
  const readers = g.readers();
  const outputs = new Set(g.outputs.map((v) => v.name));
  const open = new Map<string, Chain>(); // chains by their last output
  const chains: Chain[] = [];
  for (const n of g.nodes) {
    const extensible = (v: string): boolean => open.has(v) && readers.get(v)?.length === 1 && !outputs.has(v);
    const link = linkOf(g, n, extensible);
    if (!link) continue;
    const prev = open.get(link.input);
    const extends_ = prev !== undefined && extensible(link.input);
    const chain: Chain = extends_ ? prev! : { input: link.input, nodes: [], steps: [], rank: 0 };
    if (extends_) open.delete(link.input);
    else chains.push(chain);
    chain.nodes.push(n);
    chain.steps.push(...link.steps);
    chain.rank = Math.max(chain.rank, link.rank);
    open.set(n.node.outputs[0]!, chain);
  }
  const replaced = new Map<GNode, GNode>();
  const removed = new Set<GNode>();
  for (const c of chains) {
    if (c.steps.length < 2) continue;
    const last = c.nodes[c.nodes.length - 1]!;
    const { steps, tensors } = stored(c);
    const attributes = [
      { name: 'steps', type: 3, value: JSON.stringify(steps) },
      { name: 'rank', type: 2, value: c.rank },
    ];
    const inputs = [c.input, ...tensors];
    replaced.set(last, {
      node: { ...last.node, opType: 'FusedElementwise', domain: FUSED_DOMAIN, inputs, attributes },
      name: last.name,
      op: 'FusedElementwise',
      subgraphs: new Map(),
      implicit: [],
      inputTypes: inputs.map(() => 'float32'),
      outputTypes: last.outputTypes,
      release: [], // planned again below
      plans: new Map(),
      fusedFrom: c.nodes,
    });
    for (const l of c.nodes.slice(0, -1)) removed.add(l);
    fused++;
  }
  if (!fused) return 0;
  g.nodes.splice(0, g.nodes.length, ...g.nodes.filter((n) => !removed.has(n)).map((n) => replaced.get(n) ?? n));
  g.planReleases();
  return fused;
}

/** Whether `shape` broadcasts to `to` without changing it (NumPy rules). */
function broadcastsTo(shape: readonly number[], to: readonly number[]): boolean {
  if (shape.length > to.length) return false;
  const lead = to.length - shape.length;
  return shape.every((d, i) => d === 1 || d === to[lead + i]);
}

/**
 * The stored steps on x: fused in runs whose tensor operands broadcast to the running shape, and a step whose
 * operand grows the shape as its separate op (broadcasting as the node would), the runs after it fused at the new
 * shape. The executor frees the intermediates.
 */
function runSteps(be: ComputeBackend, x: NDArray, steps: readonly StoredStep[], ins: readonly NDArray[]): NDArray {
  let y = x;
  let run: ElementwiseStep[] = [];
  const close = (): void => {
    if (run.length) y = be.fusedElementwise(y, run);
    run = [];
  };
  for (const s of steps) {
    if (!('input' in s)) {
      run.push(s);
      continue;
    }
    const a = ins[s.input]!;
    if (broadcastsTo(a.shape, y.shape)) {
      run.push({ op: s.op, array: a, arrayFirst: s.arrayFirst });
      continue;
    }
    close();
    y = s.arrayFirst ? be.binary(s.op, a, y) : be.binary(s.op, y, a);
  }
  close();
  return y;
}

/**
 * The mapping of FusedElementwise: `fusedElementwise(x, steps)` with the tensor operands as the steps' arrays
 * (split where one does not broadcast to the running shape: runSteps), its output given the rank the chain's
 * constants broadcast it to (x's shape with leading 1s, as the separate ops' broadcasting would).
 */
export const FUSED_OPS: Readonly<Record<string, OpMapping>> = {
  FusedElementwise: {
    contract: { kind: 'onnx' },
    plan: (ctx) => {
      const steps = JSON.parse(ctx.attrs.string('steps', '[]')) as StoredStep[];
      const rank = ctx.attrs.int('rank', 0);
      return (be, ins) => {
        const y = runSteps(be, ins[0]!, steps, ins as NDArray[]);
        if (y.shape.length >= rank) return [y];
        const shape = [...new Array<number>(rank - y.shape.length).fill(1), ...y.shape];
        const r = be.reshape(y, shape);
        if (r.buffer !== y.buffer) be.free(y);
        return [r];
      };
    },
  },
};
