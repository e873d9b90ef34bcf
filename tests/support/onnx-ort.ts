/**
 * Single-node ONNX cases checked against an independent peer, onnxruntime-node (CPU provider, graph
 * optimizations off, in a child process): each case becomes a node-test directory in ONNX's layout
 * (`test_NAME/model.onnx`, `test_data_set_0/input_N.pb`, `output_N.pb`) whose expected outputs ONNX Runtime
 * computed, so the conformance kit's runner (packages/conformance/src/onnx/runner.ts) runs them exactly as
 * ONNX's own tests.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type AttrSpec,
  type DTypeName,
  encodeTensor,
  type ModelOptions,
  singleNodeModel,
  type TensorSpec,
  type ValueSpec,
} from './onnx-builder.js';

const CHILD = fileURLToPath(new URL('./ort-child.mjs', import.meta.url));

/** One job's outputs by name (int64 data as decimal strings), or onnxruntime's error. */
export interface OrtResult {
  error?: string;
  outputs?: Record<string, { type: string; dims: number[]; data: (number | string)[] }>;
}

/**
 * A node input: random values in [lo, hi) unless `data` is given: integers for integer types; for float types
 * multiples of 1/8 unless `continuous`, so that sums of products (Conv, MatMul, pooling) are exact in float32
 * in any order and a float32 peer's result is the exact one the HAL's conv/matmul bounds are measured from.
 */
export interface InputCase {
  name: string;
  dtype?: DTypeName;
  shape: readonly number[];
  data?: readonly (number | bigint)[];
  range?: readonly [number, number];
  continuous?: boolean;
  /** An initializer of the model (a constant: Resize's scales, Slice's starts) rather than a graph input. */
  init?: boolean;
}

export interface OpCase {
  /** The test's name (its directory is `test_NAME`). */
  name: string;
  op: string;
  opset: number;
  inputs: readonly InputCase[];
  /** Output names and dtypes (default one float32 output 'y'). */
  outputs?: readonly { name: string; dtype?: DTypeName }[];
  attrs?: Record<string, AttrSpec>;
  /** The node's input names where they differ from `inputs` ('' for an omitted optional input). */
  nodeInputs?: readonly string[];
  options?: ModelOptions;
}

/** mulberry32: a small seeded generator (the data differ per case name, the same each run). */
function rng(seed: string): () => number {
  let a = [...seed].reduce((h, c) => Math.imul(h ^ c.charCodeAt(0), 2654435761) >>> 0, 0x9e3779b9);
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const INT = new Set<DTypeName>(['int8', 'uint8', 'int16', 'uint16', 'int32', 'int64', 'uint32', 'uint64', 'bool']);

function values(c: InputCase, next: () => number): (number | bigint)[] {
  if (c.data) return [...c.data];
  const dtype = c.dtype ?? 'float32';
  const [lo, hi] = c.range ?? (dtype === 'bool' ? [0, 2] : INT.has(dtype) ? [-10, 10] : [-2, 2]);
  const n = c.shape.reduce((p, d) => p * d, 1);
  return Array.from({ length: n }, () => {
    const v = lo + (hi - lo) * next();
    if (!INT.has(dtype)) return c.continuous ? Math.fround(v) : Math.round(v * 8) / 8;
    return dtype === 'int64' ? BigInt(Math.floor(v)) : Math.floor(v);
  });
}

const ORT_TYPES: Record<string, DTypeName> = {
  float32: 'float32',
  float64: 'float64',
  int64: 'int64',
  int32: 'int32',
  int8: 'int8',
  uint8: 'uint8',
  bool: 'bool',
};

/** A model file for onnxruntime and its feeds (int64 values as decimal strings). */
export interface OrtJob {
  model: string;
  feeds: { name: string; type: string; dims: readonly number[]; data: readonly string[] }[];
}

/** Runs models on onnxruntime-node in one child process (tests/support/ort-child.mjs). */
export function runOrt(jobs: readonly OrtJob[]): OrtResult[] {
  const child = spawnSync(process.execPath, [CHILD], {
    input: JSON.stringify(jobs),
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  if (child.status !== 0) throw new Error(`onnxruntime child process: ${child.stderr || child.error?.message}`);
  return JSON.parse(child.stdout) as OrtResult[];
}

/** Values of a feed or an expected output. */
export type Values = (number | bigint)[];

/** The model of a case, the feeds it runs with (graph inputs in order) and every input's values by name. */
export function caseModel(c: OpCase): {
  model: Uint8Array;
  feeds: { spec: ValueSpec; data: Values }[];
  values: Map<string, Values>;
} {
  const next = rng(c.name);
  const inits: TensorSpec[] = [];
  const feeds: { spec: ValueSpec; data: Values }[] = [];
  const all = new Map<string, Values>();
  for (const i of c.inputs) {
    const dtype = i.dtype ?? 'float32';
    const data = values(i, next);
    all.set(i.name, data);
    if (i.init) inits.push({ name: i.name, dtype, dims: i.shape, data });
    else feeds.push({ spec: { name: i.name, dtype, shape: i.shape }, data });
  }
  const outputs = (c.outputs ?? [{ name: 'y' }]).map((o) => ({ name: o.name, dtype: o.dtype ?? 'float32' }));
  const model = singleNodeModel(
    c.op,
    feeds.map((f) => f.spec),
    outputs,
    c.attrs ?? {},
    {
      opset: c.opset,
      ...c.options,
      initializers: inits,
      nodeInputs: c.nodeInputs ?? c.inputs.map((i) => i.name),
    },
  );
  return { model, feeds, values: all };
}

/** Writes `dir/test_NAME`: the model, its feeds and, where given, the expected outputs (in the case's order). */
export function writeCase(dir: string, c: OpCase, expected?: readonly TensorSpec[]): string {
  const { model, feeds } = caseModel(c);
  const root = join(dir, `test_${c.name}`);
  mkdirSync(join(root, 'test_data_set_0'), { recursive: true });
  writeFileSync(join(root, 'model.onnx'), model);
  feeds.forEach((f, k) => {
    const t = encodeTensor({ dtype: f.spec.dtype, dims: f.spec.shape as number[], data: f.data });
    writeFileSync(join(root, 'test_data_set_0', `input_${k}.pb`), t);
  });
  expected?.forEach((t, k) => writeFileSync(join(root, 'test_data_set_0', `output_${k}.pb`), encodeTensor(t)));
  return root;
}

/**
 * Writes each case as `dir/test_NAME` with onnxruntime's outputs as the expected ones (one child process,
 * tests/support/ort-child.mjs, runs them all), and returns those outputs by case name. Throws, naming the
 * case, where onnxruntime refuses the model: a case that is not valid ONNX is a fault of the case.
 */
export function writeOrtCases(dir: string, cases: readonly OpCase[]): Record<string, TensorSpec[]> {
  const built = cases.map((c) => ({ c, root: writeCase(dir, c), feeds: caseModel(c).feeds }));
  const jobs = built.map(
    ({ root, feeds }): OrtJob => ({
      model: join(root, 'model.onnx'),
      feeds: feeds.map((f) => ({
        name: f.spec.name,
        type: f.spec.dtype,
        dims: f.spec.shape as number[],
        data: f.data.map(String),
      })),
    }),
  );
  const results = runOrt(jobs);
  const expected: Record<string, TensorSpec[]> = {};
  built.forEach(({ c, root }, j) => {
    const r = results[j]!;
    if (r.error !== undefined) throw new Error(`case ${c.name}: onnxruntime: ${r.error}`);
    expected[c.name] = (c.outputs ?? [{ name: 'y' }]).map((o, k) => {
      const t = r.outputs![o.name]!;
      const dtype = ORT_TYPES[t.type];
      if (!dtype) throw new Error(`case ${c.name}: onnxruntime output of type ${t.type}`);
      const data = dtype === 'int64' ? t.data.map((v) => BigInt(v)) : t.data.map(Number);
      const spec: TensorSpec = { dtype, dims: t.dims, data };
      writeFileSync(join(root, 'test_data_set_0', `output_${k}.pb`), encodeTensor(spec));
      return spec;
    });
  });
  return expected;
}
