// Builds the demo page: bundles demo/main.ts with the workspace packages for the browser (esbuild) and
// writes a small embedded subset of the mnist package's digits (600 train, 200 test) to demo/dist.
import { build } from 'esbuild';
import { mkdirSync, writeFileSync, copyFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = dirname(fileURLToPath(import.meta.url));
const out = join(dir, 'dist');
mkdirSync(out, { recursive: true });
const require = createRequire(import.meta.url);
const take = (count, offset) => {
  const x = [];
  const y = [];
  for (let d = 0; d < 10; d++) {
    const raw = require(`mnist/src/digits/${d}.json`).data;
    for (let i = offset; i < offset + count / 10; i++) {
      x.push(...raw.slice(i * 784, (i + 1) * 784).map((v) => Math.round(v * 255)));
      y.push(d);
    }
  }
  return { x, y };
};
writeFileSync(join(out, 'mnist-subset.json'), JSON.stringify({ train: take(600, 0), test: take(200, 60) }));
// The page and its Worker (wasm with threads: worker.ts: conformance and ViT training).
for (const name of ['main', 'worker']) {
  await build({
    entryPoints: [join(dir, `${name}.ts`)],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    conditions: ['polyhal-source'],
    outfile: join(out, `${name}.js`),
    logLevel: 'warning',
    external: ['node:*', 'webgpu'],
  });
}
copyFileSync(join(dir, 'index.html'), join(out, 'index.html'));
console.log('built demo/dist');
