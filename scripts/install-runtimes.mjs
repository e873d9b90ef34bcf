// Installs the extra runtimes the tests use — Deno, Bun and bun-webgpu, binaries shipped inside their
// npm packages — into .tools/ (git-ignored), once. They stay out of package.json because the npm
// registry mirror used here lacks some of their other-platform optional packages, which would break
// `npm ci` of the lock file.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const TOOLS = join(process.cwd(), '.tools');
const wanted = ['deno@2.9.6', 'bun@1.4.4', 'bun-webgpu@0.1.7'];
const bins = ['deno', 'bun'].map((b) => join(TOOLS, 'node_modules', '.bin', b));
if (bins.every(existsSync) && existsSync(join(TOOLS, 'node_modules', 'bun-webgpu'))) {
  console.log('runtimes present in .tools/');
} else {
  console.log(`installing ${wanted.join(', ')} into .tools/`);
  execFileSync('npm', ['install', '--prefix', TOOLS, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--loglevel=error', ...wanted], { stdio: 'inherit' });
}
