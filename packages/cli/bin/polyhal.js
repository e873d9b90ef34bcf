#!/usr/bin/env node
// The `polyhal` command (the main job). It lives outside dist/ so that npm links the command when
// the package is installed, also in a fresh clone of the repository where dist/ is built after install.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/main.js', import.meta.url);
if (!existsSync(entry)) {
  console.error('polyhal: the package is not built (no dist/main.js); in the repository run `npm run build`');
  process.exit(2);
}
await import(entry.href);
