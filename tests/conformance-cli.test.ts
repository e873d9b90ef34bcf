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
});
