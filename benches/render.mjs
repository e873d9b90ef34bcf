// Regenerates BENCH.md and the SVG charts from a bench.json: node benches/render.mjs benches/results/h200
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { markdown, svg } from './report.mjs';

const dir = process.argv[2] ?? 'benches/results';
const result = JSON.parse(readFileSync(join(dir, 'bench.json'), 'utf8'));
writeFileSync(join(dir, 'BENCH.md'), markdown(result));
for (const s of [...new Set(result.rows.map((r) => r.suite))]) {
  const chart = svg(
    s,
    result.rows.filter((r) => r.suite === s && r.peerMedianMs !== null),
  );
  if (chart) writeFileSync(join(dir, `${s.replace(/[^A-Za-z0-9]+/g, '-').replace(/-+$/, '')}.svg`), chart);
}
console.log(`rendered ${dir}`);
