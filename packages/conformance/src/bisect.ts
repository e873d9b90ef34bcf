/**
 * Mismatch bisector: `recording(backend)` logs every HAL call of a run (uploads with their data, ops,
 * views, in-place optimizer steps, frees); `bisect(log, factoryA, factoryB)` replays the log on two
 * fresh backends call by call, compares every result under the tolerance table, and reports the first
 * call whose output diverges, with a standalone reproduction script.
 */
import { capabilitiesOf, type ComputeBackend, type DeviceBuffer, type NDArray, OP_METHODS } from '@polyhal/hal';
import { compare } from './compare.js';
import type { Ref } from './oracle.js';
import type { BackendFactory } from './runner.js';
import { toleranceFor } from './tolerances.js';

type Arg =
  | { kind: 'array'; call: number; output: number }
  | { kind: 'buffer'; call: number; output: number }
  | { kind: 'value'; value: unknown };

/** One HAL call of a recording. */
export interface RecordedCall {
  /** Its position in the recording (0, 1, ...). */
  index: number;
  /** The backend method called (`matmul`, `fromArray`, ...). */
  method: string;
  /** Its arguments: arrays and buffers by the call and output that produced them, other values as given. */
  args: Arg[];
  /** Host data of uploads (fromArray/write), so a replay needs nothing else. */
  data?: number[];
}

/** What `recording(backend)` returns: the backend to run the program on, and the calls it logs. */
export interface Recording {
  /** A proxy of the backend that logs each recorded call, then forwards it. */
  backend: ComputeBackend;
  /** The calls so far, in order (the log grows as the program runs). */
  calls: RecordedCall[];
}

// Every op of the table (OP_METHODS) but concat, stack and nonFiniteCheckAndUnscale, whose list argument a
// recording does not encode yet, plus the uploads, assign and frees a replay needs.
const UNRECORDED = new Set(['concat', 'stack', 'nonFiniteCheckAndUnscale']);
const RECORDED = new Set<string>([
  'fromArray',
  'full',
  'write',
  ...OP_METHODS.filter((m) => !UNRECORDED.has(m)),
  'assign',
  'free',
  'deallocate',
]);

const isArray = (v: unknown): v is NDArray => typeof v === 'object' && v !== null && 'buffer' in v && 'strides' in v;
const isBuffer = (v: unknown): v is DeviceBuffer =>
  typeof v === 'object' && v !== null && 'owner' in v && 'byteLength' in v;

/** Wraps a backend so that every HAL call made through it is logged (the run itself is unchanged). */
export function recording(be: ComputeBackend): Recording {
  const calls: RecordedCall[] = [];
  const producer = new Map<object, [number, number]>(); // NDArray object → [call index, output index]
  const bufferProducer = new Map<number, [number, number]>(); // buffer id → the first array made on it
  const encode = (v: unknown): Arg => {
    if (isArray(v) && producer.has(v)) return { kind: 'array', call: producer.get(v)![0], output: producer.get(v)![1] };
    if (isBuffer(v) && bufferProducer.has(v.id))
      return { kind: 'buffer', call: bufferProducer.get(v.id)![0], output: bufferProducer.get(v.id)![1] };
    if (isArray(v) || isBuffer(v))
      throw new Error('recording: an array that was not made through the recording backend');
    return { kind: 'value', value: v instanceof Float32Array || v instanceof Int32Array ? Array.from(v) : v };
  };
  const remember = (index: number, out: unknown): void => {
    const arrays = isArray(out)
      ? [out]
      : typeof out === 'object' && out !== null
        ? Object.values(out).filter(isArray)
        : [];
    arrays.forEach((a, k) => {
      producer.set(a, [index, k]);
      if (!bufferProducer.has(a.buffer.id)) bufferProducer.set(a.buffer.id, [index, k]);
    });
  };
  const proxy = new Proxy(be, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function' || typeof prop !== 'string' || !RECORDED.has(prop))
        return typeof v === 'function' ? v.bind(receiver) : v;
      return (...args: unknown[]) => {
        // Only the outermost call is recorded (composites call other ops internally).
        const depth = ++nesting;
        try {
          const out = (v as (...a: unknown[]) => unknown).apply(receiver, args);
          if (depth === 1) {
            const index = calls.length;
            const rec: RecordedCall = { index, method: prop, args: [] };
            if (prop === 'fromArray' || prop === 'write')
              rec.data = Array.from(args[prop === 'write' ? 1 : 0] as ArrayLike<number>);
            rec.args = args.map((a, i) =>
              rec.data && i === (prop === 'write' ? 1 : 0) ? { kind: 'value', value: null } : encode(a),
            );
            calls.push(rec);
            remember(index, out);
          }
          return out;
        } finally {
          nesting--;
        }
      };
    },
  });
  let nesting = 0;
  return { backend: proxy, calls };
}

/** The first call whose result on backend B differs from A's beyond its op's tolerance. */
export interface Divergence {
  /** The call, as recorded. */
  call: RecordedCall;
  /** Its method (call.method). */
  method: string;
  /** The largest absolute difference between A's and B's results. */
  maxAbsError: number;
  /** The call, its shapes and errors in words. */
  message: string;
  /** A standalone script (ESM) that reproduces the call on any backend from the recorded inputs. */
  reproduction: string;
}

/** The arrays a call produced or changed, to compare (in-place steps: their buffers). */
function outputsOf(call: RecordedCall, out: unknown, args: unknown[]): NDArray[] {
  if (isArray(out)) return [out];
  if (out && typeof out === 'object') return Object.values(out).filter(isArray);
  if (call.method === 'adamStep' || call.method === 'sgdStep' || call.method === 'assign') {
    return args.filter(isBuffer).map((b) => ({ buffer: b, dtype: b.dtype, shape: [b.size], strides: [1], offset: 0 }));
  }
  return [];
}

/**
 * Replays a recording on fresh backends A and B, comparing each result. Before each call, the buffers
 * it reads on B are overwritten with A's contents, so every call is judged on identical inputs (small,
 * tolerated differences upstream do not snowball). Returns the first call whose output on B differs
 * from A's beyond the tolerance of its op, or null when the whole run agrees.
 */
export async function bisect(
  log: Recording | RecordedCall[],
  factoryA: BackendFactory,
  factoryB: BackendFactory,
): Promise<Divergence | null> {
  const calls = Array.isArray(log) ? log : log.calls;
  const [a, b] = [await factoryA(), await factoryB()];
  const results: [unknown, unknown][] = [];
  try {
    for (const call of calls) {
      const decode = (_be: ComputeBackend, side: 0 | 1, arg: Arg, i: number): unknown => {
        if (call.data && i === (call.method === 'write' ? 1 : 0))
          return call.method === 'write' ? Float32Array.from(call.data) : call.data;
        if (arg.kind === 'value') return arg.value;
        const produced = results[arg.call]![side];
        const arr = isArray(produced) ? produced : Object.values(produced as object).filter(isArray)[arg.output]!;
        return arg.kind === 'buffer' ? arr.buffer : arr;
      };
      const run = (be: ComputeBackend, side: 0 | 1): [unknown, unknown[]] => {
        const args = call.args.map((arg, i) => decode(be, side, arg, i));
        return [(be as unknown as Record<string, (...x: unknown[]) => unknown>)[call.method]!(...args), args];
      };
      // Give B exactly A's inputs (whole buffers, so strided views stay views).
      for (const [i, arg] of call.args.entries()) {
        if (arg.kind === 'value' || (call.data && i === (call.method === 'write' ? 1 : 0))) continue;
        if (call.method === 'free' || call.method === 'deallocate') continue;
        const [ia, ib] = [decode(a, 0, arg, i), decode(b, 1, arg, i)];
        const [ba, bb] = [
          isArray(ia) ? ia.buffer : (ia as DeviceBuffer),
          isArray(ib) ? ib.buffer : (ib as DeviceBuffer),
        ];
        b.write(bb, await a.read(ba));
      }
      const [outA, argsA] = run(a, 0);
      const [outB, argsB] = run(b, 1);
      results.push([outA, outB]);
      if (call.method === 'free' || call.method === 'deallocate') continue;
      const oa = outputsOf(call, outA, argsA);
      const ob = outputsOf(call, outB, argsB);
      for (let k = 0; k < oa.length; k++) {
        const [da, db] = [await a.read(oa[k]!), await b.read(ob[k]!)];
        const want: Ref = { shape: [...oa[k]!.shape], data: Float64Array.from(da), dtype: oa[k]!.dtype };
        let tol: { abs: number; rel: number };
        const op =
          ['unary', 'binary', 'reduce'].includes(call.method) && call.args[0]?.kind === 'value'
            ? String(call.args[0].value)
            : call.method;
        try {
          tol = toleranceFor(op, oa[k]!.dtype, capabilitiesOf(b).arithmetic);
        } catch {
          tol = { abs: 1e-6, rel: 1e-5 }; // views, uploads and frees: exact in practice
        }
        const cmp = compare(db, want, { abs: tol.abs * 2, rel: tol.rel * 2 + 2.4e-7 });
        if (!cmp.pass) {
          const f = cmp.firstFailure!;
          return {
            call,
            method: call.method,
            maxAbsError: cmp.maxAbsError,
            message:
              `call ${call.index} (${call.method}) diverges: output ${k}[${f.index}] is ` +
              `${f.want} on ${a.name} and ${f.got} on ${b.name}`,
            reproduction: await reproduction(call, argsA, a),
          };
        }
      }
    }
    return null;
  } finally {
    a.dispose();
    b.dispose();
  }
}

async function reproduction(call: RecordedCall, args: unknown[], be: ComputeBackend): Promise<string> {
  const lines = [
    "// Reproduces one diverging HAL call; run with a backend `be` (e.g. await createBackend({ backend: 'wasm' })).",
  ];
  const names: string[] = [];
  for (const [i, arg] of args.entries()) {
    if (isArray(arg)) {
      const data = Array.from(await be.read(arg));
      lines.push(`const x${i} = be.fromArray(${JSON.stringify(data)}, ${JSON.stringify(arg.shape)}, '${arg.dtype}');`);
      names.push(`x${i}`);
    } else if (isBuffer(arg)) {
      const data = Array.from(await be.read(arg));
      lines.push(`const b${i} = be.fromArray(${JSON.stringify(data)}, [${arg.size}], '${arg.dtype}').buffer;`);
      names.push(`b${i}`);
    } else names.push(JSON.stringify(arg));
  }
  lines.push(`const out = be.${call.method}(${names.join(', ')});`);
  lines.push('console.log(out && out.buffer ? await be.read(out) : out);');
  return lines.join('\n');
}
