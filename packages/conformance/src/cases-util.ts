/** Shared helpers of the conformance case files: generators and id fragments. */
import type { ViewSpec } from './cases.js';
import type { Generator } from './random.js';

export const U = (lo: number, hi: number): Generator => ({ kind: 'uniform', lo, hi });
export const P = (lo: number, hi: number): Generator => ({ kind: 'positive', lo, hi });
export const I = (lo: number, hi: number): Generator => ({ kind: 'int', lo, hi });
export const SPECIAL: Generator = { kind: 'special' };

export const fmt = (s: number[]): string => `[${s.join(',')}]`;
export const viewName = (v?: ViewSpec): string => (v ? `.${Object.keys(v)[0]}` : '');
