import { describe, expect, test } from '@jest/globals';
import {
  type CaseResult,
  type ConformanceResult,
  type OnnxNodeTestsResult,
  type OnnxTestResult,
  onnxTextReport,
  selectCases,
  textTable,
} from '@polyhal/conformance';
import { STRICT_CAPABILITIES } from '@polyhal/hal';

// The text reports with synthetic results: failures come first, every table's columns line up (each
// column padded to its widest cell, two spaces between columns), and a failing case's row names the case,
// its input shapes and its worst error.

/** Offsets where the cells of `line` start (cells are separated by two or more spaces). */
const starts = (line: string): number[] => [...line.matchAll(/(?<=^ *| {2})(?=\S)/g)].map((m) => m.index!);
const cells = (line: string): string[] => line.trim().split(/ {2,}/);

const ok = (id: string): CaseResult => {
  const [op, dtype] = id.split('/') as [string, string];
  return { id, op, dtype, kind: 'unary', pass: true, maxAbsError: 0, maxRelError: 0, maxUlpError: 0 };
};
const bad = (id: string, abs: number, rel: number, ulp: number, message: string): CaseResult => ({
  ...ok(id),
  pass: false,
  maxAbsError: abs,
  maxRelError: rel,
  maxUlpError: ulp,
  message,
});

const run = (results: CaseResult[]): ConformanceResult => ({
  backend: 'sloppy',
  deviceName: 'a test device',
  runtime: 'Node',
  capabilities: STRICT_CAPABILITIES,
  capabilitiesDeclared: true,
  seed: 1,
  results,
  passed: results.filter((r) => r.pass).length,
  failed: results.filter((r) => !r.pass).length,
});

describe('textTable', () => {
  const matmul = selectCases('matmul/float32/').find((c) => c.inputs.length === 2)!;
  const exp = selectCases('exp/float32/[31,33]')[0]!;
  const r = run([
    ok('add/float32/[17]'),
    ok('neg/float32/[17]'),
    // the maximum abs error and ulp error that used to fill their columns exactly and run together
    bad(exp.id, 220, 0.5, 2127857016, 'output 0[5]: got 1, want 221 (tolerance abs 0 + rel 4.8e-7)'),
    ok('sub/float32/[17]'),
    bad(matmul.id, 0.25, 1e-3, 41, 'output 0[2]: got 3.25, want 3 (tolerance abs 0 + rel 1e-6)'),
    {
      ...bad('contract/shape-mismatch/add', 0, 0, 0, 'threw TypeError: the device was lost'),
      op: 'contract',
      dtype: '-',
      kind: 'contract',
    },
  ]);
  const text = textTable([r]);
  const lines = text.split('\n');
  const firstPass = lines.findIndex((l) => /\spass(\s|$)/.test(l));

  test('failures come before the first passing row', () => {
    expect(firstPass).toBeGreaterThan(0);
    const failLines = lines.flatMap((l, i) => (/\bFAIL\b/.test(l) ? [i] : []));
    expect(failLines.length).toBeGreaterThanOrEqual(3 + 3); // three cases, three failing op × dtype cells
    for (const i of failLines) expect(i).toBeLessThan(firstPass);
  });

  test("a failing case's row: its id, input shapes, worst errors and reason, in aligned columns", () => {
    const header = lines.find((l) => /\bcase\b.*\binputs\b/.test(l))!;
    expect(cells(header)).toEqual(['result', 'case', 'inputs', 'max abs', 'max rel', 'max ulp', 'reason']);
    const rows = lines.filter((l) => /^\s*FAIL\s/.test(l));
    expect(rows.map((l) => cells(l).slice(0, 6))).toEqual([
      ['FAIL', exp.id, '[31,33]', '2.2e+2', '5.0e-1', '2127857016'],
      [
        'FAIL',
        matmul.id,
        matmul.inputs.map((i) => `[${i.shape.join(',')}]${i.view ? `.${Object.keys(i.view)[0]}` : ''}`).join(', '),
        '2.5e-1',
        '1.0e-3',
        '41',
      ],
      ['FAIL', 'contract/shape-mismatch/add', '-', '-', '-', '-'],
    ]);
    expect(cells(rows[0]!)[6]).toBe('output 0[5]: got 1, want 221 (tolerance abs 0 + rel 4.8e-7)');
    for (const l of rows) expect(starts(l)).toEqual(starts(header));
  });

  test("the op × dtype matrix: failing cells first, every column aligned, a failing cell's numbers apart", () => {
    const header = lines.find((l) => /\bop\b.*\bdtype\b/.test(l))!;
    expect(cells(header)).toEqual(['op', 'dtype', 'result', 'cases', 'max abs', 'max ulp']);
    const at = lines.indexOf(header);
    const rows = lines.slice(at + 1, at + 1 + 6);
    expect(rows.map(cells)).toEqual([
      ['exp', 'float32', 'FAIL', '1', '2.2e+2', '2127857016'],
      ['matmul', 'float32', 'FAIL', '1', '2.5e-1', '41'],
      ['contract', '-', 'FAIL', '1', '0', '0'],
      ['add', 'float32', 'pass', '1', '0', '0'],
      ['neg', 'float32', 'pass', '1', '0', '0'],
      ['sub', 'float32', 'pass', '1', '0', '0'],
    ]);
    for (const l of rows) expect(starts(l)).toEqual(starts(header));
  });

  test('a passing run: the matrix only, in the order of the cases', () => {
    const t = textTable([run([ok('neg/float32/[17]'), ok('add/float32/[17]')])]).split('\n');
    expect(t.filter((l) => /FAIL/.test(l))).toEqual([]);
    expect(t.slice(-2).map(cells)).toEqual([
      ['neg', 'float32', 'pass', '1', '0', '0'],
      ['add', 'float32', 'pass', '1', '0', '0'],
    ]);
  });
});

describe('onnxTextReport', () => {
  const row = (test: string, op: string, status: OnnxTestResult['status'], reason?: string): OnnxTestResult => ({
    test,
    op,
    status,
    dataSets: status === 'passed' ? 1 : 0,
    ...(reason ? { reason } : {}),
    ...(status === 'not-expressible' ? { kind: 'dtype' as const } : {}),
  });
  const results = [
    row('test_abs', 'Abs', 'passed'),
    row('test_add', 'Add', 'failed', 'test_data_set_0 output 0[0]: got 1, expected 2'),
    row('test_add_bcast', 'Add', 'passed'),
    row('test_cast_DOUBLE', 'Cast', 'not-expressible', 'dtype float64'),
    row('test_convtranspose_autopad_same', 'ConvTranspose', 'failed', 'RangeError: out of range'),
    row('test_relu', 'Relu', 'passed'),
    row('test_corrupt', '', 'failed', 'test_corrupt/model.onnx: empty file (0 bytes)'),
  ];
  const r: OnnxNodeTestsResult = {
    backend: 'cpu',
    deviceName: 'a test device',
    runtime: 'Node',
    capabilities: STRICT_CAPABILITIES,
    dir: '/onnx/node',
    results,
    passed: 3,
    failed: 3,
    notExpressible: 1,
  };
  const lines = onnxTextReport([r]).split('\n');
  const firstPass = lines.findIndex((l) => /\spass(\s|$)/.test(l));

  test('failures first, each with its test, op and reason, the reasons aligned', () => {
    const fails = lines.filter((l) => /^\s*FAIL\s/.test(l));
    expect(fails).toHaveLength(3);
    for (const l of fails) expect(lines.indexOf(l)).toBeLessThan(firstPass);
    expect(fails[0]).toMatch(/^ {2}FAIL test_add \(Add\): +test_data_set_0 output 0\[0\]: got 1, expected 2$/);
    expect(fails[1]).toMatch(/^ {2}FAIL test_convtranspose_autopad_same \(ConvTranspose\): RangeError: out of range$/);
    expect(fails[2]).toMatch(/^ {2}FAIL test_corrupt \(\?\): +test_corrupt\/model\.onnx: empty file \(0 bytes\)$/);
    const reasonAt = fails.map((l) => l.indexOf(': ') + 1 + l.slice(l.indexOf(': ') + 1).search(/\S/));
    expect(new Set(reasonAt).size).toBe(1);
  });

  test('the op table: failing ops first, every column aligned', () => {
    const header = lines.find((l) => /\bop\b.*\bresult\b/.test(l))!;
    expect(cells(header)).toEqual(['op', 'result', 'passed', 'failed', 'not expr.']);
    const at = lines.indexOf(header);
    const rows = lines.slice(at + 1, at + 5);
    expect(rows.map(cells)).toEqual([
      ['Add', 'FAIL', '1', '1', '0'],
      ['ConvTranspose', 'FAIL', '0', '1', '0'],
      ['Abs', 'pass', '1', '0', '0'],
      ['Relu', 'pass', '1', '0', '0'],
    ]);
    for (const l of rows) expect(starts(l)).toEqual(starts(header));
  });
});
