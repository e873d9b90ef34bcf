// polyhal --amp: the main job trained with autocast('float16') and a GradScaler. A tiny MLP run on cpu ends
// within 2 points of the same run in float32 (float16 products round each logit and gradient by ≤ 2^-11; on
// 2,000 digits over 2 epochs the two runs measured the same accuracy, 0.8490). Its --json records say amp; on a
// backend that keeps float16 in float32 storage (cpu, wasm) the run says that float16 is emulated there.
import { expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_BACKENDS, requiredBackends } from '../support/backends.js';
import { runCli } from '../support/cli.js';

const run = runCli;
const accuracy = (stdout: string): number =>
  Number(/test accuracy: (0\.\d{4})/.exec(stdout.trim().split('\n').pop()!)![1]);

test('--amp trains the MLP in mixed precision to within 2 points of float32; --json records amp', () => {
  const dir = mkdtempSync(join(tmpdir(), 'polyhal-amp-'));
  try {
    const args = ['--epochs', '1', '--train', '1000', '--test', '300', '--backend', 'cpu'];
    const amp = run(...args, '--amp', '--json', join(dir, 'amp.json'));
    expect(amp.status).toBe(0);
    expect(amp.stdout).toContain('mixed precision (float16 autocast + GradScaler)');
    // cpu keeps float16 in float32 storage: the run says that float16 is emulated
    expect(amp.stdout).toContain('cpu: float16 is emulated here (stored as float32, each result rounded to float16)');
    const f32 = run(...args, '--json', join(dir, 'f32.json'));
    expect(f32.status).toBe(0);
    expect(f32.stdout).not.toContain('mixed precision');
    expect(f32.stdout).not.toContain('emulated');
    expect(accuracy(amp.stdout)).toBeGreaterThan(0.6);
    expect(Math.abs(accuracy(amp.stdout) - accuracy(f32.stdout))).toBeLessThanOrEqual(0.02);
    const record = (name: string) => JSON.parse(readFileSync(join(dir, name), 'utf8')).runs[0];
    expect([record('amp.json').amp, record('f32.json').amp]).toEqual([true, false]);
    expect(record('amp.json').testAccuracy.toFixed(4)).toBe(accuracy(amp.stdout).toFixed(4));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);

test('float16Emulation: cpu and wasm emulate float16 (float32 storage), webgpu stores binary16', async () => {
  const { float16Emulation } = await import('../../packages/cli/src/train.js');
  for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
    const be = await factory().catch((e: Error) => {
      if (requiredBackends().includes(name) || e.name !== 'BackendUnavailableError') throw e;
      return null;
    });
    if (!be) continue;
    try {
      // the storage, measured: bytes of a live float16 array of 1,024 elements
      const before = be.memoryStats().liveBytes;
      const a = be.full([1024], 1, 'float16');
      const packed = be.memoryStats().liveBytes - before === 2048;
      be.free(a);
      const note = float16Emulation(be);
      expect([name, packed ? null : note?.startsWith(`${name}: float16 is emulated here`)]).toEqual([
        name,
        packed ? null : true,
      ]);
      if (packed)
        expect([name, note === null || note.includes('float16 arithmetic is emulated')]).toEqual([name, true]);
    } finally {
      be.dispose();
    }
  }
}, 60_000);
