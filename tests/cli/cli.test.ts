import { describe, expect, test } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../support/cli.js';

// The main job as a user runs it (the built CLI), on short runs.
const run = runCli;

describe('polyhal CLI', () => {
  test.each([
    [['--backend', 'tpu'], /unknown backend 'tpu'; available: auto, all, webgpu, wasm, cpu/],
    [['--epochs', '0'], /--epochs must be a positive integer, got '0'/],
    [['--epochs', '-3'], /--epochs must be a positive integer/],
    [['--batch-size', 'x'], /--batch-size must be a positive integer, got 'x'/],
    [['--model', 'rnn'], /Allowed choices are mlp, cnn, vit/],
    [['--frobnicate'], /unknown option '--frobnicate'/],
    [['--train', '9000', '--test', '2000'], /at most 10000/],
    [['--batch-size', '8001'], /--batch-size \(8001\) must be at most --train \(8000\)/],
    [
      ['--batch-size', '700', '--train', '640', '--test', '100'],
      /--batch-size \(700\) must be at most --train \(640\)/,
    ],
  ])('bad input %j exits 2 with a clear message', (args, message) => {
    const r = run(...(args as string[]));
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  // One number rule for every numeric flag: decimal only (an exponent allowed for --lr); hex, binary, blanks,
  // '', 'Infinity' and a dangling exponent are refused alike. After a short valid run's flags, so that a
  // value wrongly taken trains for a moment and exits 0 instead of 2.
  const short = ['--backend', 'cpu', '--epochs', '1', '--train', '64', '--test', '64', '--batch-size', '64'];
  test.each([
    ['--lr', '0x1', /--lr must be a positive number, got '0x1' \(decimal, e\.g\. 0\.001 or 1e-3\)/],
    ['--lr', '0b1', /--lr must be a positive number, got '0b1'/],
    ['--lr', '1e', /--lr must be a positive number, got '1e'/],
    ['--lr', ' 1', /--lr must be a positive number, got ' 1'/],
    ['--lr', '', /--lr must be a positive number, got ''/],
    ['--lr', 'Infinity', /--lr must be a positive number, got 'Infinity'/],
    ['--epochs', '0x1', /--epochs must be a positive integer, got '0x1' \(decimal digits\)/],
    ['--epochs', ' 1', /--epochs must be a positive integer, got ' 1'/],
    ['--epochs', '1e0', /--epochs must be a positive integer, got '1e0'/],
    ['--seed', '0b1', /--seed must be a non-negative integer, got '0b1'/],
    ['--seed', '', /--seed must be a non-negative integer, got ''/],
    ['--test', '0o7', /--test must be a positive integer, got '0o7'/],
    ['--lr', '-1e-3', /--lr must be a positive number, got '-1e-3'$/m],
  ])('%s %j is refused by the one decimal rule (exit 2)', (flag, value, message) => {
    const r = run(...short, flag, value);
    expect(r.stderr).toMatch(message);
    expect(r.status).toBe(2);
  });

  test('decimal forms are accepted: --lr 1e-3, .001 and 0.001 train alike', () => {
    for (const lr of ['1e-3', '.001', '0.001']) {
      const r = run(...short, '--lr', lr);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/Adam lr 0\.001; seed 0/);
    }
  }, 60_000);

  test('a diverging run (--lr 1e30) stops at the first non-finite loss and exits 1', () => {
    const r = run('--lr', '1e30', '--epochs', '3', '--train', '640', '--test', '100', '--backend', 'cpu');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/error: cpu: loss is (NaN|-?Infinity) at epoch 1, step \d+; training stopped/);
    expect(r.stdout).not.toMatch(/test accuracy:|final loss/);
  }, 60_000);

  test('--backend all stops on a diverging run too (exit 1, not a skipped backend)', () => {
    const r = run('--backend', 'all', '--lr', '1e30', '--epochs', '1', '--train', '640', '--test', '100');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/error: cpu: loss is (NaN|-?Infinity) at epoch 1/);
    expect(r.stdout).not.toMatch(/not run/);
  }, 60_000);

  test('a short MLP run learns real digits and ends with the accuracy line', () => {
    const r = run('--epochs', '2', '--train', '2000', '--test', '500', '--backend', 'cpu');
    expect(r.status).toBe(0);
    const last = r.stdout.trim().split('\n').pop()!;
    expect(last).toMatch(/^test accuracy: 0\.\d{4} \(backend: cpu\)$/);
    expect(Number(/0\.\d{4}/.exec(last)![0])).toBeGreaterThan(0.8);
  }, 120_000);

  test('--json records the run: per-epoch figures that match what it printed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'polyhal-json-'));
    try {
      const file = join(dir, 'run.json');
      const r = run('--epochs', '2', '--train', '640', '--test', '100', '--backend', 'cpu', '--json', file);
      expect(r.status).toBe(0);
      const { runs } = JSON.parse(readFileSync(file, 'utf8'));
      expect(runs).toHaveLength(1);
      const [rec] = runs;
      expect([rec.model, rec.backend, rec.epochs, rec.train, rec.test, rec.batchSize]).toEqual([
        'mlp',
        'cpu',
        2,
        640,
        100,
        64,
      ]);
      expect(r.stdout).toContain(`test accuracy: ${rec.testAccuracy.toFixed(4)} (backend: cpu)`);
      expect(r.stdout).toContain(`peak device memory ${(rec.peakBytes / 2 ** 20).toFixed(1)} MiB`);
      expect(rec.perEpoch.map((e: { epoch: number }) => e.epoch)).toEqual([1, 2]);
      for (const e of rec.perEpoch)
        expect(r.stdout).toContain(
          `epoch ${e.epoch}/2: mean loss ${e.meanLoss.toFixed(4)}, test accuracy ${e.testAccuracy.toFixed(4)}`,
        );
      expect(rec.perEpoch[1].testAccuracy).toBe(rec.testAccuracy);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  test('--json to a path that cannot be written exits 2 before training, leaving nothing behind', () => {
    const dir = mkdtempSync(join(tmpdir(), 'polyhal-json-'));
    try {
      for (const file of [join(dir, 'missing', 'run.json'), dir]) {
        const r = run('--backend', 'cpu', '--json', file);
        expect(r.status).toBe(2);
        expect(r.stderr).toContain(`--json ${file}: cannot be written`);
        expect(r.stdout).not.toContain('epoch 1/');
      }
      expect(existsSync(join(dir, 'missing'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  test('--quantize reports int8 accuracy within half a point of float32 and both speeds (a test set under 256)', () => {
    const r = run('--epochs', '2', '--train', '2000', '--test', '200', '--backend', 'wasm', '--quantize');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const line = /int8 \(2 Linear\/conv layers quantized; .* from 256 training digits\): test accuracy (0\.\d{4}) /;
    const m = new RegExp(`${line.source}\\(float32 (0\\.\\d{4}),`).exec(r.stdout);
    expect(m).not.toBeNull();
    expect(Math.abs(Number(m![1]) - Number(m![2]))).toBeLessThanOrEqual(0.005);
    expect(r.stdout).toMatch(/inference digits\/s, batch 200: float32 \d+, int8 \d+ \([\d.]+×\); batch 1: float32 \d+/);
  }, 120_000);

  test('the Vision Transformer trains on wasm: a short run learns real digits', () => {
    const r = run('--model', 'vit', '--epochs', '3', '--train', '4000', '--test', '500', '--backend', 'wasm');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/model vit; 3 epochs/);
    const last = r.stdout.trim().split('\n').pop()!;
    expect(last).toMatch(/^test accuracy: 0\.\d{4} \(backend: wasm\)$/);
    // far above chance (0.1) after 3 short epochs, 1 of them warm-up, on shifted digits
    expect(Number(/0\.\d{4}/.exec(last)![0])).toBeGreaterThan(0.3);
  }, 120_000);

  test('--backend all trains the Vision Transformer on every backend within the per-step loss tolerance', () => {
    const r = run('--backend', 'all', '--model', 'vit', '--epochs', '1', '--train', '256', '--test', '64');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/model vit; 1 epochs; batch 64; AdamW lr 0.001/);
    for (const name of ['cpu', 'wasm', 'webgpu']) expect(r.stdout).toMatch(new RegExp(`^${name}\\s+`, 'm'));
    expect(r.stdout).toMatch(/per-step losses agree within 0.05/);
  }, 120_000);

  test('--profile prints one training step op by op on each backend and exits without training', () => {
    const r = run('--profile', '--backend', 'all', '--train', '640', '--test', '100');
    expect(r.status).toBe(0);
    for (const name of ['cpu', 'wasm', 'webgpu']) {
      const part = r.stdout.split(/\nprofile of one training step: /).find((s) => s.startsWith(`mlp on ${name} `));
      expect(part).toBeDefined();
      expect(part).toMatch(
        /unprofiled step: [\d.]+ ms \(median of 3, after a warm-up step\); profiled step: [\d.]+ ms/,
      );
      expect(part).toMatch(/^op\s+calls\s+inner calls\s+total ms\s+share$/m);
      expect(part).toMatch(/^matmul\s+5\s+0\s+[\d.]+\s+[\d.]+%$/m); // forward 2, backward 3
      expect(part).toMatch(/^total\s+\d+\s+\d+\s+[\d.]+\s+100\.0%$/m);
      // webgpu is asynchronous: its calls are replayed one by one between synchronize() calls, and it says so
      expect(/replayed alone between two synchronize\(\) calls/.test(part!)).toBe(name === 'webgpu');
    }
    expect(r.stdout).not.toMatch(/epoch 1\/|test accuracy/);
  }, 120_000);

  test('--backend all trains the same model on every backend and prints the comparison table', () => {
    const r = run('--backend', 'all', '--epochs', '1', '--train', '640', '--test', '200');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(
      /backend\s+device\s+wall s\s+samples\/s\s+final loss\s+test acc\s+peak MiB\s+max \|Δloss\| vs cpu/,
    );
    expect(r.stdout).toMatch(/^cpu\s+/m);
    expect(r.stdout).toMatch(/^wasm\s+/m);
    expect(r.stdout).toMatch(/^webgpu\s+/m);
    expect(r.stdout).toMatch(/per-step losses agree within 0.05/);
  }, 120_000);
});
