/**
 * Node.js built-in modules, reached without an `import` that a bundler could see. A browser bundle of
 * any PolyHAL package (esbuild `--platform=browser`, webpack 5 with its default config, Vite) must
 * never meet a `node:` specifier; the code that needs the file system, the CPU count or worker
 * threads asks for the module here, at run time, and only where `process.versions.node` says the
 * runtime is Node-compatible (Node, Deno, Bun).
 */

/** The Node built-ins PolyHAL uses. Callers describe the part they use as `T` (no @types/node in public types). */
export type NodeBuiltinName = 'fs' | 'os' | 'path' | 'worker_threads';

interface NodeProcess {
  versions?: { node?: string };
  getBuiltinModule?: (id: string) => unknown;
  cwd?: () => string;
}

function nodeProcess(): NodeProcess | undefined {
  const p = (globalThis as { process?: NodeProcess }).process;
  return p?.versions?.node ? p : undefined;
}

/** Whether this runtime offers Node's built-in modules (Node, Deno, Bun; not a browser). */
export function isNodeLike(): boolean {
  return nodeProcess() !== undefined;
}

/**
 * Loads a Node built-in module, or returns undefined outside Node-compatible runtimes.
 * Uses `process.getBuiltinModule` (Node ≥ 20.16, Deno, Bun), else a dynamic import whose specifier
 * bundlers cannot resolve statically (and are told to ignore).
 */
export async function nodeBuiltin<T>(name: NodeBuiltinName): Promise<T | undefined> {
  const p = nodeProcess();
  if (!p) return undefined;
  const id = `node:${name}`;
  if (typeof p.getBuiltinModule === 'function') {
    const m = p.getBuiltinModule(id);
    if (m) return m as T;
  }
  return (await import(/* webpackIgnore: true */ /* @vite-ignore */ id)) as T;
}
