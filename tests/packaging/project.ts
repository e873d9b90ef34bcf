/**
 * (An ES module, like the whole folder: its package.json says "type": "module".)
 * Builds the packaging test's consumer project: `npm pack` every publishable workspace, then an empty
 * project in the OS temp folder that installs those tarballs with `npm ci --offline` from a lockfile
 * written here (lockfileVersion 3): the tarballs as `file:` entries, and every third-party package in
 * the closure of their dependencies copied from the repository's own package-lock.json, so npm takes
 * each tarball from its cache by integrity and never asks a registry (it is pointed at a closed port).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The workspaces that are published, in dependency order. */
export const PUBLISHED = [
  'hal',
  'backends/cpu',
  'backends/wasm',
  'backends/webgpu',
  'backends/reference',
  'packages/onnx',
  'packages/conformance',
  'packages/autograd',
  'packages/models',
  'packages/cli',
];

export interface Packed {
  dir: string;
  name: string;
  version: string;
  filename: string;
  integrity: string;
  files: string[];
  manifest: Manifest;
}

interface Manifest {
  name: string;
  version: string;
  license?: string;
  bin?: Record<string, string>;
  engines?: Record<string, string>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}
type LockEntry = Record<string, unknown> & {
  version?: string;
  resolved?: string;
  integrity?: string;
  link?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
};

const NO_REGISTRY = 'http://127.0.0.1:9/';
const npmEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  npm_config_registry: NO_REGISTRY,
  npm_config_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
});
const npm = (args: string[], cwd: string): string =>
  execFileSync('npm', args, { cwd, encoding: 'utf8', env: npmEnv(), stdio: ['ignore', 'pipe', 'pipe'] });

/** `npm pack` of every published workspace into `dest` (one npm call; no lifecycle scripts). */
export function packAll(root: string, dest: string): Packed[] {
  mkdirSync(dest, { recursive: true });
  const out = npm(
    ['pack', '--json', '--ignore-scripts', '--pack-destination', dest, ...PUBLISHED.flatMap((w) => ['--workspace', w])],
    root,
  );
  const results = JSON.parse(out) as {
    name: string;
    version: string;
    filename: string;
    integrity: string;
    files: { path: string }[];
  }[];
  return PUBLISHED.map((dir) => {
    const manifest = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as Manifest;
    const r = results.find((x) => x.name === manifest.name);
    if (!r) throw new Error(`npm pack gave no tarball for ${manifest.name}`);
    return {
      dir,
      name: r.name,
      version: r.version,
      filename: r.filename,
      integrity: r.integrity,
      files: r.files.map((f) => f.path),
      manifest,
    };
  });
}

/**
 * Writes package.json and package-lock.json of a consumer project in `dir` that depends on every
 * packed tarball (packed into `dir/tarballs`) and on `extra` third-party packages (taken at the version
 * the repository's lockfile has), then installs it offline.
 */
export function createProject(root: string, dir: string, packed: Packed[], extra: string[] = []): void {
  const rootLock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const src = rootLock.packages;
  const lock: Record<string, LockEntry> = {};

  // Where `dep` resolves from the lock path `from`, as Node would: the nearest node_modules upwards.
  const resolveIn = (from: string, dep: string): string => {
    for (let base = from; ; ) {
      const candidate = `${base ? `${base}/` : ''}node_modules/${dep}`;
      if (src[candidate] && !src[candidate].link) return candidate;
      if (!base) throw new Error(`${dep} (needed by ${from || 'the root'}) is not in package-lock.json`);
      const i = base.lastIndexOf('/node_modules/');
      base = i < 0 ? '' : base.slice(0, i);
    }
  };
  // The consumer's path for a repository lock path: the part after the owning workspace folder.
  const owners = new Map<string, string>(packed.map((p) => [p.dir, `node_modules/${p.name}`]));
  const target = (path: string): string => {
    for (const [ws, mapped] of owners) if (path.startsWith(`${ws}/`)) return `${mapped}/${path.slice(ws.length + 1)}`;
    return path;
  };
  const visit = (from: string, deps: Record<string, string> = {}): void => {
    for (const dep of Object.keys(deps)) {
      if (packed.some((p) => p.name === dep)) continue;
      const path = resolveIn(from, dep);
      const to = target(path);
      if (lock[to]) continue;
      const e = src[path]!;
      const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
      const { dev: _d, optional: _o, devOptional: _do, peer: _p, ...rest } = e;
      lock[to] = {
        ...rest,
        resolved: e.resolved ?? `https://registry.npmjs.org/${name}/-/${name.split('/').pop()}-${e.version}.tgz`,
      };
      visit(path, e.dependencies);
      visit(path, e.optionalDependencies);
    }
  };

  const dependencies: Record<string, string> = {};
  for (const p of packed) {
    const rel = `file:tarballs/${p.filename}`;
    dependencies[p.name] = rel;
    const m = p.manifest;
    lock[`node_modules/${p.name}`] = {
      version: p.version,
      resolved: rel,
      integrity: p.integrity,
      license: m.license,
      ...(m.dependencies && { dependencies: m.dependencies }),
      ...(m.bin && { bin: m.bin }),
      ...(m.engines && { engines: m.engines }),
      ...(m.peerDependencies && { peerDependencies: m.peerDependencies }),
      ...(m.peerDependenciesMeta && { peerDependenciesMeta: m.peerDependenciesMeta }),
    };
    visit(p.dir, m.dependencies);
  }
  for (const name of extra) {
    const path = resolveIn('', name);
    dependencies[name] = src[path]!.version!;
  }
  visit('', Object.fromEntries(extra.map((n) => [n, '*'])));

  const pkg = { name: 'polyhal-consumer', version: '1.0.0', private: true, type: 'module', dependencies };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  const packages = {
    '': { name: pkg.name, version: pkg.version, dependencies },
    ...Object.fromEntries(
      Object.keys(lock)
        .sort()
        .map((k) => [k, lock[k]]),
    ),
  };
  writeFileSync(
    join(dir, 'package-lock.json'),
    `${JSON.stringify(
      { name: pkg.name, version: pkg.version, lockfileVersion: 3, requires: true, packages },
      null,
      2,
    )}\n`,
  );
}

/** `npm ci` offline, with the registry pointed at a closed port: any network request fails. */
export function installOffline(dir: string): string {
  return npm(['ci', '--offline', `--registry=${NO_REGISTRY}`, '--no-audit', '--no-fund'], dir);
}
