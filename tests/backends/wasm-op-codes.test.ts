// The wasm kernels' op codes come from the op table by name (backends/wasm/scripts/op-codes.mjs writes
// assembly/generated/op-codes.ts for the kernels and src/generated/op-codes.ts for the dispatchers): both
// files are up to date, every table op has one code, the same on both sides, and no kernel numbers one itself.
import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BINARY_OPS, REDUCE_OPS, SCATTER_REDUCTIONS, UNARY_OPS } from '@polyhal/hal';
import { BINARY_CODES, REDUCE_CODES, SCATTER_CODES, UNARY_CODES } from '../../backends/wasm/src/generated/op-codes.js';

const wasmDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'backends', 'wasm');
const assembly = join(wasmDir, 'assembly');

/** The AssemblyScript constants of the generated file: name → code. */
function ascConstants(): Map<string, number> {
  const text = readFileSync(join(assembly, 'generated', 'op-codes.ts'), 'utf8');
  const found = [...text.matchAll(/^export const ([A-Z][A-Z0-9_]*): i32 = (\d+);$/gm)];
  return new Map(found.map((m) => [m[1]!, Number(m[2])]));
}

// Independent of the generator: camelCase op names as the kernels spell them (bitShiftLeft → BIT_SHIFT_LEFT).
const upperSnake = (op: string): string => op.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

const FAMILIES = [
  { name: 'unary', ops: UNARY_OPS, codes: UNARY_CODES as Record<string, number>, prefix: '' },
  { name: 'binary', ops: BINARY_OPS, codes: BINARY_CODES as Record<string, number>, prefix: '' },
  { name: 'reduce', ops: REDUCE_OPS, codes: REDUCE_CODES as Record<string, number>, prefix: '' },
  { name: 'scatter', ops: SCATTER_REDUCTIONS, codes: SCATTER_CODES as Record<string, number>, prefix: 'SCATTER_' },
] as const;

describe('wasm op codes', () => {
  test('the generated files are up to date with the op table (scripts/op-codes.mjs --check)', () => {
    const r = spawnSync(process.execPath, ['scripts/op-codes.mjs', '--check'], { cwd: wasmDir, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  test.each(FAMILIES)('every $name op has one code, the same for the kernels and the dispatchers', (f) => {
    const asc = ascConstants();
    expect(Object.keys(f.codes).sort()).toEqual([...f.ops].sort());
    for (const op of f.ops) {
      const code = f.codes[op]!;
      expect(Number.isInteger(code) && code >= 0).toBe(true);
      expect([op, asc.get(f.prefix + upperSnake(op))]).toEqual([op, code]);
    }
    expect(new Set(Object.values(f.codes)).size).toBe(f.ops.length); // one op per code within a kernel family
  });

  test('the generated file holds only table codes, and no kernel numbers an op itself', () => {
    const asc = ascConstants();
    const expected = FAMILIES.reduce((n, f) => n + f.ops.length, 0);
    expect(asc.size).toBe(expected);
    const handWritten: string[] = [];
    for (const file of readdirSync(assembly).filter((n) => n.endsWith('.ts'))) {
      const text = readFileSync(join(assembly, file), 'utf8');
      for (const m of text.matchAll(/\b([A-Z][A-Z0-9_]*)(?:\s*:\s*i32)?\s*=\s*\d+\s*[,;]/g))
        if (asc.has(m[1]!)) handWritten.push(`${file}: ${m[0]}`);
    }
    expect(handWritten).toEqual([]);
  });
});
