// Shared rollup setup: each package builds src/index.ts (and any extra entries) to ESM (.js), CJS (.cjs)
// and bundled type declarations (.d.ts, .d.cts). Dependencies stay external.
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import esbuild from 'rollup-plugin-esbuild';
import { dts } from 'rollup-plugin-dts';

export function packageConfig(metaUrl, entries = { index: 'src/index.ts' }) {
  const dir = dirname(fileURLToPath(metaUrl));
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const deps = [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})];
  const external = (id) =>
    builtinModules.includes(id) || id.startsWith('node:') || deps.some((d) => id === d || id.startsWith(`${d}/`));
  const input = Object.fromEntries(Object.entries(entries).map(([k, v]) => [k, join(dir, v)]));
  return [
    {
      input,
      external,
      plugins: [esbuild({ target: 'es2022', tsconfig: join(dir, 'tsconfig.json') })],
      output: [
        {
          dir: join(dir, 'dist'),
          format: 'es',
          entryFileNames: '[name].js',
          chunkFileNames: 'chunks/[name]-[hash].js',
          sourcemap: true,
        },
        {
          dir: join(dir, 'dist'),
          format: 'cjs',
          entryFileNames: '[name].cjs',
          chunkFileNames: 'chunks/[name]-[hash].cjs',
          sourcemap: true,
          exports: 'named',
        },
      ],
    },
    {
      input,
      external,
      plugins: [dts({ tsconfig: join(dir, 'tsconfig.json') })],
      output: [
        { dir: join(dir, 'dist'), format: 'es', entryFileNames: '[name].d.ts' },
        { dir: join(dir, 'dist'), format: 'es', entryFileNames: '[name].d.cts' },
      ],
    },
  ];
}
