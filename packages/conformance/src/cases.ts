import type { DType } from '@polyhal/hal';
import { accumulationCases } from './cases-accumulation.js';
import { compositeCases } from './cases-composite.js';
import { convCases } from './cases-conv.js';
import { coreCases } from './cases-core.js';
import { emptyMatmulCases } from './cases-matmul-empty.js';
import { divisionCases } from './cases-division.js';
import { dtypeCases } from './cases-dtypes.js';
import { elementwiseCases } from './cases-elementwise.js';
import { indexCases } from './cases-index.js';
import { boolMovementCases, logicCases } from './cases-logic.js';
import { scatterCases } from './cases-scatter.js';
import { layoutCases } from './cases-layout.js';
import { type LossCaseParams, lossCases } from './cases-loss.js';
import { type NormParams, normCases } from './cases-norm.js';
import { rankCases } from './cases-rank.js';
import { type ScanParams, scanCases } from './cases-scan.js';
import { quantCases } from './cases-quant.js';
import { quantConvCases } from './cases-quant-conv.js';
import type { ResizeParams, WindowParams } from './oracle-conv.js';
import type { Generator } from './random.js';
import { randomCases } from './random-runners.js';

export type ViewSpec =
  | { permute: number[] }
  | { stride: number[] }
  | { shrink: [number, number][] }
  | { expand: number[] }
  | { transpose: true };

export interface InputSpec {
  shape: number[];
  gen: Generator;
  /** Explicit values (row-major, prod(shape) of them), used instead of `gen` (property-based tests). */
  values?: number[];
  dtype?: DType;
  /** Applied after upload, so the op sees a strided view (stored shape is `shape`). */
  view?: ViewSpec;
}

export type CaseKind = 'unary' | 'binary' | 'reduce' | 'movement' | 'matmul' | 'composite' | 'optimizer' | 'random';

export interface Case {
  id: string;
  kind: CaseKind;
  op: string;
  dtype: DType;
  inputs: InputSpec[];
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
     * weightDecay).
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
    /** layerNorm and layerNormBackward: dims, eps and which optional inputs follow the operands. */
    norm?: NormParams;
  };
}

function buildCases(): Case[] {
  const cases: Case[] = [...elementwiseCases(), ...coreCases(), ...compositeCases(), ...rankCases()];
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
  cases.push(...accumulationCases());
  cases.push(...emptyMatmulCases());
  return cases;
}

/** Every conformance case, in a stable order. */
export const CASES: readonly Case[] = buildCases();
