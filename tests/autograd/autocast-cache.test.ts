// autocast's weight-cast cache (PyTorch's autocast cache): inside one autocast region each float32 parameter used
// by several float16 products is cast to float16 once. The peer is the same computation without the cache
// (`cacheEnabled: false`, every use casts again): with the cache the loss and every parameter's gradient must be
// the same bits on cpu, wasm and webgpu, and the forward must run exactly (uses − 1) fewer cast kernels per
// parameter of the products (counted by a proxy of the backend), the backward the same number. Compiled
// (compile.ts; webgpu captures and replays, the weights updated by SGD between calls), the step gives an eager
// twin's losses and weights bit for bit: the replays cast the updated weights again.
//
// The model: a pre-norm transformer block (LayerNorm, 2-head self-attention, LayerNorm, GELU MLP, residuals)
// applied three times with its weights shared (as ALBERT and the Universal Transformer do), so each of the 8
// parameters of its products (the packed q/k/v in-projection's, out's, fc1's and fc2's weights and biases) is used
// three times per region.
import { describe, expect, test } from '@jest/globals';
import * as ag from '@polyhal/autograd';
import { Tensor } from '@polyhal/autograd';
import { EncoderBlock } from '@polyhal/models';
import type { ComputeBackend } from '@polyhal/hal';
import { openBackend, REPO_BACKENDS } from '../support/backends.js';

const WIDTH = 16;
const SEQ = 5;
const BATCH = 2;
const APPLICATIONS = 3;

const values = (n: number, seed: number): number[] =>
  Array.from({ length: n }, (_, i) => (((i + 1) * 2654435761 + seed * 40503) >>> 0) / 2 ** 31 - 1);

/** The main job ViT's encoder block (@polyhal/models): width 16, 2 heads, hidden 32, weights from seed 3. */
class Block extends EncoderBlock {
  constructor(backend: ComputeBackend) {
    super(WIDTH, 2, 2 * WIDTH, backend, 3);
  }
  /** The parameters autocast lowers to float16: those of the products (not the LayerNorms'). */
  productParameters(): Tensor[] {
    return [this.attention, this.fc1, this.fc2].flatMap((m) => m.parameters());
  }
}

/** `be` seen through a proxy that counts the cast calls made on it (not those a kernel makes inside). */
function countingCasts(be: ComputeBackend): { backend: ComputeBackend; casts: () => number } {
  let casts = 0;
  const backend = new Proxy(be, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        if (prop === 'cast') casts++;
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { backend, casts: () => casts };
}

interface Run {
  loss: Float32Array;
  grads: Float32Array[];
  forwardCasts: number;
  backwardCasts: number;
}

/** Σ(block³(x)·w) under autocast, with or without the cache: its bits, the gradients and the cast calls. */
async function run(be: ComputeBackend, cacheEnabled: boolean): Promise<Run> {
  const { backend, casts } = countingCasts(be);
  const block = new Block(backend);
  try {
    return await ag.scope(async () => {
      const x = Tensor.fromArray(backend, values(BATCH * SEQ * WIDTH, 1), [BATCH, SEQ, WIDTH]);
      const w = Tensor.fromArray(backend, values(BATCH * SEQ * WIDTH, 2), [BATCH, SEQ, WIDTH]);
      const before = casts();
      const loss = ag.autocast(
        'float16',
        () => {
          let h = x;
          for (let i = 0; i < APPLICATIONS; i++) h = block.forward(h);
          return ag.sum(ag.mul(h, w));
        },
        { cacheEnabled },
      );
      const forwardCasts = casts() - before;
      loss.backward();
      const backwardCasts = casts() - before - forwardCasts;
      const read = async (t: Tensor) => Float32Array.from(await t.data());
      const grads = await Promise.all(block.parameters().map((p) => read(p.grad!)));
      return { loss: await read(loss), grads, forwardCasts, backwardCasts };
    });
  } finally {
    block.dispose();
  }
}

/** The bits of a float32 array (so that −0 and NaN payloads count too). */
const bits = (a: Float32Array): number[] => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));

for (const [backendName, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`autocast weight-cast cache on ${backendName}`, () => {
    let be: ComputeBackend | undefined;
    openBackend(backendName, factory, (b) => {
      be = b;
    });

    test('a weight-shared transformer block: the same loss and gradients, bit for bit, with fewer casts', async () => {
      const cached = await run(be!, true);
      const uncached = await run(be!, false);
      expect(bits(cached.loss)).toEqual(bits(uncached.loss));
      expect(cached.grads.length).toBe(uncached.grads.length);
      cached.grads.forEach((g, k) => expect([k, bits(g)]).toEqual([k, bits(uncached.grads[k]!)]));
      // the gradients did reach every parameter (not zero): the float16 path is not cut off from them
      for (const g of cached.grads) expect(g.some((v) => v !== 0)).toBe(true);
      const shared = new Block(be!);
      const lowered = shared.productParameters().length;
      shared.dispose();
      expect(lowered).toBe(8);
      expect(uncached.forwardCasts - cached.forwardCasts).toBe((APPLICATIONS - 1) * lowered);
      expect(cached.backwardCasts).toBe(uncached.backwardCasts);
      if (process.env['AMP_REPORT'])
        console.log(
          `${backendName}: forward casts ${uncached.forwardCasts} → ${cached.forwardCasts}, ` +
            `backward casts ${uncached.backwardCasts} → ${cached.backwardCasts}`,
        );
    });

    test('the copies are freed when the outermost region exits; an updated weight is cast again', async () => {
      const block = new Block(be!);
      const x = Tensor.fromArray(be!, values(BATCH * SEQ * WIDTH, 3), [BATCH, SEQ, WIDTH]);
      const live = be!.liveBufferCount();
      const forward = (cacheEnabled: boolean): Promise<number[]> =>
        ag.scope(async () => {
          // with a graph (the weights' views Wᵀ are cached then), freed by the scope
          const y = ag.autocast(
            'float16',
            () => {
              let h = x;
              for (let i = 0; i < APPLICATIONS; i++) {
                h = block.forward(h);
                // an inner region (autocast off) between: the outer one's cache lives on across it
                ag.autocast('float16', () => ag.relu(h).dispose(), { enabled: false });
              }
              return h;
            },
            { cacheEnabled },
          );
          return Array.from(await y.data());
        });
      const first = await forward(true);
      expect(be!.liveBufferCount()).toBe(live); // no copy outlives its region
      expect(first).toEqual(await forward(false));
      // a weight changed between two regions: the next region casts it again (no stale float16 copy)
      const weight = block.fc1.weight;
      const shifted = ag.noGrad(() => ag.add(weight, 0.25));
      be!.assign(weight.value.buffer, shifted.value);
      shifted.dispose();
      const second = await forward(true);
      expect(second).toEqual(await forward(false));
      expect(second).not.toEqual(first);
      x.dispose();
      block.dispose();
    });

    test('compiled: a training step with the cache replays to the eager losses and updated weights', async () => {
      const blocks = [new Block(be!), new Block(be!)]; // the same weights: one trained eagerly, one compiled
      const w = Tensor.fromArray(be!, values(BATCH * SEQ * WIDTH, 6), [BATCH, SEQ, WIDTH]);
      const step =
        (block: Block) =>
        (x: Tensor): Tensor => {
          const loss = ag.autocast('float16', () => {
            let h = x;
            for (let i = 0; i < APPLICATIONS; i++) h = block.forward(h);
            return ag.sum(ag.mul(h, w));
          });
          loss.backward();
          return loss;
        };
      const compiled = ag.compile(step(blocks[1]!));
      const opts = blocks.map((b) => new ag.SGD(b.parameters(), { lr: 0.01 }));
      for (let i = 0; i < 3; i++) {
        const x = Tensor.fromArray(be!, values(BATCH * SEQ * WIDTH, 10 + i), [BATCH, SEQ, WIDTH]);
        const losses: number[][] = [];
        for (const [k, run] of [step(blocks[0]!), compiled].entries()) {
          opts[k]!.zeroGrad();
          const loss = k === 0 ? ag.scope(() => run(x)) : run(x);
          losses.push(bits(Float32Array.from(await loss.data())));
          opts[k]!.step();
          loss.dispose();
        }
        expect(losses[1]).toEqual(losses[0]);
        const weights = await Promise.all(
          blocks.map((b) => Promise.all(b.parameters().map(async (p) => bits(Float32Array.from(await p.data()))))),
        );
        expect(weights[1]).toEqual(weights[0]);
        x.dispose();
      }
      // webgpu captures (one trace, then replays that re-run the weights' casts); cpu and wasm run fn as is
      expect(compiled.stats).toMatchObject(
        be!.beginCapture ? { traces: 1, replays: 2, refused: [] } : { eager: 3, replays: 0 },
      );
      compiled.release();
      for (const o of opts) {
        o.zeroGrad();
        o.dispose();
      }
      for (const b of blocks) b.dispose();
      w.dispose();
    });

    test('a frozen weight (requiresGrad false) and a non-float32 operand are cast per use as before', () => {
      ag.scope(() => {
        const { backend, casts } = countingCasts(be!);
        const frozen = Tensor.fromArray(backend, values(WIDTH * WIDTH, 4), [WIDTH, WIDTH]);
        const x = Tensor.fromArray(backend, values(SEQ * WIDTH, 5), [SEQ, WIDTH]);
        const before = casts();
        ag.autocast('float16', () => {
          for (let i = 0; i < APPLICATIONS; i++) ag.matmul(x, frozen);
        });
        expect(casts() - before).toBe(2 * APPLICATIONS); // x and the frozen weight, every time
      });
    });
  });
}
