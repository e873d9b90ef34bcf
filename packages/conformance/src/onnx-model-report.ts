/**
 * The text report of a whole-model run (`polyhal-conformance --onnx-model`): the inputs, the reference, and
 * per backend its verdict, the first node output beyond tolerance (the node where the backend leaves it) and
 * the worst one.
 */
import type { OutputComparison } from './onnx-model-compare.js';
import type { OnnxModelResult } from './onnx-model.js';

const num = (x: number): string => (x === 0 ? '0' : Number.isFinite(x) ? x.toExponential(1) : String(x));

/** "node 'conv_3' (Conv), output 'x_12'" with the If/Loop/Scan nodes holding it. */
function describeOutput(c: OutputComparison): string {
  const where = [...c.path, c.node].map((n) => `'${n}'`).join(' > ');
  if (c.node.startsWith('(')) return `${c.node.slice(1, -1)}${c.output ? ` '${c.output}'` : ''}`;
  return `node ${where}${c.op ? ` (${c.op})` : ''}${c.output ? `, output '${c.output}'` : ''}`;
}

/** Why `c` is beyond tolerance, in numbers (or its reason). */
function describeError(c: OutputComparison): string {
  if (c.reason) return c.reason;
  const at = c.at ? `; first at element ${c.at.index}: ${c.at.got} vs ${c.at.want}` : '';
  return (
    `error ${num(c.error)} > ${num(c.tolerance)} (max |Δ| ${num(c.maxAbsError)} over scale ${num(c.scale)}` +
    `, ${c.dtype} [${c.dims.join(', ')}]${at})`
  );
}

/** The report's lines: one paragraph per backend. */
export function onnxModelTextReport(r: OnnxModelResult): string {
  const lines = [`ONNX model ${r.model}: ${r.nodes} nodes run on the reference`];
  for (const i of r.inputs) lines.push(`  input ${i.name}: ${i.dtype} [${i.dims.join(', ')}] from ${i.from}`);
  lines.push(`reference: ${r.reference} (${r.referenceDevice})${r.referenceNote ? ` — ${r.referenceNote}` : ''}`);
  lines.push(
    'error of a node output = max |backend − reference| / max |reference| (floats, within the tolerance); ' +
      'integers and bools equal',
  );
  for (const b of r.results) {
    lines.push('');
    const head = `${b.backend}${b.deviceName ? ` (${b.deviceName})` : ''}`;
    if (b.status === 'error') {
      lines.push(`${head}: ERROR — ${b.error}`);
      if (b.firstFailure) lines.push(`  before it, first beyond tolerance: ${describeOutput(b.firstFailure)}`);
      continue;
    }
    const worst = !b.worst
      ? ''
      : b.worst.error === 0
        ? "; every output equal to the reference's"
        : `; worst ${num(b.worst.error)} at ${describeOutput(b.worst)}`;
    if (b.status === 'passed') {
      lines.push(`${head}: passed — ${b.nodes} nodes, ${b.outputs} outputs within tolerance${worst}`);
      continue;
    }
    lines.push(`${head}: FAILED — ${b.failures} of ${b.outputs} node outputs beyond tolerance${worst}`);
    if (b.firstFailure) {
      lines.push(`  first beyond tolerance: ${describeOutput(b.firstFailure)}`);
      lines.push(`    ${describeError(b.firstFailure)}`);
    }
    for (const c of b.modelOutputs.filter((m) => !m.pass))
      lines.push(`  beyond tolerance: ${describeOutput(c)}: ${describeError(c)}`);
  }
  return lines.join('\n');
}

/**
 * An error as one line for a command's stderr: `where: ErrorClass: message`, the message's newlines folded
 * into "; " and a leading `where: ` (a decoder's source) not repeated.
 */
export function oneLineError(where: string, e: unknown): string {
  const name = e instanceof Error ? e.name : 'Error';
  let message = (e instanceof Error ? e.message : String(e)).replace(/\s*\n\s*/g, '; ');
  if (message.startsWith(`${where}: `)) message = message.slice(where.length + 2);
  return `${where}: ${name}: ${message}`;
}
