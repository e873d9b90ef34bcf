// polyhal --amp: the main job trained with autocast('float16') and a GradScaler. A tiny MLP run on cpu ends
// within 2 points of the same run in float32 (float16 products round each logit and gradient by ≤ 2^-11; on
// 2,000 digits over 2 epochs the two runs measured the same accuracy, 0.8490).
import { expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const run = (...args: string[]) =>
  spawnSync(process.execPath, [join(root, 'packages/cli/dist/main.js'), ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, POLYHAL_BACKEND: '' },
  });
const accuracy = (stdout: string): number =>
  Number(/test accuracy: (0\.\d{4})/.exec(stdout.trim().split('\n').pop()!)![1]);

test('--amp trains the MLP in mixed precision to within 2 points of float32', () => {
  const args = ['--epochs', '1', '--train', '1000', '--test', '300', '--backend', 'cpu'];
  const amp = run(...args, '--amp');
  expect(amp.status).toBe(0);
  expect(amp.stdout).toContain('mixed precision (float16 autocast + GradScaler)');
  const f32 = run(...args);
  expect(f32.status).toBe(0);
  expect(f32.stdout).not.toContain('mixed precision');
  expect(accuracy(amp.stdout)).toBeGreaterThan(0.6);
  expect(Math.abs(accuracy(amp.stdout) - accuracy(f32.stdout))).toBeLessThanOrEqual(0.02);
}, 120_000);
