/**
 * Graph-level inference transforms, applied by `InferenceSession.create` to the graph before it is checked
 * and its constants uploaded. Each rewrites constants only, on the host, and keeps every value the caller
 * can see (graph outputs, what `run`'s onNode observer names) with its name.
 *
 * - BatchNormalization folded into the Conv or ConvTranspose before it (the standard inference transform,
 *   onnxruntime's ConvBNFusion): y = (conv(x, w) + b − mean)·k + β with k = scale / √(var + ε) per output
 *   channel is conv(x, w·k) + (b − mean)·k + β. The new weights and bias are computed in float64 and
 *   rounded once to float32, so the folded output differs from the unfolded one by float32 rounding only.
 *   Folded where the conv's weights (and bias, if any) and the BN's four inputs are float32 constants of
 *   this graph, the conv's output is read by the BN alone (and is no graph output), and the BN is the
 *   inference form (no running-statistics outputs, training_mode 0, opset ≥ 9: per-channel statistics).
 *   The conv node then writes the BN's output; the BN node goes.
 */
import type { ConstantDef, GNode, Graph } from './graph.js';
import type { OnnxAttribute } from './proto.js';

const CONVS = new Set(['Conv', 'ConvTranspose']);

/** A float32 constant's values (decoded data, else its host values), or undefined when it is not one. */
function floats(g: Graph, name: string | undefined): Float32Array | Float64Array | undefined {
  if (!name) return undefined;
  const c = g.constants.get(name);
  if (c?.type !== 'float32') return undefined;
  return c.data instanceof Float32Array ? c.data : c.host;
}

const attr = (n: GNode, name: string): OnnxAttribute | undefined => n.node.attributes.find((a) => a.name === name);

/** Whether a BatchNormalization node is the inference form this fold reproduces (see the file's comment). */
function inferenceBatchNorm(bn: GNode, opset: number): boolean {
  if (opset < 9 || bn.node.domain !== '' || bn.node.inputs.length !== 5) return false;
  if (bn.node.outputs.slice(1).some((o) => o !== '')) return false;
  const mode = attr(bn, 'training_mode');
  if (mode && (mode.type !== 2 || mode.value !== 0)) return false;
  const eps = attr(bn, 'epsilon');
  return !eps || eps.type === 1;
}

/** Folds every eligible Conv/ConvTranspose → BatchNormalization pair of `g` and its subgraphs; returns how many. */
export function foldBatchNorms(g: Graph): number {
  let folded = 0;
  for (const n of g.nodes) for (const sub of n.subgraphs.values()) folded += foldBatchNorms(sub);
  const readers = new Map<string, number>();
  for (const n of g.nodes) for (const v of [...n.node.inputs, ...n.implicit]) readers.set(v, (readers.get(v) ?? 0) + 1);
  const outputs = new Set(g.outputs.map((v) => v.name));
  const producer = new Map<string, number>();
  g.nodes.forEach((n, i) => n.node.outputs.forEach((o) => o !== '' && producer.set(o, i)));
  const removed = new Set<GNode>();
  for (const bn of g.nodes) {
    if (bn.op !== 'BatchNormalization' || !inferenceBatchNorm(bn, g.opset)) continue;
    const y = bn.node.inputs[0]!;
    const at = producer.get(y);
    const conv = at === undefined ? undefined : g.nodes[at];
    if (!conv || removed.has(conv) || !CONVS.has(conv.op) || conv.node.domain !== '') continue;
    if (conv.node.outputs.length !== 1 || readers.get(y) !== 1 || outputs.has(y)) continue;
    const fused = fold(g, conv, bn);
    if (!fused) continue;
    g.nodes[at!] = fused;
    removed.add(bn);
    folded++;
  }
  if (removed.size) g.nodes.splice(0, g.nodes.length, ...g.nodes.filter((n) => !removed.has(n)));
  return folded;
}

/** The conv node rewritten to compute conv → bn, with new weight and bias constants; undefined where it cannot. */
function fold(g: Graph, conv: GNode, bn: GNode): GNode | undefined {
  const [, wName, bName] = conv.node.inputs;
  const w = floats(g, wName);
  const wDef = g.constants.get(wName ?? '');
  const hasBias = bName !== undefined && bName !== '';
  const b = hasBias ? floats(g, bName) : undefined;
  const [scale, beta, mean, variance] = bn.node.inputs.slice(1).map((v) => floats(g, v));
  if (!w || !wDef || (hasBias && !b) || !scale || !beta || !mean || !variance) return undefined;
  const transposed = conv.op === 'ConvTranspose';
  const group = attr(conv, 'group');
  const groups = group?.type === 2 ? (group.value as number) : 1;
  const dims = wDef.dims;
  if (dims.length < 3) return undefined;
  // output channels: Conv w [O, C/g, ...k]; ConvTranspose w [C, O/g, ...k] (channel o = group·O/g + j)
  const O = transposed ? dims[1]! * groups : dims[0]!;
  if ([scale, beta, mean, variance].some((a) => a.length !== O) || (b && b.length !== O)) return undefined;
  const eps = (attr(bn, 'epsilon')?.value as number | undefined) ?? 1e-5;
  const k = Float64Array.from(scale, (s, o) => s / Math.sqrt(variance[o]! + eps));
  const inner = dims.slice(2).reduce((p, d) => p * d, 1);
  const w2 = new Float32Array(w.length);
  if (!transposed) for (let i = 0; i < w.length; i++) w2[i] = w[i]! * k[Math.floor(i / (w.length / O))]!;
  else {
    const Og = dims[1]!;
    const perC = Og * inner; // one input channel's block of weights
    for (let i = 0; i < w.length; i++) {
      const c = Math.floor(i / perC);
      const o = Math.floor(c / (dims[0]! / groups)) * Og + Math.floor((i % perC) / inner);
      w2[i] = w[i]! * k[o]!;
    }
  }
  const b2 = Float32Array.from(k, (ko, o) => ((b ? b[o]! : 0) - mean[o]!) * ko + beta[o]!);
  const out = bn.node.outputs[0]!;
  const names = [`${out}::folded_weight`, `${out}::folded_bias`].map((base) => unique(g, base));
  const def = (data: Float32Array, d: readonly number[]): ConstantDef => ({ type: 'float32', dims: d, data });
  g.constants.set(names[0]!, def(w2, dims));
  g.constants.set(names[1]!, def(b2, [O]));
  for (const n of names) g.types.set(n, 'float32');
  const convOut = conv.node.outputs[0]!;
  return {
    ...conv,
    node: { ...conv.node, inputs: [conv.node.inputs[0]!, names[0]!, names[1]!], outputs: [out] },
    outputTypes: [bn.outputTypes[0] ?? conv.outputTypes[0]!],
    // the conv's own releases, then the BN's but the conv's old output (it no longer exists)
    release: [...conv.release, ...bn.release.filter((v) => v !== convOut)],
    plans: new Map(),
  };
}

/** `base`, or `base#2`, `base#3`, … : a name no value of the graph has. */
function unique(g: Graph, base: string): string {
  let name = base;
  for (let i = 2; g.types.has(name) || g.constants.has(name); i++) name = `${base}#${i}`;
  return name;
}
