/**
 * Runs ONNX's backend node tests (onnx/backend/test/data/node: `test_NAME/model.onnx` and
 * `test_data_set_N/{input,output}_N.pb`) on a backend through the ONNX op table.
 */
import {
  type BackendCapabilities,
  capabilitiesOf,
  type ComputeBackend,
  type DeviceBuffer,
  isDType,
  type NDArray,
  nodeBuiltin,
} from '@polyhal/hal';
import { type BackendFactory, runtimeDescription } from '../runner.js';
import { compareOnnx } from './compare.js';
import { ONNX_OPS } from '@polyhal/onnx';
import { decodeModel, decodeTensor, type OnnxModel, type OnnxTensor, type OnnxValueInfo } from '@polyhal/onnx';
import { Attrs, type Contract, type NodeContext, NotExpressible, type ReasonKind } from '@polyhal/onnx';

/** The result of one ONNX node test on one backend. */
export interface OnnxTestResult {
  /** The test's directory name, e.g. `test_add_bcast`. */
  test: string;
  /** The node's op type ('' when the model has no single node). */
  op: string;
  /** passed, failed, or not expressible on the HAL (then `kind` and `reason` say why). */
  status: 'passed' | 'failed' | 'not-expressible';
  /**
   * For not-expressible: what is missing — an op, a dtype, an attribute (or its value), an input form, a
   * multi-node graph.
   */
  kind?: ReasonKind;
  /** For not-expressible: why, e.g. "dtype float64"; for failed: what went wrong. */
  reason?: string;
  /** Data sets run (each is one set of inputs and expected outputs). */
  dataSets: number;
  /** Largest |got − want| over the outputs of every data set. */
  maxAbsError?: number;
  /** Largest distance in float32 ulps over the outputs of every data set. */
  maxUlpError?: number;
  /** The comparison applied: "exact", "onnx" (rtol 1e-3, atol 1e-7) or "onnx ∩ hal:OP (...)". */
  contract?: string;
}

/** What runOnnxNodeTests returns: one result per test directory, and the counts. */
export interface OnnxNodeTestsResult {
  /** The backend's registry name. */
  backend: string;
  /** The backend's device. */
  deviceName: string;
  /** The JavaScript runtime and version (runtimeDescription()). */
  runtime: string;
  /** The arithmetic the backend declared (its tolerances follow it). */
  capabilities: BackendCapabilities;
  /** The directory of node tests that was run. */
  dir: string;
  /** One result per test, in directory order. */
  results: OnnxTestResult[];
  /** Tests that passed. */
  passed: number;
  /** Tests that ran and failed. */
  failed: number;
  /** Tests whose node the HAL cannot express (an op, dtype or attribute it lacks). */
  notExpressible: number;
}

/** Options of runOnnxNodeTests. */
export interface OnnxNodeTestsOptions {
  /** Only tests whose directory name contains this string (or matches this RegExp). */
  filter?: string | RegExp;
  /**
   * Milliseconds one test (all its data sets) may take on the backend (default 30 000); past it the test fails
   * and the run stops.
   */
  timeoutMs?: number;
  /** Called after each test (progress reporting). */
  onResult?: (r: OnnxTestResult, done: number, total: number) => void;
}

interface Fs {
  promises: {
    readdir(p: string): Promise<string[]>;
    readFile(p: string): Promise<Uint8Array>;
    stat(p: string): Promise<{ isDirectory(): boolean }>;
  };
}

const isNDArray = (v: unknown): v is NDArray =>
  typeof v === 'object' && v !== null && 'buffer' in v && 'shape' in v && 'strides' in v;

/** A view of `be` that records every NDArray its methods return (so temporaries can be freed). */
function tracking(be: ComputeBackend, created: NDArray[]): ComputeBackend {
  return new Proxy(be, {
    get(target, key) {
      const v = Reflect.get(target, key, target) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        const r = (v as (...a: unknown[]) => unknown).apply(target, args);
        if (isNDArray(r)) created.push(r);
        return r;
      };
    },
  });
}

/**
 * int64 data maps to int32 (the HAL has no int64): a tensor whose values all fit [−2^31, 2^31) is
 * uploaded as int32 and an int64 output is compared with the int32 result; a value beyond that range
 * makes the test not expressible ("int64 values beyond int32"), never a wrapped number.
 */
function int64AsInt32(t: OnnxTensor): Int32Array {
  const d = t.data as BigInt64Array;
  for (const v of d)
    if (v < -(2n ** 31n) || v >= 2n ** 31n) throw new NotExpressible('dtype', 'int64 values beyond int32');
  return Int32Array.from(d, (v) => Number(v));
}

function upload(be: ComputeBackend, t: OnnxTensor): NDArray {
  if (t.dtype === 'float32' && t.data instanceof Float32Array) return be.fromArray(t.data, t.dims, 'float32');
  if (t.dtype === 'float16' && t.data instanceof Float32Array) return be.fromArray(t.data, t.dims, 'float16');
  if (t.dtype === 'float64' && t.data instanceof Float64Array) return be.fromArray(t.data, t.dims, 'float64');
  if (t.dtype === 'int32' && t.data instanceof Int32Array) return be.fromArray(t.data, t.dims, 'int32');
  if ((t.dtype === 'int8' || t.dtype === 'uint8') && t.data instanceof Int32Array)
    return be.fromArray(t.data, t.dims, t.dtype);
  if (t.dtype === 'int64' && t.data instanceof BigInt64Array) return be.fromArray(int64AsInt32(t), t.dims, 'int32');
  if (t.dtype === 'bool' && t.data instanceof Int32Array) return be.fromArray(t.data, t.dims, 'bool');
  throw new NotExpressible('dtype', `dtype ${t.dtype}`);
}

function hostNumbers(t: OnnxTensor): number[] {
  if (!t.data) throw new NotExpressible('dtype', `host input of dtype ${t.dtype}`);
  if (t.data instanceof BigInt64Array) {
    const lim = 2n ** 53n;
    return Array.from(t.data, (v) => Number(v > lim ? lim : v < -lim ? -lim : v));
  }
  return Array.from(t.data);
}

class Failure extends Error {}

/**
 * The file `rel` of the test directory `root` decoded: a file that cannot be read or decoded (empty, cut
 * short, not protobuf: OnnxDecodeError) is a Failure that names it and says what is wrong.
 */
async function readDecoded<T>(fs: Fs, root: string, rel: string, decode: (b: Uint8Array) => T): Promise<T> {
  let bytes: Uint8Array;
  try {
    bytes = await fs.promises.readFile(`${root}/${rel}`);
  } catch (e) {
    throw new Failure(`${rel}: cannot be read (${(e as Error).message})`);
  }
  try {
    return decode(bytes);
  } catch (e) {
    throw new Failure(`${rel}: ${(e as Error).message}`);
  }
}

/** A data set's tensor against the graph's declaration of its value: another dtype or shape is a Failure. */
function checkDeclared(rel: string, t: OnnxTensor, v: OnnxValueInfo | undefined): void {
  if (v?.kind !== 'tensor') return;
  if (v.dtype !== t.dtype)
    throw new Failure(`${rel}: a tensor of ${t.dtype}, but the graph's '${v.name}' is ${v.dtype}`);
  const shape = v.shape;
  if (shape && (shape.length !== t.dims.length || shape.some((d, i) => d !== null && d !== t.dims[i])))
    throw new Failure(
      `${rel}: shape [${t.dims.join(', ')}], but the graph's '${v.name}' is ` +
        `[${shape.map((d) => d ?? '?').join(', ')}]`,
    );
}

/** One test, every data set: throws NotExpressible or Failure, else returns the worst errors seen. */
async function runTest(
  fs: Fs,
  root: string,
  test: string,
  model: OnnxModel,
  be: ComputeBackend,
  caps: BackendCapabilities,
): Promise<Omit<OnnxTestResult, 'test' | 'op' | 'status'>> {
  if (model.nodes.length !== 1) throw new NotExpressible('graph', 'not a single-node test');
  const node = model.nodes[0]!;
  if (node.domain !== '' && node.domain !== 'ai.onnx')
    throw new NotExpressible('op', `op ${node.domain}.${node.opType}`);
  const mapping = ONNX_OPS[node.opType];
  if (!mapping) throw new NotExpressible('op', `op ${node.opType}`);
  const host = new Set(mapping.host ?? []);
  const dtypes = mapping.dtypes ?? ['float32'];
  const typeOf = (name: string): string => {
    if (name === '') return '';
    const init = model.initializers.find((t) => t.name === name);
    if (init) return init.dtype;
    const vi = [...model.inputs, ...model.outputs].find((v) => v.name === name);
    if (!vi) throw new NotExpressible('input', `value '${name}' has no type in the graph`);
    if (vi.kind !== 'tensor') throw new NotExpressible('dtype', `${vi.kind} value`);
    return vi.dtype!;
  };
  const inputTypes = node.inputs.map(typeOf);
  const outputTypes = node.outputs.map(typeOf);
  // int64 device values run as int32 where the mapping takes int32 (see int64AsInt32)
  const accepts = (t: string): boolean => dtypes.includes(t) || (t === 'int64' && dtypes.includes('int32'));
  for (const t of [...inputTypes.filter((_, i) => !host.has(i)), ...outputTypes]) {
    if (t !== '' && !accepts(t)) throw new NotExpressible('dtype', `dtype ${t}`);
    // a dtype the HAL has but this backend does not (float64 on webgpu: UnsupportedOpError on creation)
    if (isDType(t) && !(be.supportsDType?.(t) ?? t !== 'float64'))
      throw new NotExpressible('dtype', `dtype ${t} (not on backend ${be.name})`);
  }
  const opset = model.opsets.get('') ?? 1;
  const sets = (await fs.promises.readdir(`${root}/${test}`)).filter((d) => d.startsWith('test_data_set_')).sort();
  if (!sets.length) throw new Failure('no test_data_set_* directory');
  const graphInputs = model.inputs.filter((v) => !model.initializers.some((t) => t.name === v.name));
  let maxAbsError = 0;
  let maxUlpError = 0;
  let applied = '';
  for (const set of sets) {
    const read = async (name: string, declared: OnnxValueInfo): Promise<OnnxTensor> => {
      const rel = `${test}/${set}/${name}`;
      const t = await readDecoded(fs, root, rel, decodeTensor);
      checkDeclared(rel, t, declared);
      return t;
    };
    const values = new Map<string, OnnxTensor>(model.initializers.map((t) => [t.name, t]));
    for (const [k, v] of graphInputs.entries()) values.set(v.name, await read(`input_${k}.pb`, v));
    const expected: OnnxTensor[] = [];
    for (const [k, v] of model.outputs.entries()) expected.push(await read(`output_${k}.pb`, v));
    const inputs = node.inputs.map((n) => (n === '' ? undefined : values.get(n)));
    const attrs = new Attrs(node.opType, node.attributes);
    const ctx: NodeContext = {
      node,
      opset,
      attrs,
      // device values of int64 are int32 on the HAL (int64AsInt32); host inputs keep their type
      inputTypes: inputTypes.map((t, i) => (t === 'int64' && !host.has(i) ? 'int32' : t)),
      outputTypes: outputTypes.map((t) => (t === 'int64' ? 'int32' : t)),
      inputShapes: inputs.map((t) => t?.dims),
      hostInputs: inputs.map((t, i) => (host.has(i) ? t : undefined)),
      numbers: (i) => (inputs[i] === undefined ? undefined : hostNumbers(inputs[i]!)),
    };
    const lowered = mapping.plan(ctx);
    const contract: Contract =
      typeof mapping.contract === 'function' ? mapping.contract(ctx) : (mapping.contract ?? { kind: 'onnx' });
    const unread = attrs.unread();
    if (unread.length)
      throw new NotExpressible(
        'attribute',
        `${node.opType} attribute ${unread.map((a) => `'${a}'`).join(', ')} not mapped`,
      );
    // Run: upload device inputs, lower, read each output, then free every buffer it touched.
    const before = be.liveBufferCount();
    const created: NDArray[] = [];
    const buffers = new Set<DeviceBuffer>();
    try {
      const devIn = inputs.map((t, i) => (t === undefined || host.has(i) ? undefined : upload(be, t)));
      devIn.forEach((x) => x && buffers.add(x.buffer));
      const outs = lowered(tracking(be, created), devIn);
      outs.forEach((x) => buffers.add(x.buffer));
      for (let k = 0; k < model.outputs.length; k++) {
        const j = node.outputs.indexOf(model.outputs[k]!.name);
        const y = outs[j];
        const want = expected[k]!;
        if (!y) throw new Failure(`output ${k}: the lowering returned no array`);
        if (y.shape.length !== want.dims.length || y.shape.some((d, i) => d !== want.dims[i])) {
          throw new Failure(`${set} output ${k}: shape [${y.shape.join(', ')}], expected [${want.dims.join(', ')}]`);
        }
        const wide = want.dtype === 'int64' && want.data instanceof BigInt64Array;
        if ((y.dtype !== want.dtype && !(wide && y.dtype === 'int32')) || !want.data)
          throw new Failure(`${set} output ${k}: dtype ${y.dtype}, expected ${want.dtype}`);
        const got = await be.read(y);
        const wantData = wide ? int64AsInt32(want) : (want.data as ArrayLike<number>);
        const c = compareOnnx(got, wantData, wide ? 'int32' : want.dtype, contract, caps);
        applied = c.applied;
        maxAbsError = Math.max(maxAbsError, c.maxAbsError);
        maxUlpError = Math.max(maxUlpError, c.maxUlpError);
        if (!c.pass) {
          const f = c.firstFailure!;
          throw new Failure(
            f.index < 0
              ? `${set} output ${k}: ${f.got} values, expected ${f.want}`
              : `${set} output ${k}[${f.index}]: got ${f.got}, expected ${f.want} (${c.applied})`,
          );
        }
      }
    } finally {
      created.forEach((x) => buffers.add(x.buffer));
      for (const b of buffers) be.deallocate(b);
    }
    const after = be.liveBufferCount();
    if (after !== before) throw new Failure(`${set}: ${after - before} buffers leaked`);
  }
  return { dataSets: sets.length, maxAbsError, maxUlpError, contract: applied };
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Failure(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([p, expired]).finally(() => clearTimeout(timer));
}

/**
 * Runs ONNX's backend node tests found in `dir` (ONNX's `onnx/backend/test/data/node`, or Debian's
 * `/usr/share/libonnx-testdata/data/node`) on a backend made by `factory` (disposed at the end).
 *
 * Reads each `test_*` directory's `model.onnx` (ModelProto) and every `test_data_set_N/input_N.pb`
 * and `output_N.pb` (TensorProto). A single-node test whose op, attributes and dtypes the ONNX op table
 * maps onto the HAL is run — int64 shape/axes/pads inputs read on the host, float32/int32 data
 * uploaded — and its outputs compared with ONNX's expected outputs (src/onnx/compare.ts: ONNX's
 * rtol 1e-3 / atol 1e-7, and our tighter contract where there is one); every buffer is freed and a
 * leak fails the test. Any other test is `not-expressible`, with its reason's kind and text.
 *
 * Returns one row per test (sorted by name) and the counts. Errors: rejects when the runtime has no
 * file system (browsers: Node.js, Deno and Bun only), when `dir` cannot be read or holds no `test_*`
 * directory, when `filter` matches no test, or when the factory throws. A test whose files cannot be
 * read or decoded (empty, cut short, not protobuf; the reason names the file), whose data sets do not
 * match the graph's dtypes and shapes, whose op throws, or that does not settle within `timeoutMs` is a
 * `failed` row (a time-out also stops the run: the remaining tests are not run).
 */
export async function runOnnxNodeTests(
  factory: BackendFactory,
  dir: string,
  options: OnnxNodeTestsOptions = {},
): Promise<OnnxNodeTestsResult> {
  const fs = await nodeBuiltin<Fs>('fs');
  if (!fs)
    throw new Error('runOnnxNodeTests reads ONNX test files from the file system: it runs in Node.js, Deno or Bun');
  let names: string[];
  try {
    names = (await fs.promises.readdir(dir)).filter((n) => n.startsWith('test_')).sort();
  } catch (e) {
    throw new Error(`cannot read the ONNX node test directory ${dir}: ${(e as Error).message}`);
  }
  if (!names.length) throw new Error(`${dir} holds no test_* directory (expected ONNX's onnx/backend/test/data/node)`);
  const f = options.filter;
  if (f !== undefined) {
    names = names.filter((n) => (typeof f === 'string' ? n.includes(f) : f.test(n)));
    if (!names.length)
      throw new Error(`filter '${String(f)}' matches no test in ${dir} (test names look like 'test_add_bcast')`);
  }
  const timeoutMs = options.timeoutMs ?? 30_000;
  const be = await factory();
  const caps = capabilitiesOf(be);
  const results: OnnxTestResult[] = [];
  try {
    for (const test of names) {
      let row: OnnxTestResult;
      let op = '';
      let stop = false;
      try {
        const model = await readDecoded(fs, dir, `${test}/model.onnx`, decodeModel);
        op = model.nodes.length === 1 ? model.nodes[0]!.opType : '';
        row = {
          test,
          op,
          status: 'passed',
          ...(await withTimeout(runTest(fs, dir, test, model, be, caps), timeoutMs, test)),
        };
      } catch (e) {
        if (e instanceof NotExpressible)
          row = { test, op, status: 'not-expressible', kind: e.kind, reason: e.reason, dataSets: 0 };
        else {
          stop = e instanceof Failure && /did not settle/.test(e.message);
          row = {
            test,
            op,
            status: 'failed',
            reason: e instanceof Failure ? e.message : `${(e as Error).name}: ${(e as Error).message}`,
            dataSets: 0,
          };
        }
      }
      results.push(row);
      options.onResult?.(row, results.length, names.length);
      if (stop) break;
    }
  } finally {
    be.dispose();
  }
  const count = (s: OnnxTestResult['status']) => results.filter((r) => r.status === s).length;
  return {
    backend: be.name,
    deviceName: be.deviceName,
    runtime: runtimeDescription(),
    capabilities: caps,
    dir,
    results,
    passed: count('passed'),
    failed: count('failed'),
    notExpressible: count('not-expressible'),
  };
}
