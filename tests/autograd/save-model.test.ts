// saveModel/loadModel: a model's architecture and weights in one safetensors file, rebuilt without the code that
// built it. On every backend the loaded model gives the saved one's outputs bit for bit (the same kernels on the
// same weights), and the file's tensors equal the model's stateDict read independently; the file's metadata is
// checked by parsing the bytes here (safetensors' layout), not through the loader.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { type ComputeBackend, InvalidArgumentError, ShapeMismatchError } from '@polyhal/hal';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_BACKENDS } from '../support/backends.js';

const host = async (t: ag.Tensor): Promise<number[]> => Array.from(await t.data());
const input = (be: ComputeBackend, shape: number[], seed = 1): ag.Tensor => {
  const n = shape.reduce((p, d) => p * d, 1);
  return ag.Tensor.fromArray(
    be,
    Array.from({ length: n }, (_, i) => Math.sin(seed * 7.3 + i * 1.7)),
    shape,
  );
};
/** The safetensors header of `bytes`, parsed here (8-byte little-endian length, then JSON). */
const header = (bytes: Uint8Array): Record<string, unknown> => {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  return JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
};

/** Saves, loads back on the same backend, and checks outputs, weights and modes. */
async function roundTrip(be: ComputeBackend, model: ag.Module, x: ag.Tensor): Promise<ag.Module> {
  const bytes = await ag.saveModel(model);
  const loaded = await ag.loadModel(bytes, { backend: be });
  expect(loaded.constructor).toBe(model.constructor);
  expect(loaded.training).toBe(model.training);
  const names = (m: ag.Module) => m.namedModules().map(([n, l]) => `${n}:${ag.registeredName(l)}`);
  expect(names(loaded)).toEqual(names(model));
  const want = model.stateDict();
  const got = loaded.stateDict();
  expect(Object.keys(got)).toEqual(Object.keys(want));
  for (const k of Object.keys(want)) expect(await host(got[k]!)).toEqual(await host(want[k]!));
  const [y0, y1] = ag.noGrad(() => [model.forward(x), loaded.forward(x)]);
  expect(y1.shape).toEqual(y0.shape);
  expect(await host(y1)).toEqual(await host(y0)); // bit for bit
  y0.dispose();
  y1.dispose();
  return loaded;
}

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`saveModel/loadModel on ${name}`, () => {
    let be: ComputeBackend;
    beforeAll(async () => {
      be = await factory();
    });
    afterAll(() => be.dispose());

    test('an MLP: Sequential of Flatten, Linear (with and without bias), GELU tanh, Dropout (eval), ReLU', async () => {
      const model = new ag.Sequential(
        new ag.Flatten(),
        new ag.Linear(12, 16, { backend: be, rng: 3 }),
        new ag.GELU({ approximate: 'tanh' }),
        new ag.Dropout(0.25, 7),
        new ag.Linear(16, 5, { backend: be, rng: 4, bias: false }),
        new ag.ReLU(),
      ).eval();
      const x = input(be, [3, 3, 4]);
      const loaded = await roundTrip(be, model, x);
      expect(((loaded as ag.Sequential).layers[2] as ag.GELU).approximate).toBe('tanh');
      expect(((loaded as ag.Sequential).layers[3] as ag.Dropout).p).toBe(0.25);
      expect(((loaded as ag.Sequential).layers[4] as ag.Linear).bias).toBeNull();
      // The file: the stateDict's tensors under their names, and the architecture in __metadata__.
      const bytes = await ag.saveModel(model);
      const h = header(bytes);
      expect(Object.keys(h).sort()).toEqual(['1.bias', '1.weight', '4.weight', '__metadata__']);
      expect(h['1.weight']).toMatchObject({ dtype: 'F32', shape: [16, 12] });
      const meta = JSON.parse((h['__metadata__'] as Record<string, string>)['polyhal.model']!);
      expect(meta.formatVersion).toBe(1);
      expect(meta.training).toBe(false);
      expect(meta.model.className).toBe('Sequential');
      expect(meta.model.children.map(([n, s]: [string, { className: string }]) => `${n}:${s.className}`)).toEqual([
        '0:Flatten',
        '1:Linear',
        '2:GELU',
        '3:Dropout',
        '4:Linear',
        '5:ReLU',
      ]);
      expect(meta.model.children[1][1].config).toEqual({ inFeatures: 12, outFeatures: 16, bias: true });
      for (const m of [model, loaded]) m.dispose();
      x.dispose();
    });

    test('a CNN: Conv2d (stride, padding, groups), BatchNorm (running stats), pools, ConvTranspose2d', async () => {
      const model = new ag.Sequential(
        new ag.Conv2d(2, 4, 3, { backend: be, rng: 1, padding: 1, stride: 1 }),
        new ag.BatchNorm(4, { backend: be, momentum: 0.2 }),
        new ag.SiLU(),
        new ag.Conv2d(4, 4, [3, 1], { backend: be, rng: 2, groups: 2, padding: [1, 0] }),
        new ag.MaxPool2d(2),
        new ag.ConvTranspose2d(4, 3, 2, { backend: be, rng: 5, stride: 2, outputPadding: 1 }),
        new ag.AvgPool2d(2, { stride: 1, padding: 1, countIncludePad: false }),
        new ag.GroupNorm(1, 3, { backend: be }),
      );
      const x = input(be, [2, 2, 6, 6], 2);
      // One training step moves BatchNorm's running statistics off their start (buffers must be saved).
      ag.scope(() => void model.forward(x));
      model.eval();
      const loaded = await roundTrip(be, model, x);
      const rm = loaded.stateDict()['1.runningMean']!;
      expect((await host(rm)).some((v) => v !== 0)).toBe(true);
      for (const m of [model, loaded]) m.dispose();
      x.dispose();
    });

    test('1-D layers and norms: Conv1d, MaxPool1d, AvgPool1d, LayerNorm, RMSNorm, Tanh, Sigmoid', async () => {
      const model = new ag.Sequential(
        new ag.Conv1d(3, 4, 3, { backend: be, rng: 9, dilation: 2, padding: 2 }),
        new ag.MaxPool1d(2, { stride: 1 }),
        new ag.AvgPool1d(2),
        new ag.LayerNorm(4, { backend: be, eps: 1e-3, bias: false }),
        new ag.Tanh(),
        new ag.RMSNorm([4], { backend: be }),
        new ag.Sigmoid(),
      );
      // [2, 3, 9] → conv (dilation 2, padding 2) [2, 4, 9] → max [2, 4, 8] → avg [2, 4, 4]: LayerNorm over 4.
      const x = input(be, [2, 3, 9], 3);
      const loaded = await roundTrip(be, model, x);
      for (const m of [model, loaded]) m.dispose();
      x.dispose();
    });

    test('recurrent and attention: LSTM (2 layers, bidirectional), GRU, RNN relu, MultiHeadAttention', async () => {
      const x = input(be, [2, 3, 4], 4);
      const lstm = new ag.LSTM(4, 3, { backend: be, numLayers: 2, bidirectional: true, batchFirst: true, rng: 1 });
      const gru = new ag.GRU(4, 5, { backend: be, batchFirst: true, bias: false, rng: 2 });
      const rnn = new ag.RNN(4, 2, { backend: be, nonlinearity: 'relu', batchFirst: true, rng: 3 });
      const mha = new ag.MultiHeadAttention(4, 2, { backend: be, rng: 4 });
      for (const m of [lstm, gru, rnn, mha]) (await roundTrip(be, m, x)).dispose();
      const loadedRnn = (await ag.loadModel(await ag.saveModel(rnn), { backend: be })) as ag.RNN;
      expect(loadedRnn.mode).toBe('RNN_RELU');
      loadedRnn.dispose();
      for (const m of [lstm, gru, rnn, mha]) m.dispose();
      x.dispose();
    });

    test('MultiHeadAttention saved in the earlier layout (q, k, v, out): state dict and file load packed', async () => {
      const [E, H] = [4, 2];
      const old = [0, 1, 2, 3].map((i) => new ag.Linear(E, E, { backend: be, rng: 20 + i }));
      const names = ['q', 'k', 'v', 'out'];
      const oldState = Object.fromEntries(
        names.flatMap((n, i) => [
          [`${n}.weight`, old[i]!.weight],
          [`${n}.bias`, old[i]!.bias!],
        ]),
      );
      const x = input(be, [2, 3, E], 5);
      // The earlier layout's forward, written here: q, k and v projected apart and split into heads, out.
      const split = (t: ag.Tensor): ag.Tensor => t.reshape([2, 3, H, E / H]).permute([0, 2, 1, 3]);
      const earlier = ag.noGrad(() =>
        old[3]!.forward(
          ag
            .scaledDotProductAttention(split(old[0]!.forward(x)), split(old[1]!.forward(x)), split(old[2]!.forward(x)))
            .permute([0, 2, 1, 3])
            .reshape([2, 3, E]),
        ),
      );
      const want = await host(earlier);
      earlier.dispose();
      const rows = async (part: 'weight' | 'bias'): Promise<number[]> =>
        (await Promise.all(old.slice(0, 3).map((l) => host(l[part]!)))).flat();
      const expectPacked = async (m: ag.MultiHeadAttention): Promise<void> => {
        expect(await host(m.inProj.weight)).toEqual(await rows('weight'));
        expect(await host(m.inProj.bias!)).toEqual(await rows('bias'));
        expect(await host(m.out.weight)).toEqual(await host(old[3]!.weight));
        const got = await ag.scope(() => host(ag.noGrad(() => m.forward(x))));
        for (let i = 0; i < want.length; i++) expect(Math.abs(got[i]! - want[i]!)).toBeLessThan(1e-5);
      };
      const live = be.liveBufferCount();
      // A state dict: loadStateDict packs q, k and v into inProj.
      const mha = new ag.MultiHeadAttention(E, H, { backend: be, rng: 0 });
      expect(await mha.loadStateDict(oldState)).toEqual({ missing: [], unexpected: [] });
      await expectPacked(mha);
      // A model file of the earlier layout, nested in a Sequential (names 0.q.weight, ...).
      const linear = { className: 'Linear', config: { inFeatures: E, outFeatures: E, bias: true } };
      const attention = {
        className: 'MultiHeadAttention',
        config: { embedDim: E, numHeads: H, bias: true },
        children: names.map((n) => [n, linear]),
      };
      const spec = {
        formatVersion: 1,
        training: true,
        model: { className: 'Sequential', config: {}, children: [['0', attention]] },
      };
      const bytes = await ag.saveSafetensors(
        Object.fromEntries(Object.entries(oldState).map(([k, t]) => [`0.${k}`, t])),
        { 'polyhal.model': JSON.stringify(spec) },
      );
      const loaded = await ag.loadModel<ag.Sequential>(bytes, { backend: be });
      expect(Object.keys(loaded.stateDict())).toEqual([
        '0.inProj.weight',
        '0.inProj.bias',
        '0.out.weight',
        '0.out.bias',
      ]);
      await expectPacked(loaded.layers[0] as ag.MultiHeadAttention);
      // saved again: the packed layout round-trips (the scope frees the forwards' intermediates)
      (await ag.scope(() => roundTrip(be, loaded, x))).dispose();
      // Parts that do not fit: typed errors, and the packed tensors made on the way are freed.
      const biases = { 'q.weight': old[0]!.bias!, 'k.weight': old[1]!.bias!, 'v.weight': old[2]!.bias! };
      await expect(mha.loadStateDict({ ...oldState, ...biases })).rejects.toThrow(
        /^loadStateDict: inProj\.weight is \[12\] in the state, \[12,4\] in the module$/,
      );
      await expect(mha.loadStateDict({ ...oldState, 'k.weight': old[1]!.bias! })).rejects.toThrow(
        /^loadStateDict: missing inProj\.weight; unexpected q\.weight, k\.weight, v\.weight$/,
      );
      const partial = Object.fromEntries(Object.entries(oldState).filter(([k]) => k !== 'v.weight'));
      await expect(mha.loadStateDict(partial)).rejects.toThrow(
        /^loadStateDict: missing inProj\.weight; unexpected q\.weight, k\.weight$/,
      );
      await expect(mha.loadStateDict({ ...oldState, ...biases })).rejects.toThrow(ShapeMismatchError);
      const misfit = await ag.saveSafetensors(
        Object.fromEntries(Object.entries({ ...oldState, ...biases }).map(([k, t]) => [`0.${k}`, t])),
        { 'polyhal.model': JSON.stringify(spec) },
      );
      await expect(ag.loadModel(misfit, { backend: be })).rejects.toThrow(
        /^loadModel: the weights do not fit the architecture: 0\.inProj\.weight is float32 \[12\] in the file/,
      );
      for (const m of [mha, loaded]) m.dispose();
      expect(be.liveBufferCount()).toBe(live);
      for (const m of [x, ...old]) m.dispose();
    });

    test('an Embedding, and a lazy layer saved after its first forward (as the eager class)', async () => {
      const idx = ag.Tensor.fromArray(be, [0, 3, 2, 1, 3, 0], [2, 3], { dtype: 'int32' });
      const emb = new ag.Sequential(
        new ag.Embedding(4, 3, { backend: be, rng: 1 }),
        new ag.LazyLinear(2, { backend: be }),
      );
      expect(() => emb.stateDict()).toThrow(ag.UninitializedParameterError);
      await expect(ag.saveModel(emb)).rejects.toThrow(ag.UninitializedParameterError);
      ag.scope(() => void emb.forward(idx));
      const loaded = await roundTrip(be, emb, idx);
      expect((loaded as ag.Sequential).layers[1]).toBeInstanceOf(ag.Linear);
      expect(((loaded as ag.Sequential).layers[1] as ag.Linear).isLazy).toBe(false);
      for (const m of [emb, loaded]) m.dispose();
      idx.dispose();
    });
  });
}

describe('saveModel/loadModel: targets, user layers and errors (cpu)', () => {
  let be: ComputeBackend;
  let dir: string;
  beforeAll(async () => {
    be = await REPO_BACKENDS['cpu']!();
    dir = mkdtempSync(join(tmpdir(), 'polyhal-save-'));
  });
  afterAll(() => {
    be.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  const mlp = () =>
    new ag.Sequential(
      new ag.Linear(3, 4, { backend: be, rng: 1 }),
      new ag.Tanh(),
      new ag.Linear(4, 2, { backend: be, rng: 2 }),
    );

  test('a path and a file:// URL in Node; the file holds the returned bytes; training mode is restored', async () => {
    const model = mlp();
    const path = join(dir, 'mlp.safetensors');
    const bytes = await ag.saveModel(model, path);
    expect(new Uint8Array(readFileSync(path))).toEqual(bytes);
    const x = input(be, [2, 3]);
    for (const src of [path, pathToFileURL(path).href, bytes.slice().buffer]) {
      const loaded = await ag.loadModel(src, { backend: be });
      expect(loaded.training).toBe(true);
      expect(await host(loaded.forward(x))).toEqual(await host(model.forward(x)));
      loaded.dispose();
    }
    await ag.saveModel(model.eval(), pathToFileURL(join(dir, 'eval.safetensors')).href);
    const evalLoaded = await ag.loadModel(join(dir, 'eval.safetensors'), { backend: be });
    expect(evalLoaded.training).toBe(false);
    expect(evalLoaded.namedModules().every(([, m]) => !m.training)).toBe(true);
    evalLoaded.dispose();
    model.dispose();
    x.dispose();
  });

  test('an http:// URL (fetch, Node) and another backend: a model saved on cpu loads onto each backend', async () => {
    const model = mlp();
    const bytes = await ag.saveModel(model);
    const server = createServer((req, res) => {
      const ok = req.url === '/mlp.safetensors';
      res.writeHead(ok ? 200 : 404);
      res.end(ok ? bytes : 'not found');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const x = input(be, [2, 3]);
      const want = await host(model.forward(x));
      const fetched = await ag.loadModel(`${base}/mlp.safetensors`, { backend: be });
      expect(await host(fetched.forward(x))).toEqual(want);
      fetched.dispose();
      await expect(ag.loadModel(`${base}/none`, { backend: be })).rejects.toThrow(/GET .*\/none answered 404/);
      for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
        const other = await factory();
        const loaded = await ag.loadModel(bytes, { backend: other });
        expect(loaded.parameters().every((t) => t.backend === other)).toBe(true);
        const xo = ag.Tensor.fromArray(other, await host(x), [2, 3]);
        const got = await host(loaded.forward(xo));
        for (let i = 0; i < want.length; i++) expect(Math.abs(got[i]! - want[i]!)).toBeLessThan(1e-6);
        expect(name === 'cpu' ? got : want).toEqual(want);
        loaded.dispose();
        xo.dispose();
        if (other !== be) other.dispose();
      }
      x.dispose();
    } finally {
      server.close();
      model.dispose();
    }
  });

  test('a user layer saves once registered, nested in a container, and is rebuilt by its fromConfig', async () => {
    class Scale extends ag.Module {
      constructor(readonly factor: number) {
        super();
      }
      override getConfig() {
        return { factor: this.factor };
      }
      forward(x: ag.Tensor): ag.Tensor {
        return x.mul(this.factor);
      }
    }
    /** A container holding its children by name (not a Sequential). */
    class Residual extends ag.Module {
      constructor(readonly inner: ag.Module) {
        super();
        this.children.set('inner', inner);
      }
      forward(x: ag.Tensor): ag.Tensor {
        return x.add(this.inner.forward(x));
      }
    }
    const model = new ag.Sequential(new ag.Linear(3, 3, { backend: be, rng: 5 }), new Residual(new Scale(2.5)));
    // Not registered: a typed error at save time naming the class and where it sits.
    await expect(ag.saveModel(model)).rejects.toThrow(ag.UnregisteredLayerError);
    await expect(ag.saveModel(model)).rejects.toThrow(/layer "1" is a Residual, which is not registered/);
    ag.registerLayer('Residual', Residual, (_c, { children }) => new Residual(children.get('inner')!));
    await expect(ag.saveModel(model)).rejects.toThrow(/layer "1.inner" is a Scale/);
    ag.registerLayer('test.Scale', Scale, (c) => new Scale(c['factor'] as number));
    const x = input(be, [2, 3]);
    const loaded = (await roundTrip(be, model, x)) as ag.Sequential;
    expect(((loaded.layers[1] as Residual).inner as Scale).factor).toBe(2.5);
    // The loaded model's output against float64 arithmetic here: h = x·Wᵀ + b, y = h + 2.5·h.
    const [w, b, xs, ys] = await Promise.all(
      [loaded.stateDict()['0.weight']!, loaded.stateDict()['0.bias']!, x, loaded.forward(x)].map(host),
    );
    for (let n = 0; n < 2; n++)
      for (let o = 0; o < 3; o++) {
        let h = b![o]!;
        for (let i = 0; i < 3; i++) h += xs![n * 3 + i]! * w![o * 3 + i]!;
        expect(Math.abs(ys![n * 3 + o]! - 3.5 * h)).toBeLessThan(1e-5);
      }
    loaded.dispose();
    model.dispose();
    x.dispose();
  });

  test('typed errors: truncated or corrupt bytes, weights only, unknown version, missing weights', async () => {
    const model = mlp();
    const bytes = await ag.saveModel(model);
    const load = (b: Uint8Array) => ag.loadModel(b, { backend: be });
    await expect(load(bytes.subarray(0, bytes.length - 10))).rejects.toThrow(ag.ModelFormatError);
    await expect(load(bytes.subarray(0, bytes.length - 10))).rejects.toThrow(/truncated or corrupt/);
    await expect(load(bytes.subarray(0, 5))).rejects.toThrow(ag.ModelFormatError);
    const junk = bytes.slice();
    junk[12] = 0xff; // inside the header's JSON
    await expect(load(junk)).rejects.toThrow(ag.ModelFormatError);
    // A weights-only file (saveSafetensors of a stateDict).
    await expect(load(await ag.saveSafetensors(model.stateDict()))).rejects.toThrow(/no "polyhal.model" architecture/);
    // Rewrites the architecture JSON and re-saves the same tensors.
    const withSpec = async (edit: (spec: Record<string, unknown>) => void, tensors = model.stateDict()) => {
      const spec = JSON.parse((header(bytes)['__metadata__'] as Record<string, string>)['polyhal.model']!);
      edit(spec);
      return ag.saveSafetensors(tensors, { 'polyhal.model': JSON.stringify(spec) });
    };
    await expect(load(await withSpec((s) => (s['formatVersion'] = 2)))).rejects.toThrow(
      /format version 2 is not read by this version \(it reads 1\); update/,
    );
    const noBias = { ...model.stateDict() };
    delete noBias['2.bias'];
    const extra = { ...model.stateDict(), 'head.weight': ag.zeros(be, [2]) };
    await expect(load(await withSpec(() => {}, noBias))).rejects.toThrow(/missing weights 2\.bias/);
    await expect(load(await withSpec(() => {}, extra))).rejects.toThrow(/unexpected weights head\.weight/);
    await expect(
      load(
        await withSpec(
          (s) =>
            ((s['model'] as { children: [string, { config: { outFeatures: number } }][] })
              .children[2]![1].config.outFeatures = 3),
        ),
      ),
    ).rejects.toThrow(/2\.weight is float32 \[2,4\] in the file, float32 \[3,4\] in the model/);
    await expect(
      load(await withSpec((s) => ((s['model'] as { className: string }).className = 'Nope'))),
    ).rejects.toThrow(ag.UnregisteredLayerError);
    for (const e of [ag.ModelFormatError]) expect(new e('x')).toBeInstanceOf(InvalidArgumentError);
    await expect(ag.loadModel(join(dir, 'none.safetensors'), { backend: be })).rejects.toThrow(/cannot read/);
    await expect(ag.loadModel(bytes, {} as { backend: ComputeBackend })).rejects.toThrow(/options.backend/);
    await expect(ag.saveModel(model, 'ftp://x')).rejects.toThrow(/unknown target scheme "ftp:\/\/"/);
    await expect(ag.saveModel(model, 'localstorage://m')).rejects.toThrow(/localStorage is not available/);
    await expect(ag.loadModel('downloads://m', { backend: be })).rejects.toThrow(/save target/);
    // readModelSpec reads the architecture alone.
    expect((await ag.readModelSpec(bytes)).model.className).toBe('Sequential');
    model.dispose();
    extra['head.weight']!.dispose();
  });

  test('registerLayer refuses what is not a Module class or a function', () => {
    expect(() => ag.registerLayer('', ag.ReLU, () => new ag.ReLU())).toThrow(InvalidArgumentError);
    expect(() => ag.registerLayer('X', Object as never, () => new ag.ReLU())).toThrow(/Module subclass/);
    expect(() => ag.registerLayer('X', ag.ReLU, 3 as never)).toThrow(/fromConfig must be a function/);
  });
});
