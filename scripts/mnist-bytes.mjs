#!/usr/bin/env node
/**
 * Writes the `mnist` package's 10,000 digits as one compact file, for machines without the package (the
 * real-GPU machine receives at most 64 MiB): 10 little-endian uint32 counts (images of digit 0 … 9), then
 * one byte k per pixel, digit 0's images first. Every pixel of the package is k/255 rounded to three
 * decimals, so `Number((k / 255).toFixed(3))` gives back its exact value (checked here while writing).
 *   node scripts/mnist-bytes.mjs OUT_FILE
 */
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const out = process.argv[2];
if (!out) {
  console.error('usage: node scripts/mnist-bytes.mjs OUT_FILE');
  process.exit(2);
}
const require = createRequire(import.meta.url);
const digits = Array.from({ length: 10 }, (_, d) => require(`mnist/src/digits/${d}.json`).data);
const counts = new Uint32Array(digits.map((raw) => Math.floor(raw.length / 784)));
const pixels = new Uint8Array(counts.reduce((s, c) => s + c * 784, 0));
let at = 0;
digits.forEach((raw, d) => {
  for (let i = 0; i < counts[d] * 784; i++) {
    const k = Math.round(raw[i] * 255);
    if (Number((k / 255).toFixed(3)) !== raw[i]) throw new Error(`digit ${d} pixel ${i}: ${raw[i]} is not k/255`);
    pixels[at++] = k;
  }
});
writeFileSync(out, Buffer.concat([Buffer.from(counts.buffer), Buffer.from(pixels.buffer)]));
console.log(`${out}: ${counts.reduce((s, c) => s + c, 0)} digits, ${pixels.length + 40} bytes`);
