import { describe, expect, test } from '@jest/globals';
import type { ComputeBackend } from '@polyhal/hal';
import { InferenceSession, OnnxUnsupportedError, type OutputTensor } from '@polyhal/onnx';
import { openBackend, REPO_BACKENDS } from '../support/backends.js';
import { attr, encodeModel, type GraphSpec } from '../support/onnx-builder.js';

// If, Loop and Scan in InferenceSession: subgraphs reading values of the graphs around them (outer scope),
// loop-carried values, scan outputs, conditions computed on the host; results against plain JavaScript
// written here, buffers counted over repeated runs.

const nums = (t: OutputTensor): number[] => Array.prototype.map.call(t.data, Number) as number[];
const f32 = (dims: number[], data: number[]) => ({ dtype: 'float32', dims, data: Float32Array.from(data) });
const fr = Math.fround;

// y = flag ? x * w + a : -a, with a = relu(x) and w an initializer of the main graph (both outer scope);
// the else branch's output is an outer value's negation, the then branch adds a constant of its own.
const IF_MODEL: GraphSpec = {
  nodes: [
    { op: 'Relu', inputs: ['x'], outputs: ['a'], name: 'relu' },
    {
      op: 'If',
      inputs: ['flag'],
      outputs: ['y'],
      name: 'choose',
      attrs: {
        then_branch: attr.graph({
          name: 'then',
          nodes: [
            { op: 'Mul', inputs: ['x', 'w'], outputs: ['xw'] },
            { op: 'Add', inputs: ['xw', 'a'], outputs: ['t'] },
            { op: 'Add', inputs: ['t', 'half'], outputs: ['then_y'] },
          ],
          inputs: [],
          outputs: [{ name: 'then_y', dtype: 'float32' }],
          initializers: [{ name: 'half', dtype: 'float32', dims: [], data: [0.5] }],
        }),
        else_branch: attr.graph({
          name: 'else',
          nodes: [{ op: 'Neg', inputs: ['a'], outputs: ['else_y'] }],
          inputs: [],
          outputs: [{ name: 'else_y', dtype: 'float32' }],
        }),
      },
    },
  ],
  inputs: [
    { name: 'x', dtype: 'float32', shape: [3] },
    { name: 'flag', dtype: 'bool', shape: [] },
  ],
  outputs: [{ name: 'y', dtype: 'float32', shape: [3] }],
  initializers: [{ name: 'w', dtype: 'float32', dims: [3], data: [2, -3, 0.25] }],
};

// Loop: acc += x * i while i < M and the body's condition (i < limit) holds; the scan output stacks each
// iteration's acc; an If inside the body reads x from the main graph (two scopes up).
const LOOP_MODEL: GraphSpec = {
  nodes: [
    {
      op: 'Loop',
      inputs: ['M', 'go', 'acc0'],
      outputs: ['acc', 'history'],
      name: 'loop',
      attrs: {
        body: attr.graph({
          name: 'body',
          nodes: [
            { op: 'Cast', inputs: ['i'], outputs: ['fi'], attrs: { to: attr.int(1) } },
            { op: 'Mul', inputs: ['x', 'fi'], outputs: ['step'] },
            { op: 'Add', inputs: ['acc_in', 'step'], outputs: ['acc_next'] },
            { op: 'Less', inputs: ['i', 'limit'], outputs: ['cond_out'] },
            { op: 'Greater', inputs: ['i', 'one'], outputs: ['late'] },
            {
              op: 'If',
              inputs: ['late'],
              outputs: ['snap'],
              attrs: {
                then_branch: attr.graph({
                  nodes: [{ op: 'Add', inputs: ['acc_next', 'x'], outputs: ['p'] }],
                  inputs: [],
                  outputs: [{ name: 'p', dtype: 'float32' }],
                }),
                else_branch: attr.graph({
                  nodes: [{ op: 'Identity', inputs: ['acc_next'], outputs: ['q'] }],
                  inputs: [],
                  outputs: [{ name: 'q', dtype: 'float32' }],
                }),
              },
            },
          ],
          inputs: [
            { name: 'i', dtype: 'int64', shape: [] },
            { name: 'cond_in', dtype: 'bool', shape: [] },
            { name: 'acc_in', dtype: 'float32', shape: [3] },
          ],
          outputs: [
            { name: 'cond_out', dtype: 'bool', shape: [] },
            { name: 'acc_next', dtype: 'float32', shape: [3] },
            { name: 'snap', dtype: 'float32', shape: [3] },
          ],
        }),
      },
    },
  ],
  inputs: [
    { name: 'x', dtype: 'float32', shape: [3] },
    { name: 'M', dtype: 'int64', shape: [] },
    { name: 'limit', dtype: 'int64', shape: [] },
  ],
  outputs: [
    { name: 'acc', dtype: 'float32', shape: [3] },
    { name: 'history', dtype: 'float32', shape: [null, 3] },
  ],
  initializers: [
    { name: 'go', dtype: 'bool', dims: [], data: [1] },
    { name: 'acc0', dtype: 'float32', dims: [3], data: [0, 0, 0] },
    { name: 'one', dtype: 'int64', dims: [], data: [1n] },
  ],
};

function loopOracle(x: number[], m: number, limit: number): { acc: number[]; history: number[][] } {
  let acc = [0, 0, 0];
  const history: number[][] = [];
  let cond = true;
  for (let i = 0; i < m && cond; i++) {
    acc = acc.map((a, k) => fr(a + fr(x[k]! * i)));
    history.push(i > 1 ? acc.map((a, k) => fr(a + x[k]!)) : [...acc]);
    cond = i < limit;
  }
  return { acc, history };
}

// Scan over the rows of seq ([T, 2]) with a running sum as state; the scan output is 2 × the sum. Directions
// and axes from the attributes.
const scanModel = (dirIn: number, axisOut: number): GraphSpec => ({
  nodes: [
    {
      op: 'Scan',
      inputs: ['s0', 'seq'],
      outputs: ['s', 'ys'],
      name: 'scan',
      attrs: {
        num_scan_inputs: attr.int(1),
        scan_input_directions: attr.ints([dirIn]),
        scan_output_axes: attr.ints([axisOut]),
        body: attr.graph({
          nodes: [
            { op: 'Add', inputs: ['s_in', 'row'], outputs: ['s_out'] },
            { op: 'Mul', inputs: ['s_out', 'two'], outputs: ['y'] },
          ],
          inputs: [
            { name: 's_in', dtype: 'float32', shape: [2] },
            { name: 'row', dtype: 'float32', shape: [2] },
          ],
          outputs: [
            { name: 's_out', dtype: 'float32', shape: [2] },
            { name: 'y', dtype: 'float32', shape: [2] },
          ],
        }),
      },
    },
  ],
  inputs: [
    { name: 's0', dtype: 'float32', shape: [2] },
    { name: 'seq', dtype: 'float32', shape: ['T', 2] },
  ],
  outputs: [
    { name: 's', dtype: 'float32', shape: [2] },
    { name: 'ys', dtype: 'float32' },
  ],
  initializers: [{ name: 'two', dtype: 'float32', dims: [], data: [2] }],
});

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`InferenceSession control flow on ${name}`, () => {
    let be: ComputeBackend | undefined;
    openBackend(name, factory, (b) => (be = b));

    test('If: the branch the host condition picks, reading outer-scope values; nothing leaked', async () => {
      if (!be) return;
      const s = await InferenceSession.create(encodeModel(IF_MODEL), { backend: be });
      const live = be.liveBufferCount();
      const x = [1.5, -2, 4];
      const a = x.map((v) => Math.max(v, 0));
      for (const flag of [true, false, true]) {
        const { y } = await s.run({ x: f32([3], x), flag: { dtype: 'bool', dims: [], data: [flag] } });
        const want = flag ? x.map((v, k) => fr(fr(fr(v * [2, -3, 0.25][k]!) + a[k]!) + 0.5)) : a.map((v) => -v);
        expect(nums(y!)).toEqual(want);
        expect(be.liveBufferCount()).toBe(live);
      }
      expect(s.lastRun!.deviceReads).toBe(0);
      await s.release();
    });

    test('Loop: carried values, a condition from the body, scan outputs, an If two scopes down', async () => {
      if (!be) return;
      const s = await InferenceSession.create(encodeModel(LOOP_MODEL), { backend: be });
      const live = be.liveBufferCount();
      const x = [0.5, -1.25, 3];
      const i64 = (v: number) => ({ dtype: 'int64', dims: [], data: BigInt64Array.of(BigInt(v)) });
      for (const [m, limit] of [
        [10, 3],
        [2, 5],
        [0, 1],
      ] as const) {
        const out = await s.run({ x: f32([3], x), M: i64(m), limit: i64(limit) });
        const want = loopOracle(x, m, limit);
        expect(nums(out['acc']!)).toEqual(want.acc);
        expect(out['history']!.dims).toEqual([want.history.length, 3]);
        expect(nums(out['history']!)).toEqual(want.history.flat());
        expect(be.liveBufferCount()).toBe(live);
      }
      // the trip count, the conditions and the iteration number stay on the host
      expect(s.lastRun!.deviceReads).toBe(0);
      await s.release();
    });

    test.each([
      [0, 0],
      [1, 0],
      [1, 1],
    ])('Scan (input direction %i, output axis %i): state and stacked outputs', async (dirIn, axisOut) => {
      if (!be) return;
      const s = await InferenceSession.create(encodeModel(scanModel(dirIn, axisOut)), { backend: be });
      const live = be.liveBufferCount();
      const seq = [1, 2, 3, 4, 5, 6, 7, 8.5];
      const rows = [0, 1, 2, 3].map((t) => seq.slice(t * 2, t * 2 + 2));
      const order = dirIn ? [...rows].reverse() : rows;
      let state = [0.25, -1];
      const ys: number[][] = [];
      for (const r of order) {
        state = state.map((v, k) => fr(v + r[k]!));
        ys.push(state.map((v) => fr(v * 2)));
      }
      const out = await s.run({ s0: f32([2], [0.25, -1]), seq: f32([4, 2], seq) });
      expect(nums(out['s']!)).toEqual(state);
      if (axisOut === 0) {
        expect(out['ys']!.dims).toEqual([4, 2]);
        expect(nums(out['ys']!)).toEqual(ys.flat());
      } else {
        expect(out['ys']!.dims).toEqual([2, 4]);
        expect(nums(out['ys']!)).toEqual([0, 1].flatMap((k) => ys.map((y) => y[k]!)));
      }
      expect(be.liveBufferCount()).toBe(live);
      await s.release();
    });
  });
}

describe('InferenceSession.create checks subgraphs', () => {
  test('an unsupported node in a branch not taken is reported, with the path of the If holding it', async () => {
    const be = await REPO_BACKENDS['cpu']!();
    const model = structuredClone(IF_MODEL) as GraphSpec;
    const branch = model.nodes[1]!.attrs!['else_branch']!.value as GraphSpec;
    (branch.nodes as unknown[]) = [{ op: 'NoSuchOp', inputs: ['a'], outputs: ['else_y'], name: 'deep' }];
    try {
      await expect(InferenceSession.create(encodeModel(model), { backend: be })).rejects.toThrow(
        /choose > deep \(NoSuchOp\): op NoSuchOp/,
      );
      const e = await InferenceSession.create(encodeModel(model), { backend: be }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(OnnxUnsupportedError);
      expect((e as OnnxUnsupportedError).nodes).toEqual([
        { op: 'NoSuchOp', node: 'deep', kind: 'op', reason: expect.stringMatching(/NoSuchOp/), path: ['choose'] },
      ]);
    } finally {
      be.dispose();
    }
  });
});
