#!/usr/bin/env node
// The `polyhal-conformance` command. It lives outside dist/ so that npm links the command when the
// package is installed, also in a fresh clone of the repository where dist/ is built after install.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/bin.js', import.meta.url);
if (!existsSync(entry)) {
  console.error(
    'polyhal-conformance: the package is not built (no dist/bin.js); in the repository run `npm run build`',
  );
  process.exit(2);
}
await import(entry.href);
