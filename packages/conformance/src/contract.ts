/**
 * Error-contract cases: each bad input must raise its typed error (by class name, so a third-party
 * backend built on another copy of @polyhal/hal is judged fairly), allocate nothing, and leave every
 * other array intact.
 */
import type { ComputeBackend, NDArray } from '@polyhal/hal';
import type { BackendFactory, CaseResult } from './runner.js';

/** One error-contract case: a bad call and the typed error it must raise. */
export interface ContractCase {
  /** `contract/<error>/<op>`, e.g. `contract/shape-mismatch/add`. */
  id: string;
  /** Runs the bad call on `be` (a second backend from `factory` where two are needed) and judges it. */
  run: (be: ComputeBackend, factory: BackendFactory) => Promise<CaseResult>;
}

type Bad = (be: ComputeBackend, keep: NDArray, other: () => Promise<ComputeBackend>) => unknown;

function expectError(id: string, errorName: string, bad: Bad): ContractCase {
  return {
    id: `contract/${id}`,
    run: async (be, factory) => {
      const base = {
        id: `contract/${id}`,
        op: 'contract',
        dtype: '-',
        kind: 'contract',
        maxAbsError: 0,
        maxRelError: 0,
        maxUlpError: 0,
      };
      const values = [1.5, -2, 3.25, 0, 7, -0.5];
      const keep = be.fromArray(values, [2, 3]);
      const baseline = be.liveBufferCount();
      const bytes = be.memoryStats().liveBytes;
      let others: ComputeBackend[] = [];
      let thrown: unknown;
      try {
        await bad(be, keep, async () => {
          const o = await factory();
          others.push(o);
          return o;
        });
      } catch (e) {
        thrown = e;
      }
      const fail = (message: string): CaseResult => ({ ...base, pass: false, message });
      try {
        if (thrown === undefined) return fail(`expected ${errorName}, nothing was thrown`);
        const name = (thrown as Error)?.name;
        if (name !== errorName) return fail(`expected ${errorName}, got ${name}: ${(thrown as Error)?.message}`);
        if (!((thrown as Error).message ?? '').trim()) return fail(`${errorName} has an empty message`);
        if (be.liveBufferCount() !== baseline || be.memoryStats().liveBytes !== bytes) {
          return fail(`the failed call left ${be.liveBufferCount() - baseline} buffer(s) allocated`);
        }
        const after = Array.from(await be.read(keep));
        if (after.some((v, i) => v !== Math.fround(values[i]!))) return fail(`another array was changed: [${after}]`);
        return { ...base, pass: true };
      } finally {
        be.free(keep);
        for (const o of others) o.dispose();
        others = [];
      }
    },
  };
}

/** Every error-contract case, run after the op cases by runConformance and the jest adapter. */
export const CONTRACT_CASES: readonly ContractCase[] = [
  expectError('shape-mismatch/add', 'ShapeMismatchError', (be, k) => {
    const b = be.full([4], 1);
    try {
      return be.add(k, b);
    } finally {
      be.free(b);
    }
  }),
  expectError('shape-mismatch/matmul', 'ShapeMismatchError', (be, k) => be.matmul(k, k)),
  expectError('shape-mismatch/reshape', 'ShapeMismatchError', (be, k) => be.reshape(k, [4, 2])),
  expectError('shape-mismatch/fromArray', 'ShapeMismatchError', (be) => be.fromArray([1, 2, 3], [2, 2])),
  expectError('dtype-mismatch/add', 'DTypeError', (be, k) => {
    const i = be.full([2, 3], 1, 'int32');
    try {
      return be.add(k, i);
    } finally {
      be.free(i);
    }
  }),
  expectError('dtype-mismatch/write', 'DTypeError', (be, k) => be.write(k.buffer, new Int32Array(6))),
  expectError('unsupported/int32-exp', 'UnsupportedOpError', (be) => {
    const i = be.full([3], 1, 'int32');
    try {
      return be.exp(i);
    } finally {
      be.free(i);
    }
  }),
  expectError('unsupported/bool-matmul', 'UnsupportedOpError', (be) => {
    const i = be.full([2, 2], 1, 'bool');
    try {
      return be.matmul(i, i);
    } finally {
      be.free(i);
    }
  }),
  expectError('unsupported/mixed-matmul', 'UnsupportedOpError', (be) => {
    const i = be.full([2, 2], 1, 'int32');
    const f = be.full([2, 2], 1);
    try {
      return be.matmul(i, f);
    } finally {
      be.free(i);
      be.free(f);
    }
  }),
  expectError('use-after-free/read', 'UseAfterFreeError', (be) => {
    const x = be.full([3], 1);
    be.free(x);
    return be.add(x, x);
  }),
  expectError('use-after-free/double-free', 'UseAfterFreeError', (be) => {
    const x = be.full([3], 1);
    be.free(x);
    be.free(x);
  }),
  expectError('out-of-memory/allocate', 'OutOfMemoryError', (be) =>
    be.allocate(Math.floor(be.memoryAvailable() / 4) + 1024),
  ),
  expectError('out-of-memory/op', 'OutOfMemoryError', (be, k) =>
    be.contiguous(be.expand(k, [Math.ceil(be.memoryAvailable() / 24) + 16, 2, 3])),
  ),
  expectError('invalid/axis', 'InvalidArgumentError', (be, k) => be.sum(k, 2)),
  expectError('invalid/repeated-axis', 'InvalidArgumentError', (be, k) => be.sum(k, [1, -1])),
  expectError('invalid/permutation', 'InvalidArgumentError', (be, k) => be.permute(k, [0, 0])),
  expectError('invalid/negative-pad', 'InvalidArgumentError', (be, k) =>
    be.pad(k, [
      [0, 0],
      [-1, 0],
    ]),
  ),
  // Unknown op names are errors, never another op or zeros.
  expectError('unsupported/unknown-binary', 'UnsupportedOpError', (be, k) => be.binary('notAnOp' as never, k, k)),
  expectError('unsupported/unknown-unary', 'UnsupportedOpError', (be, k) => be.unary('notAnOp' as never, k)),
  expectError('unsupported/unknown-reduce', 'UnsupportedOpError', (be, k) => be.reduce('median' as never, k)),
  // Null or wrong-typed arguments are typed errors, not TypeError/RangeError/RuntimeError.
  expectError('invalid/null-axes', 'InvalidArgumentError', (be, k) => be.sum(k, null as never)),
  expectError('invalid/pad-not-pairs', 'InvalidArgumentError', (be, k) => be.pad(k, [1, 2] as never)),
  expectError('invalid/null-array', 'InvalidArgumentError', (be) => be.exp(null as never)),
  expectError('dtype-mismatch/write-float64', 'DTypeError', (be, k) =>
    be.write(k.buffer, new Float64Array(6) as never),
  ),
  // Optimizer hyper-parameters out of their domain: nothing written (the kept array is the parameter).
  ...(
    [
      ['step', 0],
      ['step', NaN],
      ['lr', NaN],
      ['beta2', 1],
    ] as const
  ).map(([key, value]) =>
    expectError(`invalid/adam-${key}-${value}`, 'InvalidArgumentError', (be, k) => {
      const [g, m, v] = [be.full([2, 3], 1), be.full([2, 3], 0), be.full([2, 3], 0)];
      try {
        be.adamStep(k.buffer, g, m.buffer, v.buffer, {
          lr: 1e-3,
          beta1: 0.9,
          beta2: 0.999,
          eps: 1e-8,
          weightDecay: 0,
          step: 1,
          [key]: value,
        });
      } finally {
        for (const a of [g, m, v]) be.free(a);
      }
    }),
  ),
  expectError('device-mismatch/other-instance', 'DeviceMismatchError', async (be, k, other) => {
    const o = await other();
    const x = o.full([2, 3], 1);
    return be.add(k, x);
  }),
];
