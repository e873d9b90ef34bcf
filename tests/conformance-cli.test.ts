import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { selectCases, selectContractCases } from '@polyhal/conformance';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
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
    const r = cli('--backend', 'tests/fixtures/sloppy-exp-backend.mjs', '--filter', 'exp/');
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/exp\s+float32\s+FAIL/);
    expect(r.stdout).toMatch(/FAIL exp\/float32\/\[17\]: output 0\[\d+\]: got/);
  });

  test('an unknown backend is a usage error (exit 2)', () => {
    const r = cli('--backend', 'tpu');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/unknown backend 'tpu'/);
  });

  test.each([
    [['--seed', 'abc'], /--seed must be a non-negative integer, got 'abc'/],
    [['--timeout', '0'], /--timeout must be a positive integer, got '0'/],
    [['--timeout', 'soon'], /--timeout must be a positive integer, got 'soon'/],
    [['--backend', 'cpu', '--filter', 'nosuchop'], /--filter 'nosuchop' matches no case/],
    [
      ['--backend', 'tests/fixtures/not-a-backend.mjs', '--filter', 'add/'],
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
      const r = cli('--backend', 'tests/fixtures/hanging-factory-backend.mjs', '--timeout', '300');
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
      `tests/fixtures/${fixture}`,
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
      expect(r.stdout).toMatch(/FAIL contract\/shape-mismatch\/add: threw TypeError: readStorage: the device was lost/);
      expect(r.json[0].results).toHaveLength(allCases);
      for (const c of r.json[0].results)
        expect(c).toMatchObject({
          pass: false,
          message: expect.stringContaining('TypeError: readStorage: the device was lost'),
        });
    },
  );

  test('the reference backend, loaded as a module path, passes every case (strict class)', () => {
    const r = report('../../backends/reference/dist/index.js');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^reference — .*: ${allCases} passed, 0 failed`, 'm'));
    expect(r.stdout).toMatch(/tolerance class: ieee-correctly-rounded \(declared by the backend\)/);
  });

  test('a read() that never settles fails the case by name after --timeout and stops the run (exit 1)', () => {
    const r = cli('--backend', 'tests/fixtures/hanging-read-backend.mjs', '--filter', 'exp/', '--timeout', '300');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/case exp\/float32\/\S+ did not settle within 300 ms; the run stopped there/);
    expect(r.stdout).toMatch(/FAIL exp\/float32\/\S+: timed out/);
    expect(r.stdout).toMatch(/0 passed, 1 failed/);
  });
});
