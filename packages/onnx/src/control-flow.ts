/**
 * ONNX's control flow, run by the session: If (one branch by a host condition), Loop (a body per
 * iteration with loop-carried values and scan outputs) and Scan (opset ≥ 9: a body per slice of its scan
 * inputs, with state). Subgraphs read the enclosing graphs' values by name (their scopes chain); a body's
 * values are unbound after each iteration, carried values and scan outputs held until the node's end.
 * A condition or trip count computed on the device is read back (counted in RunStats.deviceReads).
 */
import { OnnxGraphError } from './errors.js';
import type { Exec } from './executor.js';
import { execute } from './executor.js';
import type { GNode, Graph } from './graph.js';
import { HOST_MAX } from './host-eval.js';
import type { OnnxValueInfo } from './proto.js';
import { NotExpressible } from './table.js';
import { readHost, Scope, uploadHost, Value } from './values.js';

type GraphRunner = (g: Graph, scope: Scope, x: Exec) => Promise<void>;

export async function runControlFlow(
  n: GNode,
  scope: Scope,
  inputs: (Value | undefined)[],
  x: Exec,
  run: GraphRunner,
): Promise<void> {
  if (n.node.domain !== '' && n.node.domain !== 'ai.onnx')
    throw new NotExpressible('op', `op ${n.node.domain}.${n.op}`);
  if (n.op === 'If') return runIf(n, scope, inputs, x, run);
  if (n.op === 'Loop') return runLoop(n, scope, inputs, x, run);
  return runScan(n, scope, inputs, x, run);
}

function subgraph(n: GNode, name: string): Graph {
  const b = n.subgraphs.get(name);
  if (!b) throw new OnnxGraphError(`node ${n.name} (${n.op}) has no '${name}' graph attribute`);
  return b;
}

/** The first element of `v` on the host (read back from the device where it was computed). */
async function scalarOf(x: Exec, v: Value): Promise<number> {
  if (!v.host) {
    v.host = await readHost(x.be, v.dev!);
    x.stats.deviceReads++;
  }
  if (v.host.length < 1) throw new NotExpressible('input', `a condition or count with ${v.host.length} elements`);
  return v.host[0]!;
}

/** Binds `values` to the node's outputs (a value missing only in a dry pass, where it leaves the output unbound). */
function bindOutputs(n: GNode, scope: Scope, values: readonly (Value | undefined)[], x: Exec): void {
  n.node.outputs.forEach((name, k) => {
    const v = values[k];
    if (name === '') return;
    if (!v) {
      if (x.dry) return;
      throw new OnnxGraphError(`node ${n.name} (${n.op}): its subgraph did not produce output ${k}`);
    }
    scope.set(name, v);
  });
}

/** Runs `body` in a new scope under `scope`, with `bind` giving its inputs; returns its outputs (then unbound). */
async function runBody(
  body: Graph,
  scope: Scope,
  x: Exec,
  run: GraphRunner,
  bind: (child: Scope) => void,
  take: (outs: (Value | undefined)[]) => Promise<void> | void,
): Promise<void> {
  const child = new Scope(x.heap, scope, x.constants(body));
  try {
    bind(child);
    await run(body, child, x);
    await take(body.outputs.map((o) => child.get(o.name)));
  } finally {
    child.clear();
  }
}

async function runIf(n: GNode, scope: Scope, inputs: (Value | undefined)[], x: Exec, run: GraphRunner): Promise<void> {
  const [thenG, elseG] = [subgraph(n, 'then_branch'), subgraph(n, 'else_branch')];
  for (const b of [thenG, elseG])
    if (b.outputs.length !== n.node.outputs.length)
      throw new OnnxGraphError(
        `node ${n.name} (If): a branch has ${b.outputs.length} outputs for ${n.node.outputs.length}`,
      );
  const cond = (await scalarOf(x, inputs[0]!)) !== 0;
  const chosen = cond ? thenG : elseG;
  // a dry pass checks both branches (the condition is not known before a run), the chosen one last
  const branches = x.dry ? [cond ? elseG : thenG, chosen] : [chosen];
  for (const b of branches)
    await runBody(
      b,
      scope,
      x,
      run,
      () => {},
      (outs) => {
        if (b === chosen) bindOutputs(n, scope, outs, x);
      },
    );
}

const hostScalar = (type: string, v: number): Value => Value.fromHost({ type, dims: [], data: Float64Array.of(v) });

async function runLoop(
  n: GNode,
  scope: Scope,
  inputs: (Value | undefined)[],
  x: Exec,
  run: GraphRunner,
): Promise<void> {
  const body = subgraph(n, 'body');
  const nCarried = n.node.inputs.length - 2;
  const nScan = body.outputs.length - 1 - nCarried;
  if (nCarried < 0 || nScan < 0 || body.inputs.length !== nCarried + 2)
    throw new OnnxGraphError(
      `node ${n.name} (Loop): ${n.node.inputs.length} inputs, a body of ${body.inputs.length} inputs and ` +
        `${body.outputs.length} outputs`,
    );
  const trips = inputs[0] ? await scalarOf(x, inputs[0]) : Number.POSITIVE_INFINITY;
  let cond = inputs[1] ? (await scalarOf(x, inputs[1])) !== 0 : true;
  const carry = new Scope(x.heap);
  try {
    for (let j = 0; j < nCarried; j++) carry.set(`v${j}`, inputs[2 + j]!);
    const scans: Value[][] = Array.from({ length: nScan }, () => []);
    for (let i = 0; x.dry ? i < 1 : i < trips && cond; i++) {
      let done = false;
      await runBody(
        body,
        scope,
        x,
        run,
        (child) => {
          child.set(body.inputs[0]!.name, hostScalar('int64', i));
          child.set(body.inputs[1]!.name, hostScalar('bool', cond ? 1 : 0));
          for (let j = 0; j < nCarried; j++) child.set(body.inputs[2 + j]!.name, carry.get(`v${j}`)!);
        },
        async (outs) => {
          if (outs.some((v) => !v)) {
            if (!x.dry) throw new OnnxGraphError(`node ${n.name} (Loop): the body did not produce all its outputs`);
            done = true;
            return;
          }
          for (let j = 0; j < nCarried; j++) carry.set(`v${j}`, outs[1 + j]!);
          for (let k = 0; k < nScan; k++) {
            carry.set(`s${k}:${i}`, outs[1 + nCarried + k]!);
            scans[k]!.push(outs[1 + nCarried + k]!);
          }
          cond = (await scalarOf(x, outs[0]!)) !== 0;
        },
      );
      if (done) return;
    }
    const finals: (Value | undefined)[] = Array.from({ length: nCarried }, (_, j) => carry.get(`v${j}`));
    for (let k = 0; k < nScan; k++)
      finals.push(stack(x, carry, `out${k}`, scans[k]!, 0, body.outputs[1 + nCarried + k]!));
    bindOutputs(n, scope, finals, x);
  } finally {
    carry.clear();
  }
}

async function runScan(
  n: GNode,
  scope: Scope,
  inputs: (Value | undefined)[],
  x: Exec,
  run: GraphRunner,
): Promise<void> {
  if (x.opset < 9) throw new NotExpressible('op', 'Scan before opset 9 (the batched form with sequence_lens)');
  const body = subgraph(n, 'body');
  const attr = (name: string) => n.node.attributes.find((a) => a.name === name)?.value;
  const m = attr('num_scan_inputs');
  if (typeof m !== 'number' || m < 1 || m > inputs.length)
    throw new OnnxGraphError(`node ${n.name} (Scan): num_scan_inputs ${String(m)} for ${inputs.length} inputs`);
  const nState = inputs.length - m;
  const nScan = body.outputs.length - nState;
  if (nScan < 0 || body.inputs.length !== inputs.length)
    throw new OnnxGraphError(`node ${n.name} (Scan): a body of ${body.inputs.length} inputs for ${inputs.length}`);
  const ints = (name: string, len: number): number[] => (attr(name) as number[] | undefined) ?? Array(len).fill(0);
  const [inAxes, inDirs, outAxes, outDirs] = [
    ints('scan_input_axes', m),
    ints('scan_input_directions', m),
    ints('scan_output_axes', nScan),
    ints('scan_output_directions', nScan),
  ];
  const seqs = inputs.slice(nState) as Value[];
  const axes = seqs.map((v, j) => normalize(inAxes[j]!, v.dims.length, n.name));
  const length = seqs[0]!.dims[axes[0]!]!;
  if (seqs.some((v, j) => v.dims[axes[j]!] !== length))
    throw new NotExpressible('input', `Scan: scan inputs of different lengths`);
  for (const [j, v] of seqs.entries())
    if (!v.dev) {
      x.heap.attach(v, uploadHost(x.be, v, n.node.inputs[nState + j]!));
      x.stats.uploads++;
    }
  const carry = new Scope(x.heap);
  try {
    for (let j = 0; j < nState; j++) carry.set(`v${j}`, inputs[j]!);
    const scans: Value[][] = Array.from({ length: nScan }, () => []);
    for (let t = 0; t < (x.dry ? Math.min(length, 1) : length); t++) {
      let done = false;
      await runBody(
        body,
        scope,
        x,
        run,
        (child) => {
          for (let j = 0; j < nState; j++) child.set(body.inputs[j]!.name, carry.get(`v${j}`)!);
          seqs.forEach((v, j) => {
            const at = inDirs[j] ? length - 1 - t : t;
            const a = axes[j]!;
            const dims = v.dims.filter((_, k) => k !== a);
            const bounds = v.dims.map((d, k) => (k === a ? [at, at + 1] : [0, d]) as [number, number]);
            execute(
              x,
              (be) => [be.reshape(be.shrink(v.dev!, bounds), dims)],
              ([y]) => child.set(body.inputs[nState + j]!.name, new Value(v.type, dims, undefined, y!)),
            );
          });
        },
        (outs) => {
          if (outs.some((v) => !v)) {
            if (!x.dry) throw new OnnxGraphError(`node ${n.name} (Scan): the body did not produce all its outputs`);
            done = true;
            return;
          }
          for (let j = 0; j < nState; j++) carry.set(`v${j}`, outs[j]!);
          for (let k = 0; k < nScan; k++) {
            carry.set(`s${k}:${t}`, outs[nState + k]!);
            scans[k]!.push(outs[nState + k]!);
          }
        },
      );
      if (done) return;
    }
    const finals: (Value | undefined)[] = Array.from({ length: nState }, (_, j) => carry.get(`v${j}`));
    for (let k = 0; k < nScan; k++) {
      const elems = outDirs[k] ? [...scans[k]!].reverse() : scans[k]!;
      const rank = (elems[0]?.dims.length ?? 0) + 1;
      finals.push(stack(x, carry, `out${k}`, elems, normalize(outAxes[k]!, rank, n.name), body.outputs[nState + k]!));
    }
    bindOutputs(n, scope, finals, x);
  } finally {
    carry.clear();
  }
}

function normalize(axis: number, rank: number, node: string): number {
  if (!Number.isInteger(axis) || axis < -rank || axis >= rank)
    throw new NotExpressible('attribute', `Scan ${node}: axis ${axis} out of range for rank ${rank}`);
  return axis < 0 ? axis + rank : axis;
}

/**
 * The values of a scan output stacked along a new `axis` (a Loop's along 0). On the host when every
 * element is there and the result is small; else one concat on the device. No elements: an empty
 * array whose other dims come from the body's declared output (0 where unknown). The result is bound in
 * `carry` under `key` (so that it outlives the node's temporaries).
 */
function stack(x: Exec, carry: Scope, key: string, elems: Value[], axis: number, info: OnnxValueInfo): Value {
  const type = elems[0]?.type ?? info.dtype ?? 'float32';
  if (!elems.length) {
    const dims = [0, ...(info.shape ?? []).map((d) => d ?? 0)];
    return Value.fromHost({ type, dims, data: new Float64Array(0) });
  }
  const inner = elems[0]!.dims;
  if (elems.some((e) => e.dims.length !== inner.length || e.dims.some((d, k) => d !== inner[k])))
    throw new NotExpressible('input', 'scan output elements of different shapes');
  const dims = [...inner.slice(0, axis), elems.length, ...inner.slice(axis)];
  const one = [...inner.slice(0, axis), 1, ...inner.slice(axis)];
  if (axis === 0 && elems.every((e) => e.host) && elems.length * elems[0]!.size <= HOST_MAX) {
    const data = new Float64Array(elems.length * elems[0]!.size);
    elems.forEach((e, i) => data.set(e.host!, i * e.size));
    return Value.fromHost({ type, dims, data });
  }
  for (const e of elems)
    if (!e.dev) {
      x.heap.attach(e, uploadHost(x.be, e, 'a scan output'));
      x.stats.uploads++;
    }
  execute(
    x,
    (be) => [
      be.concat(
        elems.map((e) => be.reshape(e.dev!, one)),
        axis,
      ),
    ],
    ([y]) => carry.set(key, new Value(type, dims, undefined, y!)),
  );
  return carry.get(key)!;
}
