/**
 * The check of `InferenceSession.create`: every node of the graph and its subgraphs, before anything is
 * computed. First what needs no shapes (op, domain, dtypes from declarations and inference, Constant
 * forms, control-flow attributes), then a dry planning pass on a MetaBackend (meta-backend.ts): the graph
 * runs with the inputs' declared dims (a symbolic dim takes its freeDimensionOverrides value, else a
 * probe) so that every node whose input shapes can be known is planned with them, its attributes read.
 */
import type { ComputeBackend, DeviceBuffer } from '@polyhal/hal';
import type { UnsupportedNode } from './errors.js';
import { emptyStats, type Exec, runGraph } from './executor.js';
import { CONTROL_FLOW_OPS, type Graph } from './graph.js';
import { HOST_MAX, HOST_OPS } from './host-eval.js';
import { MetaBackend } from './meta-backend.js';
import { FUSED_DOMAIN } from './fuse-elementwise.js';
import { mappingOf } from './ops.js';
import type { OnnxValueInfo } from './proto.js';
import { deviceDType, isSupportedType } from './types.js';
import { constantValue, Heap, Scope, Value } from './values.js';

const FLOATS = new Set(['float32', 'float16', 'float64']);
const hasFloat64 = (be: ComputeBackend): boolean => be.supportsDType?.('float64') ?? false;

/** What can be told without shapes, for `g` and its subgraphs. */
export function staticCheck(g: Graph, be: ComputeBackend, top = true): UnsupportedNode[] {
  const out: UnsupportedNode[] = [];
  const value = (what: string, v: OnnxValueInfo): void => {
    const fail = (reason: string) => out.push({ op: what, node: v.name, kind: 'dtype', reason, path: g.path });
    if (v.kind !== 'tensor') fail(`a ${v.kind} value (the session holds tensors)`);
    else if (v.dtype && !isSupportedType(v.dtype)) fail(`ONNX type ${v.dtype} (the HAL has no dtype for it)`);
    else if (v.dtype === 'float64' && !hasFloat64(be)) fail(`float64 (not on backend ${be.name})`);
  };
  if (top) {
    g.inputs.forEach((v) => value('graph input', v));
    g.outputs.forEach((v) => value('graph output', v));
  }
  for (const n of g.nodes) {
    const fail = (kind: string, reason: string) => out.push({ op: n.op, node: n.name, kind, reason, path: g.path });
    const domain = n.node.domain;
    if (domain !== '' && domain !== 'ai.onnx' && domain !== FUSED_DOMAIN) {
      fail('op', `op ${domain}.${n.op} (only the default ONNX domain is mapped)`);
      continue;
    }
    const types = [...n.inputTypes, ...n.outputTypes].filter((t) => t !== '');
    const odd = types.find((t) => !isSupportedType(t));
    if (odd) fail('dtype', `ONNX type ${odd} (the HAL has no dtype for it)`);
    // float64 shape arithmetic runs on the host (host-eval.ts); elsewhere it needs the backend's float64
    else if (types.includes('float64') && !hasFloat64(be) && !HOST_OPS.has(n.op))
      fail('dtype', `float64 (not on backend ${be.name})`);
    if (CONTROL_FLOW_OPS.has(n.op)) {
      const want = n.op === 'If' ? ['then_branch', 'else_branch'] : ['body'];
      const lacking = want.filter((a) => !n.subgraphs.has(a));
      if (lacking.length) fail('attribute', `no graph attribute ${lacking.join(', ')}`);
      if (n.op === 'Scan' && g.opset < 9) fail('op', 'Scan before opset 9 (the batched form with sequence_lens)');
      for (const sub of n.subgraphs.values()) out.push(...staticCheck(sub, be, false));
      continue;
    }
    const mapping = mappingOf(domain, n.op);
    if (!mapping) {
      fail('op', `op ${n.op} (no lowering onto the HAL)`);
      continue;
    }
    if (n.op === 'Constant') {
      fail('attribute', `a Constant of ${n.node.attributes.map((a) => a.name).join(', ') || 'no value'}`);
      continue;
    }
    const host = new Set(mapping.host ?? []);
    const dtypes = mapping.dtypes ?? ['float32'];
    const device = [...n.inputTypes.filter((_, i) => !host.has(i)), ...n.outputTypes];
    const refused = device.find((t) => FLOATS.has(t) && !dtypes.includes(t));
    if (refused && !odd) fail('dtype', `dtype ${refused} (${n.op} takes ${dtypes.join(', ')})`);
  }
  return out;
}

/**
 * The dry planning pass (see the file's comment). Returns the unsupported nodes it finds: op, dtype and
 * attribute reasons (an 'input' reason may come from a probe dim, and is left to the run).
 */
export async function dryRun(
  g: Graph,
  like: ComputeBackend,
  opset: number,
  fixed: Readonly<Record<string, number>>,
  probe = 32,
): Promise<UnsupportedNode[]> {
  const meta = new MetaBackend(like);
  const failures: UnsupportedNode[] = [];
  const cache = new Map<Graph, Map<string, Value>>();
  const constants = (gr: Graph): Map<string, Value> => {
    let m = cache.get(gr);
    if (!m) {
      m = new Map();
      for (const [name, c] of gr.constants) if (deviceDType(c.type)) m.set(name, constantValue(meta, c, name, false));
      cache.set(gr, m);
    }
    return m;
  };
  try {
    const heap = new Heap(meta, new Set<DeviceBuffer>());
    const scope = new Scope(heap, undefined, constants(g));
    for (const info of g.inputs) {
      const dtype = deviceDType(info.dtype ?? '');
      if (!info.shape || info.kind !== 'tensor' || !dtype) continue;
      const dims = info.shape.map((d, i) => d ?? fixed[info.dimParams?.[i] ?? ''] ?? probe);
      const size = dims.reduce((p, d) => p * d, 1);
      const onHost = !FLOATS.has(info.dtype!) && size <= HOST_MAX;
      scope.set(
        info.name,
        onHost
          ? new Value(info.dtype!, dims, new Float64Array(size))
          : new Value(info.dtype!, dims, undefined, meta.full(dims, 0, dtype)),
      );
    }
    const x: Exec = { be: meta, heap, opset, stats: emptyStats(), constants, folded: new Map(), dry: failures };
    await runGraph(g, scope, x);
    scope.clear();
  } finally {
    meta.dispose();
  }
  return failures;
}

/** One entry per node and kind of reason: the static check's, else the dry pass's first. */
export function dedupe(nodes: readonly UnsupportedNode[]): UnsupportedNode[] {
  const seen = new Set<string>();
  return nodes.filter((u) => {
    const key = JSON.stringify([u.path, u.node, u.kind]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
