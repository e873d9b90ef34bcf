// The engines of the ONNX benchmark, each behind one small interface:
//   load() → { create(bytes) → { run(feeds) → outputs, release() }, detail }
// feeds and outputs are plain { type, dims, data } records by input/output name.
// Peers: onnxruntime-web's wasm backend in Node (the same thread count as PolyHAL wasm), onnxruntime-node's
// native CPU provider (its default threads: the ceiling for PolyHAL cpu) and its WebGPU execution provider
// (native Dawn). PolyHAL: @polyhal/onnx's InferenceSession on the cpu, wasm and webgpu backends.
import os from 'node:os';

/** PolyHAL wasm's default thread count ('auto': the cores, at most 8); onnxruntime-web gets the same. */
export const WASM_THREADS = Math.min(8, os.availableParallelism?.() ?? os.cpus().length);

/** Wraps an onnxruntime module (web or node) and an execution provider as an engine. */
function ortEngine(ort, providers, options = {}) {
  return {
    async create(bytes) {
      const session = await ort.InferenceSession.create(bytes, {
        executionProviders: providers,
        graphOptimizationLevel: 'all',
        logSeverityLevel: 3,
        ...options,
      });
      return {
        async run(feeds) {
          const tensors = {};
          for (const [name, f] of Object.entries(feeds)) tensors[name] = new ort.Tensor(f.type, f.data, f.dims);
          const out = await session.run(tensors);
          const res = {};
          for (const [name, t] of Object.entries(out)) res[name] = { type: t.type, dims: [...t.dims], data: t.data };
          return res;
        },
        release: () => session.release(),
      };
    },
  };
}

/**
 * A PolyHAL engine: InferenceSession from @polyhal/onnx on one backend instance, each created with its defaults
 * (imported by literal specifiers, so a bundler can take the bench to a machine without node_modules).
 */
async function polyhalEngine(backend, options = {}) {
  const onnx = await import('@polyhal/onnx');
  const { InferenceSession } = onnx;
  if (typeof InferenceSession?.create !== 'function')
    throw new Error('@polyhal/onnx exports no InferenceSession (yet): build packages/onnx with it');
  return {
    detail:
      `@polyhal/onnx InferenceSession, backend ${backend.name} (${backend.deviceName})` +
      (options.enableGraphCapture === false ? ', graph capture off' : ''),
    async create(bytes) {
      const session = await InferenceSession.create(bytes, { backend, ...options });
      return {
        async run(feeds) {
          const out = await session.run(feeds);
          const res = {};
          for (const [name, t] of Object.entries(out))
            res[name] = { type: t.dtype ?? t.type, dims: [...t.dims], data: t.data };
          return res;
        },
        release: () => session.release(),
      };
    },
  };
}

/** name → { peerOf (the PolyHAL engine it is compared with), load() }. */
export const ENGINES = {
  'polyhal-cpu': { load: async () => polyhalEngine(new (await import('@polyhal/backend-cpu')).CpuBackend()) },
  'polyhal-wasm': {
    load: async () => polyhalEngine(await (await import('@polyhal/backend-wasm')).createWasmBackend()),
  },
  'polyhal-webgpu': {
    load: async () => polyhalEngine(await (await import('@polyhal/backend-webgpu')).createWebGpuBackend()),
  },
  // every node lowered in JavaScript on every run (the session default replays a captured run: replay.ts)
  'polyhal-webgpu-eager': {
    load: async () =>
      polyhalEngine(await (await import('@polyhal/backend-webgpu')).createWebGpuBackend(), {
        enableGraphCapture: false,
      }),
  },
  'ort-web-wasm': {
    peerOf: 'polyhal-wasm',
    async load() {
      const ort = await import('onnxruntime-web');
      ort.env.wasm.numThreads = WASM_THREADS;
      ort.env.logLevel = 'error';
      return {
        ...ortEngine(ort, ['wasm']),
        detail: `onnxruntime-web ${ort.env.versions.web} wasm, ${WASM_THREADS} threads`,
      };
    },
  },
  'ort-node-cpu': {
    peerOf: 'polyhal-cpu',
    async load() {
      const ort = await import('onnxruntime-node');
      return { ...ortEngine(ort, ['cpu']), detail: `onnxruntime-node ${ort.env.versions.node} cpu (native)` };
    },
  },
  'ort-node-webgpu': {
    peerOf: 'polyhal-webgpu',
    async load() {
      const ort = await import('onnxruntime-node');
      return { ...ortEngine(ort, ['webgpu']), detail: `onnxruntime-node ${ort.env.versions.node} webgpu (Dawn)` };
    },
  },
};
