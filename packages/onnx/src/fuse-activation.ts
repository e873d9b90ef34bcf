/**
 * Activation fusion, applied by `InferenceSession.create` after the conv folding of optimize.ts: the hard
 * swish that exporters write out as four nodes (PyTorch's `x * relu6(x + 3) / 6`, e.g. paddle2onnx for
 * PP-LCNet: 24 in PP-OCRv4 det, 28 in rec)
 *
 *     a = Add(x, 3)   c = Clip(a, 0, 6)   m = Mul(x, c)   y = Div(m, 6)
 *
 * becomes one `HardSwish(x) → y` node: the HAL's hardSwish, one kernel instead of four (and no three
 * intermediate arrays). The constants may be on either side of Add and Mul; Clip's bounds come from its
 * inputs (opset ≥ 11) or attributes; every constant is a float32 scalar (one value, any rank). A chain is
 * taken where a, c and m are read by the next link alone and are no graph outputs, and x is float32.
 * The fused node computes x·(relu6(x + 3)/6): within an ulp or two of the chain's (x·relu6(x + 3))/6,
 * and x itself for x ≥ 3 where the chain's product overflows float32 (|x| > 5.6e37). y keeps its name, the
 * fused node the Div's name (what `run`'s onNode observer reports).
 */
import type { GNode, Graph } from './graph.js';

/** The value of a float32 constant holding exactly one element, or undefined. */
export function scalar(g: Graph, name: string | undefined): number | undefined {
  if (!name) return undefined;
  const c = g.constants.get(name);
  if (c?.type !== 'float32') return undefined;
  const v = c.host ?? (c.data instanceof Float32Array ? c.data : undefined);
  return v?.length === 1 ? v[0] : undefined;
}

/** The other input of a two-input node when one of its inputs is `v` and the other a constant equal to `want`. */
function otherIs(g: Graph, n: GNode, want: number): string | undefined {
  if (n.node.inputs.length !== 2) return undefined;
  const [p, q] = n.node.inputs as [string, string];
  if (scalar(g, q) === want) return p;
  if (scalar(g, p) === want) return q;
  return undefined;
}

/** Clip's bounds as [min, max] (undefined where absent), from its inputs (opset ≥ 11) or attributes. */
export function clipBounds(g: Graph, n: GNode): [number | undefined, number | undefined] | undefined {
  if (g.opset >= 11) {
    const [, lo, hi] = n.node.inputs;
    const bound = (name: string | undefined): number | undefined | null =>
      name === undefined || name === '' ? undefined : (scalar(g, name) ?? null);
    const [l, h] = [bound(lo), bound(hi)];
    return l === null || h === null ? undefined : [l, h];
  }
  const at = (k: string): number | undefined => {
    const a = n.node.attributes.find((x) => x.name === k);
    return a?.type === 1 ? (a.value as number) : undefined;
  };
  return [at('min'), at('max')];
}

/** Fuses each Add → Clip → Mul → Div hard swish of `g` and its subgraphs into a HardSwish node; returns how many. */
export function fuseHardSwish(g: Graph): number {
  let fused = 0;
  for (const n of g.nodes) for (const sub of n.subgraphs.values()) fused += fuseHardSwish(sub);
  const readers = g.readers();
  const outputs = new Set(g.outputs.map((v) => v.name));
  /** The single reader of `v` (an ONNX-domain node of `op`), where v is no graph output. */
  const next = (v: string, op: string): GNode | undefined => {
    const r = readers.get(v);
    const n = r?.length === 1 ? r[0]! : undefined;
    return n && !outputs.has(v) && n.op === op && n.node.domain === '' && n.subgraphs.size === 0 ? n : undefined;
  };
  const replaced = new Map<GNode, GNode>();
  const removed = new Set<GNode>();
  for (const add of g.nodes) {
    if (add.op !== 'Add' || add.node.domain !== '' || removed.has(add)) continue;
    const x = otherIs(g, add, 3);
    if (x === undefined || g.types.get(x) !== 'float32' || g.constants.has(x)) continue;
    const a = add.node.outputs[0]!;
    const clip = next(a, 'Clip');
    const bounds = clip && clip.node.inputs[0] === a ? clipBounds(g, clip) : undefined;
    if (!clip || bounds?.[0] !== 0 || bounds[1] !== 6) continue;
    const c = clip.node.outputs[0]!;
    const mul = next(c, 'Mul');
    if (mul?.node.inputs.length !== 2 || !mul.node.inputs.includes(x) || !mul.node.inputs.includes(c)) continue;
    const m = mul.node.outputs[0]!;
    const div = next(m, 'Div');
    if (!div || div.node.inputs[0] !== m || scalar(g, div.node.inputs[1]) !== 6) continue;
    replaced.set(div, {
      node: { ...div.node, opType: 'HardSwish', inputs: [x], outputs: [div.node.outputs[0]!], attributes: [] },
      name: div.name,
      op: 'HardSwish',
      subgraphs: new Map(),
      implicit: [],
      inputTypes: ['float32'],
      outputTypes: div.outputTypes,
      release: [], // planned again below: x is read at the Div's place now
      plans: new Map(),
    });
    for (const l of [add, clip, mul]) removed.add(l);
    fused++;
  }
  if (!fused) return 0;
  g.nodes.splice(0, g.nodes.length, ...g.nodes.filter((n) => !removed.has(n)).map((n) => replaced.get(n) ?? n));
  g.planReleases();
  return fused;
}
