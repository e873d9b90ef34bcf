import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ARRAY_OP_DEFS,
  type ArrayOpDef,
  BINARY_OP_DEFS,
  DTYPES,
  BINARY_OPS,
  type BinaryOpDef,
  INT32_BINARY_OPS,
  INT32_REDUCE_OPS,
  INT32_UNARY_OPS,
  mulberry32,
  REDUCE_OP_DEFS,
  REDUCE_OPS,
  type ReduceOpDef,
  UNARY_OP_DEFS,
  UNARY_OPS,
  type UnaryOpDef,
} from '@polyhal/hal';
import { CpuBackend } from '@polyhal/backend-cpu';
import { CASES } from '@polyhal/conformance';

// The op table is the one place an elementwise op is defined; these tests hold its entries to
// themselves: lists derived from it, complete entries, gradient rules that agree with the float64
// reference's own derivative, and docs/OPS.md rendered from it.
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('op table', () => {
  test("the HAL op lists and int32 sets are the table's entries, in table order", () => {
    expect([...UNARY_OPS]).toEqual(Object.keys(UNARY_OP_DEFS));
    expect([...BINARY_OPS]).toEqual(Object.keys(BINARY_OP_DEFS));
    expect([...INT32_UNARY_OPS]).toEqual(UNARY_OPS.filter((op) => (UNARY_OP_DEFS[op] as UnaryOpDef).i32));
    // the ops that take int32: listed in `takes`, or (no list) those with an int32 reference
    const takesInt32 = (d: BinaryOpDef): boolean => (d.takes ? d.takes.includes('int32') : d.i32 !== undefined);
    expect([...INT32_BINARY_OPS]).toEqual(BINARY_OPS.filter((op) => takesInt32(BINARY_OP_DEFS[op] as BinaryOpDef)));
  });

  test.each([...Object.entries(UNARY_OP_DEFS), ...Object.entries(BINARY_OP_DEFS)])(
    '%s: a complete entry (int32 reference, accuracy and cases together)',
    (_name, def) => {
      const d = def as UnaryOpDef | BinaryOpDef;
      expect(d.semantics.length).toBeGreaterThan(10);
      expect(d.accuracy.float32.abs >= 0 && d.accuracy.float32.rel >= 0).toBe(true);
      expect(d.accuracy.int32 !== undefined).toBe(d.i32 !== undefined);
      if ('int32Domain' in d || d.f64.length === 2)
        expect((d as BinaryOpDef).int32Domain !== undefined).toBe(d.i32 !== undefined);
      if (d.accuracy.wgsl) expect(d.accuracy.wgsl.why).toMatch(/WGSL/);
    },
  );

  // Each gradient rule, run on the cpu backend, against central differences of the entry's own float64
  // reference at points inside its case domain (away from kinks).
  const sample = (d: UnaryOpDef['domain'], rng: () => number): number => {
    const v = d.lo + (d.hi - d.lo) * rng();
    return d.kind === 'nonzero' && Math.abs(v) < 0.1 ? 0.5 : d.kind === 'positive' ? Math.max(v, 1e-2) : v;
  };
  const slope = (f: (x: number) => number, x: number): number => {
    const h = 1e-6 * Math.max(1, Math.abs(x));
    return (f(x + h) - f(x - h)) / (2 * h);
  };

  test.each(Object.entries(UNARY_OP_DEFS).filter(([, d]) => d.grad))(
    '%s: the gradient rule matches the derivative of the float64 reference',
    (_name, def) => {
      const d = def as UnaryOpDef;
      const be = new CpuBackend();
      const rng = mulberry32(7);
      const xs = Array.from({ length: 16 }, () => Math.fround(sample(d.domain, rng))).filter((x) => Math.abs(x) > 1e-3);
      const x = be.fromArray(xs, [xs.length]);
      const out = be.fromArray(
        xs.map((v) => d.f64(v)),
        [xs.length],
      );
      const g = be.fromArray(
        xs.map(() => 1),
        [xs.length],
      );
      const [dx] = d.grad!(be, g, [x], out, [true]);
      const got = be.readSync(dx!);
      xs.forEach((v, i) =>
        expect(Math.abs(got[i]! - slope(d.f64, v))).toBeLessThanOrEqual(1e-3 * Math.max(1, Math.abs(slope(d.f64, v)))),
      );
      be.dispose();
    },
  );

  test.each(Object.entries(BINARY_OP_DEFS).filter(([, d]) => d.grad))(
    '%s: the gradient rule matches the partial derivatives of the float64 reference',
    (_name, def) => {
      const d = def as BinaryOpDef;
      const be = new CpuBackend();
      const rng = mulberry32(11);
      const pairs = Array.from(
        { length: 16 },
        () => [Math.fround(sample(d.domain[0], rng)), Math.fround(sample(d.domain[1], rng))] as const,
      )
        // away from kinks: ties of maximum, and mod's jumps where x/y is near an integer
        .filter(([a, b]) => Math.abs(a - b) > 1e-2 && Math.abs(a / b - Math.round(a / b)) > 1e-3);
      const a = be.fromArray(
        pairs.map((p) => p[0]),
        [pairs.length],
      );
      const b = be.fromArray(
        pairs.map((p) => p[1]),
        [pairs.length],
      );
      const out = be.fromArray(
        pairs.map(([x, y]) => d.f64(x, y)),
        [pairs.length],
      );
      const g = be.fromArray(
        pairs.map(() => 1),
        [pairs.length],
      );
      const [da, db] = d.grad!(be, g, [a, b], out, [true, true]).map((r) => be.readSync(r!));
      pairs.forEach(([x, y], i) => {
        const wantA = slope((v) => d.f64(v, y), x);
        const wantB = slope((v) => d.f64(x, v), y);
        expect(Math.abs(da![i]! - wantA)).toBeLessThanOrEqual(1e-3 * Math.max(1, Math.abs(wantA)));
        expect(Math.abs(db![i]! - wantB)).toBeLessThanOrEqual(1e-3 * Math.max(1, Math.abs(wantB)));
      });
      be.dispose();
    },
  );

  test('docs/OPS.md is rendered from the table (node scripts/ops-doc.mjs)', () => {
    const r = spawnSync(process.execPath, ['scripts/ops-doc.mjs', '--check'], { cwd: root, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});

// The reductions' entries (hal/src/ops/reduce.ts), held to themselves the same way.
describe('op table: reductions', () => {
  test("REDUCE_OPS and INT32_REDUCE_OPS are the table's entries, in table order", () => {
    expect([...REDUCE_OPS]).toEqual(Object.keys(REDUCE_OP_DEFS));
    expect([...INT32_REDUCE_OPS]).toEqual(REDUCE_OPS.filter((op) => (REDUCE_OP_DEFS[op] as ReduceOpDef).i32));
  });

  test.each(Object.entries(REDUCE_OP_DEFS))('%s: the identity is the identity of its folds', (_name, def) => {
    const d = def as ReduceOpDef;
    expect(d.semantics.length).toBeGreaterThan(10);
    expect(d.accuracy.int32 !== undefined).toBe(d.i32 !== undefined);
    for (const v of [-3.5, 0, 1e-30, 2.25, 7e20, Infinity, -Infinity]) expect(d.f64(d.identity.float32, v)).toBe(v);
    expect(d.f64(d.identity.float32, NaN)).toBeNaN();
    if (d.i32) for (const v of [-2147483648, -7, 0, 5, 2147483647]) expect(d.i32(d.identity.int32!, v)).toBe(v);
  });

  // Each gradient rule on the cpu backend against central differences of the entry's float64 fold.
  test.each(Object.entries(REDUCE_OP_DEFS).filter(([, d]) => d.grad))(
    '%s: the gradient rule matches the derivative of the float64 fold',
    (_name, def) => {
      const d = def as ReduceOpDef;
      const be = new CpuBackend();
      const rng = mulberry32(11);
      const shape = [3, 4];
      const xs = Array.from({ length: 12 }, () => Math.fround(0.5 + rng())); // distinct, away from ties and 0
      const foldRow = (row: number[]): number => row.reduce(d.f64, d.identity.float32);
      const rows = (v: number[]): number[][] => [0, 1, 2].map((r) => v.slice(r * 4, r * 4 + 4));
      const x = be.fromArray(xs, shape);
      const out = be.fromArray(rows(xs).map(foldRow), [3, 1]);
      const g = be.fromArray([1, 2, 3], [3, 1]);
      const dx = be.readSync(d.grad!(be, g, x, out, [1]));
      xs.forEach((_v, i) => {
        const h = 1e-6;
        const bump = (e: number): number => foldRow(rows(xs.map((w, j) => (j === i ? w + e : w)))[Math.floor(i / 4)]!);
        const want = ((bump(h) - bump(-h)) / (2 * h)) * (Math.floor(i / 4) + 1);
        expect(Math.abs(dx[i]! - want)).toBeLessThanOrEqual(1e-3 * Math.max(1, Math.abs(want)));
      });
      be.dispose();
    },
  );
});

describe('op table: every op', () => {
  test('has conformance cases, and every case is of an op of the table', () => {
    const tableOps = new Set([
      ...Object.keys(UNARY_OP_DEFS),
      ...Object.keys(BINARY_OP_DEFS),
      ...Object.keys(REDUCE_OP_DEFS),
      ...Object.keys(ARRAY_OP_DEFS),
    ]);
    const caseOps = new Set(CASES.map((c) => c.op));
    expect([...tableOps].filter((op) => !caseOps.has(op))).toEqual([]);
    expect([...caseOps].filter((op) => !tableOps.has(op))).toEqual([]);
  });

  test.each(Object.entries(ARRAY_OP_DEFS))('%s: a complete entry', (_name, def) => {
    const d = def as ArrayOpDef;
    expect(d.semantics.length).toBeGreaterThan(10);
    expect(d.signature).toContain(_name);
    expect(d.dtypes.length).toBeGreaterThan(0);
    for (const dt of d.dtypes) expect(DTYPES).toContain(dt);
    // int8 and uint8 compute in int32 and take its bound (tolerances.ts), so any integer dtype needs one.
    expect(d.accuracy.int32 !== undefined).toBe(d.dtypes.some((t) => t === 'int32' || t === 'int8' || t === 'uint8'));
    expect(d.composition !== undefined).toBe(d.kind === 'composite' || d.kind === 'optimizer');
    if (d.accuracy.wgsl) expect(d.accuracy.wgsl.why).toMatch(/WGSL/);
  });
});
