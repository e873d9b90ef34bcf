import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = (...args: string[]) => spawnSync(process.execPath, [join(root, 'packages/conformance/dist/bin.js'), ...args], { cwd: root, encoding: 'utf8' });

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
    [['--backend', 'tests/fixtures/not-a-backend.mjs', '--filter', 'add/'], /not-a-backend\.mjs: the factory returned an object that is not a ComputeBackend: no read, free, dispose/],
  ])('bad usage %j exits 2 with a clear message', (args, message) => {
    const r = cli(...(args as string[]));
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/is not a function/);
  });

  test('a factory that never settles fails the run after --timeout (exit 2, backend named)', () => {
    const t0 = Date.now();
    const r = cli('--backend', 'tests/fixtures/hanging-factory-backend.mjs', '--timeout', '300');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/hanging-factory-backend\.mjs: the backend factory did not settle within 300 ms/);
    expect(Date.now() - t0).toBeLessThan(20_000);
  });

  test('a read() that never settles fails the case by name after --timeout and stops the run (exit 1)', () => {
    const r = cli('--backend', 'tests/fixtures/hanging-read-backend.mjs', '--filter', 'exp/', '--timeout', '300');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/case exp\/float32\/\S+ did not settle within 300 ms; the run stopped there/);
    expect(r.stdout).toMatch(/FAIL exp\/float32\/\S+: timed out/);
    expect(r.stdout).toMatch(/0 passed, 1 failed/);
  });
});
