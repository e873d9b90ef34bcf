import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { selectCases, selectContractCases } from '@polyhal/conformance';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cli = (...args: string[]) =>
  spawnSync(process.execPath, [join(root, 'packages/conformance/dist/bin.js'), ...args], {
    cwd: root,
    encoding: 'utf8',
  });

describe('polyhal-conformance CLI', () => {
  test('passes our cpu backend and writes JSON and HTML reports', () => {
    const dir = mkdtempSync(join(tmpdir(), 'conf-'));
    const r = cli('--backend', 'cpu', '--filter', 'add/', '--json', join(dir, 'r.json'), '--html', join(dir, 'r.html'));
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^cpu — JavaScript on the host CPU .*Node \d+/m);
    expect(r.stdout).toMatch(/add\s+float32\s+pass/);
    const json = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8'));
    expect(json[0].backend).toBe('cpu');
    expect(json[0].failed).toBe(0);
    expect(existsSync(join(dir, 'r.html'))).toBe(true);
  });

  test('a third-party backend module with a wrong exp fails with the case named, exit code 1', () => {
    const r = cli('--backend', 'tests/support/fixtures/sloppy-exp-backend.mjs', '--filter', 'exp/');
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/exp\s+float32\s+FAIL/);
    expect(r.stdout).toMatch(/^ {2}FAIL +exp\/float32\/\[17\] +\[17\] .* output 0\[\d+\]: got/m);
  });

  test(
    'a failing run prints its failures first, each case with its id, input shapes and errors, in aligned ' + 'columns',
    () => {
      const r = cli('--backend', 'tests/support/fixtures/sloppy-exp-backend.mjs', '--filter', 'exp');
      expect(r.status).toBe(1);
      const lines = r.stdout.split('\n');
      const firstPass = lines.findIndex((l) => /\spass(\s|$)/.test(l));
      const failing = lines.filter((l) => /\bFAIL\b/.test(l));
      expect(failing.length).toBeGreaterThan(10);
      expect(firstPass).toBeGreaterThan(lines.indexOf(failing.at(-1)!));
      // cells start where the header's do; a table's cells never hold two spaces in a row
      const starts = (l: string) => [...l.matchAll(/(?<=^ *| {2})(?=\S)/g)].map((m) => m.index);
      const cells = (l: string) => l.trim().split(/ {2,}/);
      const caseHeader = lines.find((l) => /^ {2}result +case +inputs +max abs +max rel +max ulp +reason$/.test(l))!;
      const caseRows = lines.filter((l) => /^ {2}FAIL /.test(l));
      expect(caseRows.length).toBe(Number(/(\d+) failed/.exec(lines[0]!)![1]));
      for (const l of caseRows) {
        expect(starts(l)).toEqual(starts(caseHeader));
        const [, id, shapes, abs, rel, ulp, reason] = cells(l);
        expect(id).toMatch(/^(exp|logsumexp)\/float(16|32|64)\//);
        expect(shapes).toMatch(/^\[[\d,]*\](\.\w+)?$/);
        expect(Number(abs)).toBeGreaterThan(0);
        expect(Number(rel)).toBeGreaterThan(0);
        expect(ulp).toMatch(/^(\d+|-)$/);
        expect(reason).toMatch(/^output 0\[\d+\]: got /);
      }
      const matrixHeader = lines.find((l) => /^ {2}op +dtype +result +cases +max abs +max ulp$/.test(l))!;
      const matrixRows = lines.slice(lines.indexOf(matrixHeader) + 1).filter((l) => l !== '');
      expect(matrixRows.length).toBeGreaterThan(20);
      for (const l of matrixRows) {
        expect(starts(l)).toEqual(starts(matrixHeader));
        const [, , result, count, abs, ulp] = cells(l);
        expect(result).toMatch(/^(pass|FAIL|n\/a)$/);
        // every number its own cell: a wide max abs and max ulp no longer run together
        for (const n of [count, abs, ulp]) expect(Number.isFinite(Number(n))).toBe(true);
      }
    },
  );

  test('an unknown backend is a usage error (exit 2)', () => {
    const r = cli('--backend', 'tpu');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/unknown backend 'tpu'/);
  });

  test.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])(
    '--backend %s (an Object.prototype member) is an unknown backend (exit 2), never a lookup on the prototype',
    (name) => {
      const r = cli('--backend', name, '--filter', 'add/float32/[17]');
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(`unknown backend '${name}'`);
      expect(r.stdout).toBe('');
    },
  );

  // Every number is decimal, in range; Node clamps a timer past 2^31 − 1 ms to 1 ms, so a larger
  // --timeout would time every case out. The backend and filter make a run short where one starts.
  const TIMEOUT = /--timeout must be a decimal integer from 1 to 2147483647 \(milliseconds\), got '/;
  const SEED = /--seed must be a decimal integer from 0 to 4294967295, got '/;
  test.each([
    [['--timeout', '2147483648'], TIMEOUT],
    [['--timeout', '99999999999999999999'], TIMEOUT],
    [['--timeout', '0x10'], TIMEOUT],
    [['--timeout', ''], TIMEOUT],
    [['--timeout', '1e'], TIMEOUT],
    [['--timeout', '1e3'], TIMEOUT],
    [['--timeout=-5'], TIMEOUT],
    [['--timeout', 'NaN'], TIMEOUT],
    [['--timeout', '0'], TIMEOUT],
    [['--timeout', '1.5'], TIMEOUT],
    [['--timeout', 'soon'], TIMEOUT],
    [['--seed', 'abc'], SEED],
    [['--seed', '0x10'], SEED],
    [['--seed', ''], SEED],
    [['--seed=-1'], SEED],
    [['--seed', '4294967296'], SEED],
  ])('a malformed or out-of-range number %j exits 2 before any run', (args, message) => {
    const r = cli(...args, '--backend', 'cpu', '--filter', 'add/float32/[17]');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
  });

  test('the largest --timeout and --seed are taken', () => {
    const r = cli(
      '--backend',
      'cpu',
      '--filter',
      'add/float32/[17]',
      '--timeout',
      '2147483647',
      '--seed',
      '4294967295',
    );
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  test.each([
    [['--backend', 'cpu', '--filter', 'nosuchop'], /--filter 'nosuchop' matches no case/],
    [
      ['--backend', 'tests/support/fixtures/not-a-backend.mjs', '--filter', 'add/'],
      /not-a-backend\.mjs: the factory returned an object that is not a ComputeBackend: no read, free, dispose/,
    ],
  ])('bad usage %j exits 2 with a clear message', (args, message) => {
    const r = cli(...(args as string[]));
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/is not a function/);
  });

  test(
    'a factory that never settles fails the run after --timeout (exit 2, backend named), and the ' +
      'report still prints',
    () => {
      const t0 = Date.now();
      const r = cli('--backend', 'tests/support/fixtures/hanging-factory-backend.mjs', '--timeout', '300');
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/hanging-factory-backend\.mjs: the backend factory did not settle within 300 ms/);
      expect(r.stdout).toMatch(
        new RegExp(
          'FAIL every case \\(\\d+\\), not run: the backend did not start: ' +
            'ConformanceTimeoutError: the backend factory did not settle within 300 ms',
        ),
      );
      expect(Date.now() - t0).toBeLessThan(20_000);
    },
  );

  // The report always prints: a backend that does not start, or fails every case, still gets every
  // case's row (JSON) and the reason (text), and the run exits 1.
  const allCases = selectCases().length + selectContractCases().length;
  const report = (fixture: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'conf-'));
    const r = cli(
      '--backend',
      `tests/support/fixtures/${fixture}`,
      '--json',
      join(dir, 'r.json'),
      '--html',
      join(dir, 'r.html'),
    );
    const json = existsSync(join(dir, 'r.json')) ? JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8')) : null;
    return { ...r, json, html: existsSync(join(dir, 'r.html')) ? readFileSync(join(dir, 'r.html'), 'utf8') : null };
  };

  test('a JS backend missing two hooks: exit 1, the report names both hooks, every case not run', () => {
    const r = report('missing-hooks-backend.mjs');
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(new RegExp(`did not start, .*: 0 passed, ${allCases} failed`));
    expect(r.stdout).toMatch(
      new RegExp(
        'FAIL every case \\(\\d+\\), not run: the backend did not start: ' +
          'BackendHookError: MissingHooksBackend does not implement 2 required hooks',
      ),
    );
    expect(r.stdout).toContain('createStorage(buffer: DeviceBuffer, dtype: DType): void');
    expect(r.stdout).toContain('matmulKernel(a: NDArray, b: NDArray, out: DeviceBuffer): void');
    expect(r.stderr).toMatch(/missing-hooks-backend\.mjs: MissingHooksBackend does not implement/);
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/is not a function/);
    expect(r.json[0].results).toHaveLength(allCases);
    expect(r.json[0].startError).toMatch(/^BackendHookError: /);
    for (const c of r.json[0].results)
      expect(c).toMatchObject({
        pass: false,
        message: expect.stringMatching(
          /^not run: the backend did not start: BackendHookError: .*createStorage.*matmulKernel/,
        ),
      });
    expect(r.html).toContain('the backend did not start: BackendHookError');
  });

  test(
    'a hook that throws a TypeError on every case: exit 1, every case (contract cases too) failed ' + 'with the reason',
    () => {
      const r = report('throwing-read-backend.mjs');
      expect(r.status).toBe(1);
      expect(r.stdout).toMatch(new RegExp(`: 0 passed, ${allCases} failed`));
      expect(r.stdout).toMatch(
        /FAIL +contract\/shape-mismatch\/add +- +- +- +- +threw TypeError: readStorage: the device was lost/,
      );
      expect(r.json[0].results).toHaveLength(allCases);
      for (const c of r.json[0].results)
        expect(c).toMatchObject({
          pass: false,
          message: expect.stringContaining('TypeError: readStorage: the device was lost'),
        });
    },
  );

  test('the reference backend, loaded as a module path, passes every case (strict class)', () => {
    const r = report('../../../backends/reference/dist/index.js');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^reference — .*: ${allCases} passed, 0 failed`, 'm'));
    expect(r.stdout).toMatch(/tolerance class: ieee-correctly-rounded \(declared by the backend\)/);
  });

  test('a read() that never settles fails the case by name after --timeout and stops the run (exit 1)', () => {
    const r = cli(
      '--backend',
      'tests/support/fixtures/hanging-read-backend.mjs',
      '--filter',
      'exp/',
      '--timeout',
      '300',
    );
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/case exp\/float32\/\S+ did not settle within 300 ms; the run stopped there/);
    expect(r.stdout).toMatch(/FAIL +exp\/float32\/\S+ .* timed out/);
    expect(r.stdout).toMatch(/0 passed, 1 failed/);
  });

  // --json and --html are checked before any backend is created: a bad path is a usage error that names the
  // flag and the path, the run does not start (no report), and the check leaves no file behind.
  describe('report paths', () => {
    const run = (...args: string[]) =>
      cli('--backend', 'tests/support/fixtures/sloppy-exp-backend.mjs', '--filter', 'exp/float32/[17]', ...args);
    test.each([
      ['--json', 'missing/r.json', /--json .*missing\/r\.json: the directory .*missing does not exist/],
      ['--html', 'missing/sub/r.html', /--html .*missing\/sub\/r\.html: the directory .*missing\/sub does not exist/],
      ['--json', 'a-file/r.json', /--json .*a-file\/r\.json: .*a-file is not a directory/],
      ['--json', '.', /--json .*: is a directory, not a file/],
      ['--html', '/sys/r.html', /--html \/sys\/r\.html: cannot be written \((EACCES|EROFS|EPERM)/],
    ])('%s %s is a usage error (exit 2) before the run, and leaves no file', (flag, path, message) => {
      const dir = mkdtempSync(join(tmpdir(), 'conf-'));
      try {
        writeFileSync(join(dir, 'a-file'), '');
        const target = path.startsWith('/') ? path : join(dir, path);
        // the other report's path is good: the failed check of one must not leave the other behind
        const other = flag === '--json' ? ['--html', join(dir, 'r.html')] : ['--json', join(dir, 'r.json')];
        const r = run(flag, target, ...other);
        expect(r.status).toBe(2);
        expect(r.stderr).toMatch(message);
        expect(r.stderr).not.toMatch(/\n\s+at /); // no stack
        expect(r.stdout).toBe(''); // nothing ran
        expect(readdirSync(dir)).toEqual(['a-file']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    test('an existing report file is kept as is until the run ends, then overwritten', () => {
      const dir = mkdtempSync(join(tmpdir(), 'conf-'));
      try {
        writeFileSync(join(dir, 'r.json'), 'old');
        const r = run('--json', join(dir, 'r.json'));
        expect(r.status).toBe(1);
        expect(JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8'))[0].failed).toBe(1);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    test('a write that fails at the end (disk full) comes after the text report, with a clear message, exit 2', () => {
      if (!existsSync('/dev/full')) return;
      const dir = mkdtempSync(join(tmpdir(), 'conf-'));
      try {
        const r = run('--json', '/dev/full', '--html', join(dir, 'r.html'));
        expect(r.status).toBe(2);
        expect(r.stdout).toMatch(/0 passed, 1 failed/);
        expect(r.stderr).toMatch(/error: --json \/dev\/full: the report could not be written \(ENOSPC: no space left/);
        expect(r.stderr).not.toMatch(/\n\s+at /);
        // the other report is still written
        expect(readFileSync(join(dir, 'r.html'), 'utf8')).toContain('exp/float32/[17]');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  // A test directory whose files are empty, random or cut short: each test fails by the file's name and
  // what is wrong (exit 1), never "not expressible". Copies of ONNX's test_add (Debian's libonnx-testdata).
  const ONNX = process.env['POLYHAL_ONNX_NODE_TESTS'] ?? '/usr/share/libonnx-testdata/data/node';
  test('corrupt ONNX model and tensor files are failures that name the file (exit 1)', () => {
    if (!existsSync(join(ONNX, 'test_add', 'model.onnx'))) {
      console.warn(`ONNX node tests not found at ${ONNX}: skipped`);
      return;
    }
    const tmp = mkdtempSync(join(tmpdir(), 'onnx-'));
    try {
      let x = 12345;
      const random = (n: number) =>
        Uint8Array.from({ length: n }, () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 24) & 255);
      const damage: [string, string, (p: string) => void, RegExp][] = [
        ['empty_model', 'model.onnx', (p) => truncateSync(p, 0), /model\.onnx: empty file \(0 bytes\)/],
        ['random_model', 'model.onnx', (p) => writeFileSync(p, random(129)), /model\.onnx: not an ONNX ModelProto/],
        ['cut_model', 'model.onnx', (p) => truncateSync(p, 100), /model\.onnx: not an ONNX ModelProto: .*past the end/],
        ['empty_input', 'test_data_set_0/input_0.pb', (p) => truncateSync(p, 0), /input_0\.pb: empty file/],
        [
          'random_input',
          'test_data_set_0/input_1.pb',
          (p) => writeFileSync(p, random(254)),
          /input_1\.pb: not an ONNX TensorProto/,
        ],
        [
          'cut_output',
          'test_data_set_0/output_0.pb',
          (p) => truncateSync(p, 200),
          /output_0\.pb: not an ONNX TensorProto: .*past the end/,
        ],
      ];
      for (const [name, file, damageFile] of damage) {
        cpSync(join(ONNX, 'test_add'), join(tmp, `test_add_${name}`), { recursive: true });
        damageFile(join(tmp, `test_add_${name}`, file));
      }
      const r = cli('--backend', 'cpu', '--onnx-node-tests', tmp);
      expect(r.status).toBe(1);
      expect(r.stdout).toMatch(/6 tests: 6 expressible — 0 passed, 6 failed; 0 not expressible/);
      for (const [name, file, , message] of damage) {
        const line = r.stdout.split('\n').find((l) => l.includes(`FAIL test_add_${name} `));
        expect(line).toContain(`test_add_${name}/${file}`);
        expect(line).toMatch(message);
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
