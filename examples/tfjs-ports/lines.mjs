// The line counter behind "PolyHAL ≤ 1.0× tfjs's lines": the lines of a twin's model and training part (between
// its `// port:begin` and `// port:end` markers) that are neither blank nor comments. Both twins are formatted by
// the repository's formatter (biome, 120 columns), so neither is shorter for packing more on a line.
import { readFileSync } from 'node:fs';

/** Non-blank, non-comment lines between the markers of `source`; Error when a marker is missing. */
export function portLines(source, name = 'source') {
  const lines = source.split('\n');
  const begin = lines.findIndex((l) => l.trim() === '// port:begin');
  const end = lines.findIndex((l) => l.trim() === '// port:end');
  if (begin < 0 || end < begin) throw new Error(`${name}: no '// port:begin' … '// port:end' section`);
  let inBlock = false;
  let n = 0;
  for (const raw of lines.slice(begin + 1, end)) {
    const l = raw.trim();
    if (inBlock) {
      if (l.includes('*/')) inBlock = false;
      continue;
    }
    if (l === '' || l.startsWith('//')) continue;
    if (l.startsWith('/*')) {
      inBlock = !l.includes('*/');
      continue;
    }
    n++;
  }
  return n;
}

/** The counts of one example's twins: { tfjs, polyhal, ratio } (ratio = polyhal / tfjs). */
export function countPort(name) {
  const read = (twin) => readFileSync(new URL(`./${name}.${twin}.mjs`, import.meta.url), 'utf8');
  const tfjs = portLines(read('tfjs'), `${name}.tfjs.mjs`);
  const polyhal = portLines(read('polyhal'), `${name}.polyhal.mjs`);
  return { tfjs, polyhal, ratio: polyhal / tfjs };
}
