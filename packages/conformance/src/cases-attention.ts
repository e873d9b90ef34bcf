/**
 * Conformance cases, runners and float64 oracle of fused attention (hal/src/ops/attention-ops.ts): attention and
 * attentionBackward over L ≠ S, d ≠ dv, one query (L = 1), one key (S = 1), no leading dims and two, the heads as
 * permuted views [N, H, L, D] of [N, L, H, D] (the layout multi-head attention passes), a transposed k, rows of
 * large scores (softmax's stability: exp of an unshifted score would overflow), a negative scale, the
 * main job's ViT shape (17 tokens, heads of 16), and long sequences past a workgroup's memory (webgpu's key and
 * query blocks, dispatch-attention.ts): a ViT-S head pair (197 tokens, heads of 64), L ≠ S with S not a multiple
 * of the block, and large scores over several key blocks.
 *
 * Error scales (the op table's note): A_i = max_j Σ_d |q_id·k_jd|·|scale| bounds a score's rounding, which exp
 * carries as a relative error of P_ij; each output element's scale is its absolute sum times (1 + A_i):
 * out_ie: Σ_j P_ij·|v_je|; with |dS_ij| ≤ P_ij·(Σ_e |dO_ie·v_je| + Σ_e |dO_ie|·Σ_j' P_ij'·|v_j'e|) =: a_ij,
 * dq_id: |scale|·Σ_j a_ij·|k_jd|, dk_jd: |scale|·Σ_i a_ij·|q_id|, dv_je: Σ_i P_ij·|dO_ie|.
 */
import type { ComputeBackend, NDArray } from '@polyhal/hal';
import type { Case, InputSpec } from './cases.js';
import { fmt, U, viewName } from './cases-util.js';
import type { OpRunner } from './op-runners.js';
import type { Ref } from './oracle.js';

interface Dims {
  lead: number[];
  B: number;
  L: number;
  S: number;
  d: number;
  dv: number;
}

function dimsOf(q: Ref, k: Ref, v: Ref): Dims {
  const r = q.shape.length;
  const lead = q.shape.slice(0, r - 2);
  return {
    lead,
    B: lead.reduce((p, n) => p * n, 1),
    L: q.shape[r - 2]!,
    S: k.shape[r - 2]!,
    d: q.shape[r - 1]!,
    dv: v.shape[r - 1]!,
  };
}

/** P [B, L, S] in float64, and A [B, L] (each row's absolute score scale). */
function probs(q: Ref, k: Ref, scale: number, { B, L, S, d }: Dims): { P: Float64Array; A: Float64Array } {
  const P = new Float64Array(B * L * S);
  const A = new Float64Array(B * L);
  for (let b = 0; b < B; b++)
    for (let i = 0; i < L; i++) {
      const row = P.subarray((b * L + i) * S, (b * L + i + 1) * S);
      let [m, a] = [Number.NEGATIVE_INFINITY, 0];
      for (let j = 0; j < S; j++) {
        let [s, abs] = [0, 0];
        for (let c = 0; c < d; c++) {
          const t = q.data[(b * L + i) * d + c]! * k.data[(b * S + j) * d + c]!;
          s += t;
          abs += Math.abs(t);
        }
        row[j] = s * scale;
        m = Math.max(m, row[j]!);
        a = Math.max(a, abs * Math.abs(scale));
      }
      let sum = 0;
      for (let j = 0; j < S; j++) sum += row[j] = Math.exp(row[j]! - m);
      for (let j = 0; j < S; j++) row[j]! /= sum;
      A[b * L + i] = a;
    }
  return { P, A };
}

/** softmax(q·kᵀ·scale)·v in float64, with its error scale. */
export function oAttention(q: Ref, k: Ref, v: Ref, scale: number): Ref {
  const dm = dimsOf(q, k, v);
  const { B, L, S, dv } = dm;
  const { P, A } = probs(q, k, Math.fround(scale), dm);
  const [out, sc] = [new Float64Array(B * L * dv), new Float64Array(B * L * dv)];
  for (let b = 0; b < B; b++)
    for (let i = 0; i < L; i++)
      for (let e = 0; e < dv; e++) {
        let [s, abs] = [0, 0];
        for (let j = 0; j < S; j++) {
          const t = P[(b * L + i) * S + j]! * v.data[(b * S + j) * dv + e]!;
          s += t;
          abs += Math.abs(t);
        }
        out[(b * L + i) * dv + e] = s;
        sc[(b * L + i) * dv + e] = abs * (1 + A[b * L + i]!);
      }
  return { shape: [...dm.lead, L, dv], data: out, dtype: 'float32', scale: sc };
}

/** [dq, dk, dv] in float64 with their error scales (FlashAttention-2's formulas, exact arithmetic). */
export function oAttentionBackward(q: Ref, k: Ref, v: Ref, dO: Ref, scale: number): Ref[] {
  const dm = dimsOf(q, k, v);
  const { B, L, S, d, dv } = dm;
  const sf = Math.fround(scale);
  const { P, A } = probs(q, k, sf, dm);
  const [dq, dqs] = [new Float64Array(B * L * d), new Float64Array(B * L * d)];
  const [dk, dks] = [new Float64Array(B * S * d), new Float64Array(B * S * d)];
  const [dV, dvs] = [new Float64Array(B * S * dv), new Float64Array(B * S * dv)];
  for (let b = 0; b < B; b++)
    for (let i = 0; i < L; i++) {
      const r = b * L + i;
      const grow = (1 + A[r]!) * Math.abs(sf);
      const dP = new Float64Array(S);
      const dPabs = new Float64Array(S);
      let [D, Dabs] = [0, 0];
      for (let j = 0; j < S; j++) {
        for (let e = 0; e < dv; e++) {
          const t = dO.data[r * dv + e]! * v.data[(b * S + j) * dv + e]!;
          dP[j]! += t;
          dPabs[j]! += Math.abs(t);
          Dabs += P[r * S + j]! * Math.abs(dO.data[r * dv + e]!) * Math.abs(v.data[(b * S + j) * dv + e]!);
        }
        D += dP[j]! * P[r * S + j]!;
      }
      for (let j = 0; j < S; j++) {
        const p = P[r * S + j]!;
        const dS = p * (dP[j]! - D) * sf;
        const a = p * (dPabs[j]! + Dabs) * grow;
        for (let c = 0; c < d; c++) {
          const kq = (b * S + j) * d + c;
          dq[r * d + c]! += dS * k.data[kq]!;
          dqs[r * d + c]! += a * Math.abs(k.data[kq]!);
          dk[kq]! += dS * q.data[r * d + c]!;
          dks[kq]! += a * Math.abs(q.data[r * d + c]!);
        }
        for (let e = 0; e < dv; e++) {
          const t = p * dO.data[r * dv + e]!;
          dV[(b * S + j) * dv + e]! += t;
          dvs[(b * S + j) * dv + e]! += Math.abs(t) * (1 + A[r]!);
        }
      }
    }
  const ref = (shape: number[], data: Float64Array, sc: Float64Array): Ref => ({
    shape,
    data,
    dtype: 'float32',
    scale: sc,
  });
  return [ref([...dm.lead, L, d], dq, dqs), ref([...dm.lead, S, d], dk, dks), ref([...dm.lead, S, dv], dV, dvs)];
}

/**
 * attentionBackwardPacked in float64: q, k and v [N, H, L, D] taken from qkv [N, L, 3, H, D], their gradients from
 * oAttentionBackward put back at (n, l, i, h, c) — the layout is written out here, index by index.
 */
export function oAttentionBackwardPacked(qkv: Ref, dO: Ref, scale: number): Ref {
  const [N, L, , H, D] = qkv.shape as [number, number, number, number, number];
  const at = (n: number, l: number, i: number, h: number, c: number): number => (((n * L + l) * 3 + i) * H + h) * D + c;
  const part = (i: number): Ref => {
    const data = new Float64Array(N * H * L * D);
    for (let n = 0; n < N; n++)
      for (let h = 0; h < H; h++)
        for (let l = 0; l < L; l++)
          for (let c = 0; c < D; c++) data[((n * H + h) * L + l) * D + c] = qkv.data[at(n, l, i, h, c)]!;
    return { shape: [N, H, L, D], data, dtype: 'float32' };
  };
  const grads = oAttentionBackward(part(0), part(1), part(2), dO, scale);
  const [data, sc] = [new Float64Array(qkv.data.length), new Float64Array(qkv.data.length)];
  grads.forEach((g, i) => {
    for (let n = 0; n < N; n++)
      for (let h = 0; h < H; h++)
        for (let l = 0; l < L; l++)
          for (let c = 0; c < D; c++) {
            data[at(n, l, i, h, c)] = g.data[((n * H + h) * L + l) * D + c]!;
            sc[at(n, l, i, h, c)] = g.scale![((n * H + h) * L + l) * D + c]!;
          }
  });
  return { shape: [...qkv.shape], data, dtype: 'float32', scale: sc };
}

export const ATTENTION_OP_RUNNERS = {
  attention: {
    device: (be: ComputeBackend, xs: NDArray[], p) => [be.attention(xs[0]!, xs[1]!, xs[2]!, p.hyper!['scale']!)],
    oracle: (xs: Ref[], p) => [oAttention(xs[0]!, xs[1]!, xs[2]!, p.hyper!['scale']!)],
  },
  attentionBackward: {
    device: (be: ComputeBackend, xs: NDArray[], p) =>
      be.attentionBackward(xs[0]!, xs[1]!, xs[2]!, xs[3]!, p.hyper!['scale']!),
    oracle: (xs: Ref[], p) => oAttentionBackward(xs[0]!, xs[1]!, xs[2]!, xs[3]!, p.hyper!['scale']!),
  },
  attentionBackwardPacked: {
    device: (be: ComputeBackend, xs: NDArray[], p) => [be.attentionBackwardPacked(xs[0]!, xs[1]!, p.hyper!['scale']!)],
    oracle: (xs: Ref[], p) => [oAttentionBackwardPacked(xs[0]!, xs[1]!, p.hyper!['scale']!)],
  },
} satisfies Record<string, OpRunner>;

/** The heads of [N, T, H, D] as the view [N, H, T, D] (multi-head attention's split). */
const heads = (N: number, T: number, H: number, D: number, hi = 1): InputSpec => ({
  shape: [N, T, H, D],
  gen: U(-hi, hi),
  view: { permute: [0, 2, 1, 3] },
});
const plain = (shape: number[], hi = 1): InputSpec => ({ shape, gen: U(-hi, hi) });

export function attentionCases(): Case[] {
  const cases: Case[] = [];
  const add = (tag: string, [q, k, v]: InputSpec[], scale: number, dOut: InputSpec): void => {
    const name = (x: InputSpec): string => `${fmt(x.shape)}${viewName(x.view)}`;
    const id = `${[q, k, v].map((x) => name(x!)).join('+')}/${tag}`;
    cases.push({
      id: `attention/float32/${id}`,
      kind: 'composite',
      op: 'attention',
      dtype: 'float32',
      inputs: [q!, k!, v!],
      params: { hyper: { scale } },
    });
    cases.push({
      id: `attentionBackward/float32/${id}`,
      kind: 'composite',
      op: 'attentionBackward',
      dtype: 'float32',
      inputs: [q!, k!, v!, dOut],
      params: { hyper: { scale } },
    });
  };
  const s = (d: number): number => 1 / Math.sqrt(d);
  // L ≠ S, d ≠ dv, no leading dims and one
  add('scale1/sqrt8', [plain([5, 8]), plain([7, 8]), plain([7, 3])], s(8), plain([5, 3]));
  add('scale1/sqrt8', [plain([3, 5, 8]), plain([3, 7, 8]), plain([3, 7, 12])], s(8), plain([3, 5, 12]));
  // one query, one key
  add('L1', [plain([2, 1, 16]), plain([2, 9, 16]), plain([2, 9, 16])], s(16), plain([2, 1, 16]));
  add('S1', [plain([2, 6, 4]), plain([2, 1, 4]), plain([2, 1, 5])], s(4), plain([2, 6, 5]));
  // the heads as permuted views (N, H, T, D of N, T, H, D), the main job's ViT: 17 tokens, heads of 16
  add('heads/vit', [heads(2, 17, 4, 16), heads(2, 17, 4, 16), heads(2, 17, 4, 16)], s(16), plain([2, 4, 17, 16]));
  add('heads', [heads(2, 5, 3, 8), heads(2, 11, 3, 8), heads(2, 11, 3, 6)], s(8), plain([2, 3, 5, 6]));
  // a transposed k (stored [.., d, S]), and a plain q beside permuted k and v
  const kT: InputSpec = { shape: [2, 8, 10], gen: U(-1, 1), view: { transpose: true } };
  add('kT', [plain([2, 6, 8]), kT, plain([2, 10, 4])], s(8), plain([2, 6, 4]));
  add('mixed', [plain([2, 3, 6, 8]), heads(2, 9, 3, 8), heads(2, 9, 3, 8)], s(8), plain([2, 3, 6, 8]));
  // large scores: |q·k·scale| up to ~100 (exp(100) would overflow float32 without the shift), a negative scale
  add('large', [plain([2, 4, 8], 6), plain([2, 12, 8], 6), plain([2, 12, 8])], 0.5, plain([2, 4, 8]));
  add('negative-scale', [plain([3, 7, 5]), plain([3, 7, 5]), plain([3, 7, 5])], -0.75, plain([3, 7, 5]));
  // longer rows: 128 keys, heads of 64, two leading dims
  add('S128', [plain([1, 2, 6, 64]), plain([1, 2, 128, 64]), plain([1, 2, 128, 32])], s(64), plain([1, 2, 6, 32]));
  add('S160', [plain([2, 3, 16]), plain([2, 160, 16]), plain([2, 160, 16])], s(16), plain([2, 3, 16]));
  // long sequences: k and v past a workgroup's memory (32 KiB holds 64 keys of d = dv = 64), a ViT-S head pair,
  // L = 70 and S = 300 with d = 30, dv = 45 (rows padded to 32 and 48; blocks of 102 keys there: not a multiple),
  // large scores over two key blocks
  add('vit-s', [heads(1, 197, 2, 64), heads(1, 197, 2, 64), heads(1, 197, 2, 64)], s(64), plain([1, 2, 197, 64]));
  add('L70-S300', [plain([2, 70, 30]), plain([2, 300, 30]), plain([2, 300, 45])], s(30), plain([2, 70, 45]));
  add('large/blocks', [plain([1, 40, 32], 4), plain([1, 200, 32], 4), plain([1, 200, 32])], 0.5, plain([1, 40, 32]));
  // the packed backward: qkv [N, L, 3, H, D] (one head, several, the main job's ViT, 64 tokens past a workgroup's
  // memory: webgpu's packed kernel declines, the HAL runs attentionBackward and a stack), dOut plain or as the
  // forward's result arrives (the [N, H, L, D] view of [N, L, H, D]), large scores and a negative scale
  const packed = (tag: string, [N, L, H, D]: number[], scale: number, o: { dOutView?: boolean; hi?: number } = {}) =>
    cases.push({
      id: `attentionBackwardPacked/float32/${fmt([N!, L!, 3, H!, D!])}/${tag}`,
      kind: 'composite',
      op: 'attentionBackwardPacked',
      dtype: 'float32',
      inputs: [plain([N!, L!, 3, H!, D!], o.hi ?? 1), o.dOutView ? heads(N!, L!, H!, D!) : plain([N!, H!, L!, D!])],
      params: { hyper: { scale } },
    });
  packed('one-head', [1, 5, 1, 8], s(8));
  packed('heads', [2, 7, 3, 6], s(6), { dOutView: true });
  packed('vit', [2, 17, 4, 16], s(16), { dOutView: true });
  packed('large', [1, 9, 2, 8], 0.5, { hi: 6 });
  packed('negative-scale', [2, 4, 2, 5], -0.75);
  packed('past-workgroup', [1, 64, 2, 8], s(8), { dOutView: true }); // P and dS alone: 32 KiB
  return cases;
}
