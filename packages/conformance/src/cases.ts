import type { DType } from '@polyhal/hal';
import type { CaseStep } from './cases-fused.js';
import { accumulationCases } from './cases-accumulation.js';
import { compositeCases } from './cases-composite.js';
import { convCases } from './cases-conv.js';
import { coreCases } from './cases-core.js';
import { emptyMatmulCases } from './cases-matmul-empty.js';
import { float16MatmulCases } from './cases-matmul-float16.js';
import { divisionCases } from './cases-division.js';
import { dtypeCases } from './cases-dtypes.js';
import { elementwiseCases } from './cases-elementwise.js';
import { fusedElementwiseCases } from './cases-fused.js';
import { indexCases } from './cases-index.js';
import { boolMovementCases, logicCases } from './cases-logic.js';
import { scatterCases } from './cases-scatter.js';
import { layoutCases } from './cases-layout.js';
import { type LossCaseParams, lossCases } from './cases-loss.js';
import { type NormParams, normCases } from './cases-norm.js';
import { ampCases } from './cases-amp.js';
import { attentionCases } from './cases-attention.js';
import { rankCases } from './cases-rank.js';
import { type ScanParams, scanCases } from './cases-scan.js';
import { quantCases } from './cases-quant.js';
import { quantConvCases } from './cases-quant-conv.js';
import type { ResizeParams, WindowParams } from './oracle-conv.js';
import type { Generator } from './random.js';
import { randomCases } from './random-runners.js';

/**
 * A view an input is seen through after upload, so that a case exercises strided operands: one movement op
 * (permute, stride, shrink, expand) with its argument, or `transpose` (the last two dims swapped).
 */
export type ViewSpec =
  | { permute: number[] }
  | { stride: number[] }
  | { shrink: [number, number][] }
  | { expand: number[] }
  | { transpose: true };

/** One input of a case: its stored shape, how its values are drawn, its dtype and the view the op sees. */
export interface InputSpec {
  /** The shape uploaded (before `view`). */
  shape: number[];
  /** The seeded distribution its values are drawn from (rounded to the dtype). */
  gen: Generator;
  /** Explicit values (row-major, prod(shape) of them), used instead of `gen` (property-based tests). */
  values?: number[];
  /** The input's dtype (default: the case's). */
  dtype?: DType;
  /** Applied after upload, so the op sees a strided view (stored shape is `shape`). */
  view?: ViewSpec;
}

/** What a case exercises, and so how the runner runs it: a table op of each kind, or a family's runner. */
export type CaseKind = 'unary' | 'binary' | 'reduce' | 'movement' | 'matmul' | 'composite' | 'optimizer' | 'random';

/** One conformance case: an op on seeded inputs, checked against the float64 oracle within the op's tolerance. */
export interface Case {
  /** Unique and stable: op, dtype, shapes, view and parameters (`add/float32/[3,1]+[1,4]`); --filter matches it. */
  id: string;
  /** How the runner runs it. */
  kind: CaseKind;
  /** The op's name in the op table. */
  op: string;
  /** The dtype whose tolerances apply (usually the inputs'). */
  dtype: DType;
  /** The operands, in the op's order. */
  inputs: InputSpec[];
  /** The op's other arguments, by the op's own parameter names; each op reads the ones it takes. */
  params?: {
    axes?: number[];
    keepdims?: boolean;
    shape?: number[];
    perm?: number[];
    bounds?: [number, number][];
    steps?: number[];
    pads?: [number, number][];
    value?: number;
    dtype?: DType;
    axis?: number;
    withGrad?: boolean;
    /** Layout ops: pad's mode, tile's reps, trilu's k and upper, split's sections or sizes. */
    mode?: 'constant' | 'edge' | 'reflect' | 'wrap';
    reps?: number[];
    k?: number;
    upper?: boolean;
    split?: number | number[];
    /** oneHot's depth. */
    depth?: number;
    /** scatter, gatherND, scatterND, scatterElements (cases-scatter.ts): the reduction and batch dims. */
    index?: { reduction?: 'none' | 'add' | 'mul'; batchDims?: number };
    /** argmax/argmin: the last index among ties. */
    lastIndex?: boolean;
    /**
     * Optimizer hyper-parameters (adamStep: lr, beta1, beta2, eps, weightDecay, step; sgdStep: lr, momentum,
     * weightDecay; nonFiniteCheckAndUnscale: invScale; attention, attentionBackward: scale).
     */
    hyper?: Record<string, number>;
    /** Loss functions: reduction, ignoreIndex, labelSmoothing, and which optional weights follow the operands. */
    loss?: LossCaseParams;
    /** Convolution and pooling options (stride, padding, dilation, groups, kernelSize, ...). */
    window?: WindowParams;
    /** resize's options (sizes or scales, mode, coordinate transformation, ...). */
    resize?: ResizeParams;
    /** cumsum's exclusive and reverse, topk's largest and sorted. */
    scan?: ScanParams;
    /** fusedElementwise's steps (an array operand names one of the case's inputs). */
    chain?: CaseStep[];
    /** layerNorm and layerNormBackward: dims, eps and which optional inputs follow the operands. */
    norm?: NormParams;
  };
}

function buildCases(): Case[] {
  const cases: Case[] = [...elementwiseCases(), ...coreCases(), ...compositeCases(), ...rankCases()];
  cases.push(...fusedElementwiseCases());
  cases.push(...layoutCases());
  cases.push(...indexCases(), ...scatterCases());
  cases.push(...randomCases());
  cases.push(...lossCases());
  cases.push(...convCases());
  cases.push(...logicCases(), ...boolMovementCases());
  cases.push(...scanCases());
  cases.push(...quantCases());
  cases.push(...quantConvCases());
  cases.push(...divisionCases());
  cases.push(...dtypeCases());
  cases.push(...normCases());
  cases.push(...ampCases());
  cases.push(...attentionCases());
  cases.push(...accumulationCases());
  cases.push(...emptyMatmulCases());
  cases.push(...float16MatmulCases());
  return cases;
}

/** Every conformance case, in a stable order. */
export const CASES: readonly Case[] = buildCases();
