/**
 * Graph-level inference transforms, applied by `InferenceSession.create` to the graph before it is checked
 * and its constants uploaded. Each rewrites constants only, on the host, and keeps every value the caller
 * can see (graph outputs, what `run`'s onNode observer names) with its name.
 *
 * Per-channel affine ops folded into the Conv or ConvTranspose before them (onnxruntime's ConvBNFusion,
 * ConvMulFusion and ConvAddFusion): a chain conv → a₁ → a₂ → … where each aᵢ is
 * - BatchNormalization in its inference form (no running-statistics outputs, training_mode 0, opset ≥ 9):
 *   y·k + (β − mean·k), k = scale / √(var + ε);
 * - Mul, Add or Sub with a float32 constant of one value or one per output channel ([O], [1, O, 1, 1], …:
 *   every other axis 1, the conv's output shape unchanged): y·c, y + c, y − c (or c − y: y·(−1) + c);
 * composes, in float64, to y·k + t per output channel, and conv(x, w) + b followed by it is
 * conv(x, w·k) + (b·k + t). The new weights and bias are rounded once to float32, so the folded output
 * differs from the unfolded one by float32 rounding only (as any reordering of the sums). A link is taken
 * where the conv's weights (and bias, if any) are float32 constants of this graph and the value between
 * two links is read by the next link alone and is no graph output. The conv node then writes the last
 * link's output; the links go. PP-OCRv4 det: 2 Conv → BN, 28 Conv → Mul → Add (PP-LCNetV3's learnable
 * affine), ConvTranspose → Add → BN and ConvTranspose → Add; rec: 6 Conv → BN and 28 Conv → Mul → Add.
 */
import type { ConstantDef, GNode, Graph } from './graph.js';
import type { OnnxAttribute } from './proto.js';

const CONVS = new Set(['Conv', 'ConvTranspose']);

/** Per output channel: y ↦ y·k + t. */
interface Affine {
  k: Float64Array;
  t: Float64Array;
}

/** A float32 constant's values (decoded data, else its host values), or undefined when it is not one. */
function floats(g: Graph, name: string | undefined): Float32Array | Float64Array | undefined {
  if (!name) return undefined;
  const c = g.constants.get(name);
  if (c?.type !== 'float32') return undefined;
  return c.data instanceof Float32Array ? c.data : c.host;
}

const attr = (n: GNode, name: string): OnnxAttribute | undefined => n.node.attributes.find((a) => a.name === name);

/** A BatchNormalization node's affine map when it is the inference form (see the file's comment). */
function batchNormAffine(g: Graph, bn: GNode, O: number): Affine | undefined {
  if (g.opset < 9 || bn.node.inputs.length !== 5) return undefined;
  if (bn.node.outputs.slice(1).some((o) => o !== '')) return undefined;
  const mode = attr(bn, 'training_mode');
  if (mode && (mode.type !== 2 || mode.value !== 0)) return undefined;
  const eps = attr(bn, 'epsilon');
  if (eps && eps.type !== 1) return undefined;
  const [scale, beta, mean, variance] = bn.node.inputs.slice(1).map((v) => floats(g, v));
  if (!scale || !beta || !mean || !variance || [scale, beta, mean, variance].some((a) => a.length !== O))
    return undefined;
  const e = (eps?.value as number | undefined) ?? 1e-5;
  const k = Float64Array.from(scale, (s, o) => s / Math.sqrt(variance[o]! + e));
  return { k, t: Float64Array.from(k, (ko, o) => beta[o]! - mean[o]! * ko) };
}

/**
 * The values of a constant that broadcasts per channel onto [N, O, ...spatial] (rank `rank`) without
 * changing its shape: every axis 1 but the channel axis (1 or O). One value per channel, or undefined.
 */
function perChannel(g: Graph, name: string, O: number, rank: number): Float64Array | undefined {
  const v = floats(g, name);
  const dims = g.constants.get(name)?.dims;
  if (!v || !dims || dims.length > rank) return undefined;
  const ok = dims.every((d, i) => d === 1 || (rank - dims.length + i === 1 && d === O));
  if (!ok) return undefined;
  return v.length === 1 ? new Float64Array(O).fill(v[0]!) : Float64Array.from(v);
}

/** The affine map of link `n` applied to value `y` (the conv chain's current output), or undefined. */
function linkAffine(g: Graph, n: GNode, y: string, O: number, rank: number): Affine | undefined {
  if (n.node.domain !== '' || n.node.outputs.length !== 1) return undefined;
  if (n.op === 'BatchNormalization') return n.node.inputs[0] === y ? batchNormAffine(g, n, O) : undefined;
  if (!['Mul', 'Add', 'Sub'].includes(n.op) || n.node.inputs.length !== 2) return undefined;
  const at = n.node.inputs.indexOf(y);
  if (at < 0 || n.node.inputs[1 - at] === y) return undefined;
  const c = perChannel(g, n.node.inputs[1 - at]!, O, rank);
  if (!c) return undefined;
  const ones = new Float64Array(O).fill(1);
  if (n.op === 'Mul') return { k: c, t: new Float64Array(O) };
  if (n.op === 'Add') return { k: ones, t: c };
  return at === 0 ? { k: ones, t: c.map((v) => -v) } : { k: ones.map(() => -1), t: c };
}

/** Folds the affine chains after each Conv/ConvTranspose of `g` and its subgraphs; returns the links folded. */
export function foldConvAffine(g: Graph): number {
  let folded = 0;
  for (const n of g.nodes) for (const sub of n.subgraphs.values()) folded += foldConvAffine(sub);
  const readers = g.readers();
  const outputs = new Set(g.outputs.map((v) => v.name));
  const removed = new Set<GNode>();
  g.nodes.forEach((conv, at) => {
    if (!CONVS.has(conv.op) || conv.node.domain !== '' || conv.node.outputs.length !== 1) return;
    const w = g.constants.get(conv.node.inputs[1] ?? '');
    if (!w || w.dims.length < 3) return;
    const group = attr(conv, 'group');
    const groups = group?.type === 2 ? (group.value as number) : 1;
    const O = conv.op === 'ConvTranspose' ? w.dims[1]! * groups : w.dims[0]!;
    const links: GNode[] = [];
    let map: Affine | undefined;
    let y = conv.node.outputs[0]!;
    for (;;) {
      const r = readers.get(y);
      if (outputs.has(y) || r?.length !== 1 || removed.has(r[0]!)) break;
      const a = linkAffine(g, r[0]!, y, O, w.dims.length);
      if (!a) break;
      // (y·k + t)·k' + t'
      map = map ? { k: map.k.map((k, o) => k * a.k[o]!), t: map.t.map((t, o) => t * a.k[o]! + a.t[o]!) } : a;
      links.push(r[0]!);
      y = r[0]!.node.outputs[0]!;
    }
    if (!map) return;
    const fused = rewrite(g, conv, links, map, O, groups);
    if (!fused) return;
    g.nodes[at] = fused;
    for (const l of links) removed.add(l);
    folded += links.length;
  });
  if (removed.size) g.nodes.splice(0, g.nodes.length, ...g.nodes.filter((n) => !removed.has(n)));
  return folded;
}

/** The conv node rewritten to compute conv → links (map), with new weight and bias constants. */
function rewrite(g: Graph, conv: GNode, links: GNode[], map: Affine, O: number, groups: number): GNode | undefined {
  const [, wName, bName] = conv.node.inputs;
  const w = floats(g, wName);
  const dims = g.constants.get(wName!)!.dims;
  const hasBias = bName !== undefined && bName !== '';
  const b = hasBias ? floats(g, bName) : undefined;
  if (!w || (hasBias && b?.length !== O)) return undefined;
  const { k, t } = map;
  const w2 = new Float32Array(w.length);
  // Conv [O, C/g, ...k]: output channel o's block of w.length/O; ConvTranspose [C, O/g, ...k]: input channel
  // c of group ⌊c / (C/g)⌋ holds blocks of `inner` for output channels group·O/g + j
  const [C, Og] = dims as [number, number];
  const inner = conv.op === 'Conv' ? w.length / O : w.length / (C * Og);
  const blocks = conv.op === 'Conv' ? O : C * Og;
  for (let q = 0, i = 0; q < blocks; q++) {
    const o = conv.op === 'Conv' ? q : Math.floor(Math.floor(q / Og) / (C / groups)) * Og + (q % Og);
    const ko = k[o]!;
    for (const end = i + inner; i < end; i++) w2[i] = w[i]! * ko;
  }
  const b2 = Float32Array.from(k, (ko, o) => (b ? b[o]! : 0) * ko + t[o]!);
  const last = links.at(-1)!;
  const out = last.node.outputs[0]!;
  const names = [`${out}::folded_weight`, `${out}::folded_bias`].map((base) => unique(g, base));
  const def = (data: Float32Array, d: readonly number[]): ConstantDef => ({ type: 'float32', dims: d, data });
  g.constants.set(names[0]!, def(w2, dims));
  g.constants.set(names[1]!, def(b2, [O]));
  for (const n of names) g.types.set(n, 'float32');
  // the values between the links no longer exist: each link's releases but those
  const gone = new Set([conv.node.outputs[0]!, ...links.slice(0, -1).map((l) => l.node.outputs[0]!)]);
  return {
    ...conv,
    node: { ...conv.node, inputs: [conv.node.inputs[0]!, names[0]!, names[1]!], outputs: [out] },
    outputTypes: [last.outputTypes[0] || conv.outputTypes[0]!],
    release: [...conv.release, ...links.flatMap((l) => l.release)].filter((v) => !gone.has(v)),
    plans: new Map(),
  };
}

/** `base`, or `base#2`, `base#3`, … : a name no value of the graph has. */
function unique(g: Graph, base: string): string {
  let name = base;
  for (let i = 2; g.types.has(name) || g.constants.has(name); i++) name = `${base}#${i}`;
  return name;
}
