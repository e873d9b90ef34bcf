import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type OnnxNodeTestsResult, runOnnxNodeTests } from '@polyhal/conformance';
import { REPO_BACKENDS, requiredBackends } from '../support/backends.js';
import { type AttrSpec, attr, type TensorSpec } from '../support/onnx-builder.js';
import { caseModel, type InputCase, type OpCase, type Values, writeCase, writeOrtCases } from '../support/onnx-ort.js';

// LSTM, GRU and RNN (packages/onnx/src/ops-recurrent.ts) against ONNX's own node tests and against
// onnxruntime-node on every form the ONNX spec defines: directions, sequence_lens, initial states,
// peepholes, input_forget, clip, layout 1 (opset 14), activations with alpha/beta, linear_before_reset; and
// Silero VAD v5's LSTM (opset 16, hidden 128, one step).

const NODE_DIR = process.env['POLYHAL_ONNX_NODE_TESTS'] ?? '/usr/share/libonnx-testdata/data/node';
const CI = process.env['CI'] === 'true' || process.env['CI'] === '1';
const GATES = { LSTM: 4, GRU: 3, RNN: 1 } as const;
type Kind = keyof typeof GATES;

interface RnnForm {
  kind: Kind;
  opset?: number;
  T?: number;
  B?: number;
  I?: number;
  H?: number;
  direction?: 'forward' | 'reverse' | 'bidirectional';
  bias?: boolean;
  lens?: readonly number[];
  initial?: boolean;
  peepholes?: boolean;
  batchFirst?: boolean;
  attrs?: Record<string, AttrSpec>;
}

/** A case for one form: weights as initializers, X (and the states) as graph inputs; every output. */
function rnnCase(name: string, o: RnnForm): OpCase {
  const { kind, T = 3, B = 2, I = 4, H = 5 } = o;
  const D = o.direction === 'bidirectional' ? 2 : 1;
  const G = GATES[kind];
  const w = (n: string, shape: number[]): InputCase => ({ name: n, shape, range: [-0.5, 0.5], init: true });
  const state = (n: string): InputCase => ({ name: n, shape: o.batchFirst ? [B, D, H] : [D, B, H] });
  const inputs: InputCase[] = [
    { name: 'x', shape: o.batchFirst ? [B, T, I] : [T, B, I] },
    w('w', [D, G * H, I]),
    w('r', [D, G * H, H]),
  ];
  const names = ['x', 'w', 'r'];
  const add = (i: InputCase | undefined) => {
    if (i) inputs.push(i);
    names.push(i?.name ?? '');
  };
  add(o.bias ? w('b', [D, 2 * G * H]) : undefined);
  add(o.lens ? { name: 'lens', dtype: 'int32', shape: [B], data: o.lens, init: true } : undefined);
  add(o.initial ? state('h0') : undefined);
  if (kind === 'LSTM') add(o.initial ? state('c0') : undefined);
  if (kind === 'LSTM' && o.peepholes) add(w('p', [D, 3 * H]));
  while (names.at(-1) === '') names.pop();
  const outputs = kind === 'LSTM' ? [{ name: 'y' }, { name: 'yh' }, { name: 'yc' }] : [{ name: 'y' }, { name: 'yh' }];
  return {
    name,
    op: kind,
    opset: o.opset ?? 14,
    inputs,
    nodeInputs: names,
    outputs,
    attrs: {
      hidden_size: attr.int(H),
      ...(o.direction ? { direction: attr.string(o.direction) } : {}),
      ...(o.batchFirst ? { layout: attr.int(1) } : {}),
      ...o.attrs,
    },
  };
}

/** The form checked with layout 1 (onnxruntime has no layout 1: its layout-0 twin's outputs, transposed). */
const LAYOUT_FORM = { direction: 'bidirectional', T: 3, B: 2, lens: [3, 2], bias: true, initial: true } as const;

/** Row-major `data` of `shape` permuted: out.shape[i] = shape[perm[i]]. */
function permute(data: Values, shape: readonly number[], perm: readonly number[]): Values {
  const strides = shape.map((_, i) => shape.slice(i + 1).reduce((p, d) => p * d, 1));
  const out = perm.map((a) => shape[a]!);
  const n = out.reduce((p, d) => p * d, 1);
  const res: Values = new Array(n);
  for (let j = 0; j < n; j++) {
    let rest = j;
    let src = 0;
    for (let i = out.length - 1; i >= 0; i--) {
      src += (rest % out[i]!) * strides[perm[i]!]!;
      rest = Math.floor(rest / out[i]!);
    }
    res[j] = data[src]!;
  }
  return res;
}

/**
 * The layout-1 (batch-first) case of a kind and its expected outputs: the layout-0 twin's inputs and
 * onnxruntime's outputs, with the batch and sequence (or direction) axes swapped.
 */
function layoutCase(kind: Kind, expected: Record<string, TensorSpec[]>): [OpCase, TensorSpec[]] {
  const twin = CASES.find((c) => c.name === `${kind.toLowerCase()}_layout0_twin`)!;
  const { values } = caseModel(twin);
  const swapped = (i: InputCase): InputCase => {
    const data = values.get(i.name)!;
    if (i.name !== 'x' && i.name !== 'h0' && i.name !== 'c0') return { ...i, data };
    const [a, b, c] = i.shape as [number, number, number];
    return { ...i, shape: [b, a, c], data: permute(data, i.shape, [1, 0, 2]) };
  };
  const c: OpCase = {
    ...twin,
    name: `${kind.toLowerCase()}_layout1`,
    inputs: twin.inputs.map(swapped),
    attrs: { ...twin.attrs, layout: attr.int(1) },
  };
  const outs = expected[twin.name]!.map((t, k) => ({
    ...t,
    dims: k === 0 ? [t.dims[2]!, t.dims[0]!, t.dims[1]!, t.dims[3]!] : [t.dims[1]!, t.dims[0]!, t.dims[2]!],
    data: permute(Array.from(t.data!), t.dims, k === 0 ? [2, 0, 1, 3] : [1, 0, 2]),
  }));
  return [c, outs];
}

const CASES: OpCase[] = (['LSTM', 'GRU', 'RNN'] as const).flatMap((kind) => {
  const k = kind.toLowerCase();
  const cases = [
    rnnCase(`${k}_defaults_opset7`, { kind, opset: 7 }),
    rnnCase(`${k}_forward_bias_initial`, { kind, bias: true, initial: true }),
    rnnCase(`${k}_reverse`, { kind, direction: 'reverse', bias: true, initial: true }),
    rnnCase(`${k}_bidirectional`, { kind, direction: 'bidirectional', bias: true, initial: true }),
    rnnCase(`${k}_seq_lens`, { kind, T: 4, B: 3, lens: [4, 2, 1], bias: true, initial: true }),
    rnnCase(`${k}_seq_lens_bidirectional`, {
      kind,
      T: 4,
      B: 3,
      lens: [1, 4, 3],
      direction: 'bidirectional',
      bias: true,
      initial: true,
    }),
    rnnCase(`${k}_layout0_twin`, { kind, ...LAYOUT_FORM }),
    rnnCase(`${k}_clip`, { kind, bias: true, initial: true, attrs: { clip: attr.float(0.4) } }),
  ];
  const acts = { LSTM: ['HardSigmoid', 'LeakyRelu', 'Softsign'], GRU: ['Sigmoid', 'ScaledTanh'], RNN: ['Elu'] }[kind];
  cases.push(
    rnnCase(`${k}_activations_alpha_beta`, {
      kind,
      bias: true,
      attrs: {
        activations: attr.strings(acts),
        activation_alpha: attr.floats([0.3, 0.1]),
        activation_beta: attr.floats([0.4]),
      },
    }),
  );
  if (kind === 'LSTM') {
    cases.push(rnnCase('lstm_peepholes', { kind, bias: true, initial: true, peepholes: true }));
    cases.push(rnnCase('lstm_input_forget', { kind, bias: true, initial: true, attrs: { input_forget: attr.int(1) } }));
    cases.push(
      rnnCase('lstm_silero_opset16', { kind, opset: 16, T: 1, B: 1, I: 128, H: 128, bias: true, initial: true }),
    );
  }
  if (kind === 'GRU') {
    const lbr = { linear_before_reset: attr.int(1) };
    cases.push(rnnCase('gru_linear_before_reset', { kind, bias: true, initial: true, attrs: lbr }));
    cases.push(rnnCase('gru_linear_before_reset_no_bias', { kind, direction: 'reverse', attrs: lbr }));
  }
  return cases;
});

let dir = '';
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'polyhal-onnx-recurrent-'));
  const expected = writeOrtCases(dir, CASES);
  for (const kind of ['LSTM', 'GRU', 'RNN'] as const) writeCase(dir, ...layoutCase(kind, expected));
}, 120_000);
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`LSTM, GRU and RNN on ${name}`, () => {
    const run = async (root: string, filter?: RegExp): Promise<OnnxNodeTestsResult | undefined> => {
      try {
        return await runOnnxNodeTests(factory, root, filter ? { filter } : {});
      } catch (e) {
        if (!requiredBackends().includes(name) && (e as Error).name === 'BackendUnavailableError') return undefined;
        throw e;
      }
    };
    const failures = (r: OnnxNodeTestsResult) =>
      r.results.filter((t) => t.status !== 'passed').map((t) => `${t.test}: ${t.status} ${t.reason}`);

    test(`onnxruntime's outputs on ${CASES.length + 3} forms (layout 1: its layout-0 twin's)`, async () => {
      const r = await run(dir);
      if (!r) return;
      expect(failures(r)).toEqual([]);
      expect(r.passed).toBe(CASES.length + 3);
    }, 120_000);

    test("ONNX's node tests (test_lstm_*, test_gru_*, test_*rnn_*)", async () => {
      if (!existsSync(join(NODE_DIR, 'test_lstm_defaults')) && !CI) return;
      const r = await run(NODE_DIR, /^test_(lstm|gru|simple_rnn|rnn)_/);
      if (!r) return;
      expect(failures(r)).toEqual([]);
      expect(r.passed).toBe(12);
    }, 120_000);
  });
}
