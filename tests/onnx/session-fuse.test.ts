/**
 * InferenceSession's activation fusion (packages/onnx/src/fuse-activation.ts): the Add → Clip → Mul → Div hard
 * swish fused into one HardSwish node. Outputs against onnxruntime-node with its graph optimizations off (an
 * independent peer computing the four nodes), on every backend of the repository; onNode shows which chains
 * went (a HardSwish under the Div's name, writing the Div's output) and which stayed.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InferenceSession } from '@polyhal/onnx';
import { REPO_BACKENDS } from '../support/backends.js';
import { encodeModel, type NodeSpec, type TensorSpec } from '../support/onnx-builder.js';
import { runOrt } from '../support/onnx-ort.js';

const scalar = (name: string, v: number): TensorSpec => ({ name, dtype: 'float32', dims: [], data: [v] });
const node = (op: string, name: string, inputs: string[], y: string, attrs: NodeSpec['attrs'] = {}): NodeSpec => ({
  op,
  name,
  inputs,
  outputs: [y],
  attrs,
});
/** x → Add → Clip → Mul → Div(·, six) → y, the nodes named p_add, p_clip, p_mul, p_div. */
const chain = (p: string, x: string, y: string, o: { swap?: boolean; six?: string } = {}): NodeSpec[] => [
  node('Add', `${p}_add`, o.swap ? ['three', x] : [x, 'three'], `${p}_a`),
  node('Clip', `${p}_clip`, [`${p}_a`, 'zero', 'six'], `${p}_c`),
  node('Mul', `${p}_mul`, o.swap ? [`${p}_c`, x] : [x, `${p}_c`], `${p}_m`),
  node('Div', `${p}_div`, [`${p}_m`, o.six ?? 'six'], y),
];

// x [2, 3, 50] in [−5, 5) (every branch of hard swish, and ±3 exactly):
//  h1: the chain on x                                   (fused)
//  h2: constants first, Mul(c, x)                       (fused)
//  h3: Clip's output is also a graph output             (not hard swish)
//  h4: Div by 5                                         (not hard swish)
//  h5: the chain on Neg(x), whose input t is read again by a Sqrt after the Mul (t stays bound: fused)
const MODEL = encodeModel({
  name: 'hard-swish-fusion',
  nodes: [
    ...chain('h1', 'x', 'y1'),
    ...chain('h2', 'x', 'y2', { swap: true }),
    ...chain('h3', 'x', 'y3'),
    ...chain('h4', 'x', 'y4', { six: 'five' }),
    node('Neg', 'neg', ['x'], 't'),
    ...chain('h5', 't', 'y5').slice(0, 3),
    node('Abs', 'abs', ['t'], 'u'),
    chain('h5', 't', 'y5')[3]!,
    node('Add', 'after', ['u', 'y5'], 'z'),
  ],
  inputs: [{ name: 'x', dtype: 'float32', shape: [2, 3, 50] }],
  outputs: ['y1', 'y2', 'y3', 'h3_c', 'y4', 'z'].map((name) => ({ name, dtype: 'float32' as const })),
  initializers: [scalar('three', 3), scalar('zero', 0), scalar('six', 6), scalar('five', 5)],
});
const X = Array.from({ length: 300 }, (_, i) => Math.fround(-5 + (10 * ((i * 37) % 300)) / 300));

describe.each(Object.keys(REPO_BACKENDS))('hard swish fusion on %s', (name) => {
  let dir: string;
  let want: Record<string, { dims: number[]; data: (number | string)[] }>;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'polyhal-fuse-'));
    const model = join(dir, 'model.onnx');
    writeFileSync(model, MODEL);
    const [r] = runOrt([{ model, feeds: [{ name: 'x', type: 'float32', dims: [2, 3, 50], data: X.map(String) }] }]);
    if (!r?.outputs) throw new Error(`onnxruntime: ${r?.error}`);
    want = r.outputs;
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('outputs match the unfused graph; fused chains run as one HardSwish node each', async () => {
    const s = await InferenceSession.create(MODEL, { backend: name });
    const seen: { op: string; node: string; outputs: readonly string[] }[] = [];
    const out = await s.run(
      { x: { dtype: 'float32', dims: [2, 3, 50], data: Float32Array.from(X) } },
      { onNode: (n) => void seen.push({ op: n.op, node: n.node, outputs: n.outputNames }) },
    );
    for (const y of ['y1', 'y2', 'y3', 'h3_c', 'y4', 'z']) {
      const ref = want[y]!.data.map(Number);
      const got = Array.from(out[y]!.data as Float32Array);
      expect(out[y]!.dims).toEqual(want[y]!.dims);
      // x·(relu6(x + 3)/6) against (x·relu6(x + 3))/6: a few float32 roundings apart
      got.forEach((v, i) => expect(Math.abs(v - ref[i]!)).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(ref[i]!))));
    }
    const fused = seen.filter((n) => n.op === 'HardSwish');
    expect(fused.map((n) => [n.node, n.outputs])).toEqual([
      ['h1_div', ['y1']],
      ['h2_div', ['y2']],
      ['h5_div', ['y5']],
    ]);
    const names = new Set(seen.map((n) => n.node));
    for (const gone of ['h1_add', 'h1_clip', 'h1_mul', 'h2_add', 'h2_mul', 'h5_mul', 'h3_mul', 'h4_clip', 'abs'])
      expect(names.has(gone)).toBe(false);
    // what is not hard swish, the elementwise chain fusion takes (fuse-elementwise.ts), each chain under its last
    // node's name: h3's Add → Clip (its Clip output is a graph output, so the chain ends there) and its Mul(x, ·) →
    // Div; h4 whole (its Div is by 5); Abs(t) → Add(·, y5)
    expect(seen.filter((n) => n.op === 'FusedElementwise').map((n) => n.node)).toEqual([
      'h3_clip',
      'h3_div',
      'h4_div',
      'after',
    ]);
    // the chains' ends at ±3 and beyond: −0 at x ≤ −3, x at x ≥ 3
    const y1 = out['y1']!.data as Float32Array;
    X.forEach((x, i) => {
      if (x <= -3) expect(Object.is(y1[i], -0)).toBe(true);
      if (x >= 3) expect(y1[i]).toBe(x);
    });
    await s.release();
  });
});
