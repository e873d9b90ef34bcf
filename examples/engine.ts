/**
 * The one thing the examples need from an ONNX runtime: create a session from a model's bytes, run it on named
 * tensors, release it. Two adapters: PolyHAL's InferenceSession (@polyhal/onnx) and onnxruntime (node or web:
 * the same API).
 */
import { InferenceSession, type SessionOptions } from '@polyhal/onnx';
import type * as Ort from 'onnxruntime-node';

/** A tensor as the examples pass it: element type, shape and row-major data. */
export interface Tensor {
  readonly type: 'float32' | 'int64';
  readonly dims: readonly number[];
  readonly data: Float32Array | BigInt64Array;
}

/** A loaded model. */
export interface Session {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  /** Runs the model on `feeds` (one tensor per input name); resolves to one tensor per output name. */
  run(feeds: Readonly<Record<string, Tensor>>): Promise<Record<string, Tensor>>;
  release(): Promise<void>;
}

/** Creates a session from an ONNX model's bytes. */
export type CreateSession = (model: Uint8Array) => Promise<Session>;

/** A float32 tensor. */
export const float32 = (dims: readonly number[], data: Float32Array): Tensor => ({ type: 'float32', dims, data });

/** Reads an output as float32 data, with a clear error when the model gave something else. */
export function floatOutput(outputs: Record<string, Tensor>, name: string): { dims: number[]; data: Float32Array } {
  const t = outputs[name];
  if (!t) throw new Error(`the model gave no output '${name}' (outputs: ${Object.keys(outputs).join(', ')})`);
  if (!(t.data instanceof Float32Array)) throw new Error(`output '${name}' is ${t.type}, not float32`);
  return { dims: [...t.dims], data: t.data };
}

type OrtModule = Pick<typeof Ort, 'InferenceSession' | 'Tensor'>;

/**
 * Sessions on onnxruntime: `fromOnnxRuntime(await import('onnxruntime-node'))` (its CPU provider by default;
 * `{ executionProviders: ['webgpu'] }` for its WebGPU one), or onnxruntime-web's module (`['wasm']`).
 */
export function fromOnnxRuntime(ort: OrtModule, options: Ort.InferenceSession.SessionOptions = {}): CreateSession {
  return async (model) => {
    const session = await ort.InferenceSession.create(model, { logSeverityLevel: 3, ...options });
    return {
      inputNames: session.inputNames,
      outputNames: session.outputNames,
      async run(feeds) {
        const tensors: Record<string, Ort.Tensor> = {};
        for (const [name, t] of Object.entries(feeds)) tensors[name] = new ort.Tensor(t.type, t.data, t.dims);
        const out = await session.run(tensors);
        const res: Record<string, Tensor> = {};
        for (const [name, t] of Object.entries(out)) {
          if (t.type !== 'float32' && t.type !== 'int64') throw new Error(`output '${name}': unexpected ${t.type}`);
          res[name] = { type: t.type, dims: [...t.dims], data: t.data as Float32Array | BigInt64Array };
        }
        return res;
      },
      release: () => session.release(),
    };
  };
}

/**
 * Sessions on PolyHAL: `fromPolyhal('wasm')` runs the models with @polyhal/onnx's InferenceSession on that
 * backend ('cpu', 'wasm', 'webgpu', a ComputeBackend instance, or undefined for PolyHAL's usual selection).
 */
export function fromPolyhal(
  backend?: SessionOptions['backend'],
  options: Omit<SessionOptions, 'backend'> = {},
): CreateSession {
  return async (model) => {
    const session = await InferenceSession.create(model, { ...options, backend });
    return {
      inputNames: session.inputNames,
      outputNames: session.outputNames,
      async run(feeds) {
        const out = await session.run(feeds);
        const res: Record<string, Tensor> = {};
        for (const [name, t] of Object.entries(out)) {
          if (t.dtype === 'float32' && t.data instanceof Float32Array)
            res[name] = { type: 'float32', dims: t.dims, data: t.data };
          else if (t.dtype === 'int64' && t.data instanceof BigInt64Array)
            res[name] = { type: 'int64', dims: t.dims, data: t.data };
          else throw new Error(`output '${name}': unexpected ${t.dtype}`);
        }
        return res;
      },
      release: () => session.release(),
    };
  };
}
