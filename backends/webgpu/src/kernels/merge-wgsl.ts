/**
 * Horizontal merging of compute kernels (plan-merge.ts): one WGSL module that runs two or more of the backend's
 * generated kernels in one dispatch — the merged grid's workgroups [0, n1) run the first kernel's code as its own
 * dispatch of grid1 would, [n1, n1 + n2) the second's as its grid2 would, and so on (after horizontal fusion,
 * Li et al., "Automatic Horizontal Fusion for GPU Kernels", CGO 2022). Each workgroup runs exactly one kernel's
 * code with the workgroup id, workgroup count and invocation ids that kernel's own dispatch gave it, so the
 * results are the same bits.
 *
 * Per kernel i (from 0), every module-scope name (fn, var, const, struct, alias) is renamed `m<i>_name`
 * (identifiers only, never a member after '.', nor a struct's member names), its @binding numbers follow the previous
 * kernels' (its uniform params become one more uniform binding: bindings run kernel after kernel, each its
 * uniform then its storage buffers, as declared), and its entry point becomes `fn m<i>_main(<its builtins>)`. A
 * new `main` computes the flat workgroup index w from workgroup_id and num_workgroups (uniform values, so the
 * kernels' barriers stay in uniform control flow) and calls the kernel whose range holds w.
 *
 * Kernels of different @workgroup_size: the merged module takes the size of the kernels that need their own
 * (a barrier, workgroup memory or a subgroup or quad builtin: a barrier must see its whole workgroup), which must
 * agree, or the largest where none does; a kernel that needs nothing of its workgroup runs remapped: with c times
 * the merged size, each of its workgroups spans c merged ones; with 1/c of it, each merged workgroup runs c of its
 * workgroups (the last one's idle invocations skip). Its builtins keep its own dispatch's values either way.
 *
 * Refused (null): kernels that need their own workgroup size and differ in it, sizes that do not divide each other,
 * anything the parser does not fully understand (override, requires, diagnostic, builtins other than the five of the
 * grid and the subgroup's two — subgroup_invocation_id and subgroup_size, the hardware's own values: a kernel that
 * names one runs at its own workgroup size, so its subgroups are as they were — a non-literal
 * workgroup size, workgroup arrays of sizes it cannot evaluate), and merges past the device's
 * limits: workgroup memory together, storage buffers together, uniform buffers with dynamic offsets together, or more
 * workgroups than two dimensions of the grid hold. `enable` lines are merged by union.
 */

/** The device limits a merge must keep. */
export interface MergeLimits {
  readonly maxComputeWorkgroupStorageSize: number;
  readonly maxStorageBuffersPerShaderStage: number;
  /** min(maxUniformBuffersPerShaderStage, maxDynamicUniformBuffersPerPipelineLayout). */
  readonly maxUniformBuffers: number;
  readonly maxComputeWorkgroupsPerDimension: number;
}

/** A kernel to merge: its WGSL and the grid its own dispatch used. */
export interface MergeKernel {
  readonly source: string;
  readonly grid: readonly [number, number, number];
}

/** The merged module, and the grid to dispatch it on. */
export interface Merged {
  readonly code: string;
  readonly grid: [number, number, number];
}

/** A top-level declaration: its text, kind and name (empty for `enable`). */
interface Decl {
  readonly text: string;
  readonly kind: 'fn' | 'var' | 'const' | 'struct' | 'alias' | 'enable';
  readonly name: string;
}

const BUILTINS = new Set([
  'workgroup_id',
  'num_workgroups',
  'local_invocation_id',
  'local_invocation_index',
  'global_invocation_id',
  // the hardware's own values: a kernel naming one runs at its own workgroup size (WORKGROUP_BOUND: fixed)
  'subgroup_invocation_id',
  'subgroup_size',
]);
const SUBGROUP_BUILTINS = new Set(['subgroup_invocation_id', 'subgroup_size']);

const stripComments = (s: string): string => s.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/\/\/[^\n]*/g, '');

/** The top-level declarations of a module, or null where one is not understood. */
function declarations(src: string): Decl[] | null {
  const out: Decl[] = [];
  let i = 0;
  const n = src.length;
  while (i < n) {
    while (i < n && /\s/.test(src[i]!)) i++;
    if (i >= n) break;
    const start = i;
    let depth = 0;
    let end = -1;
    let braces = false;
    for (; i < n; i++) {
      const c = src[i]!;
      if (c === '{' || c === '(' || c === '[') {
        depth++;
        if (c === '{') braces = true;
      } else if (c === '}' || c === ')' || c === ']') {
        depth--;
        if (depth < 0) return null;
        if (depth === 0 && c === '}' && braces) {
          end = i + 1;
          if (/^\s*;/.test(src.slice(end))) end = src.indexOf(';', end) + 1;
          break;
        }
      } else if (c === ';' && depth === 0) {
        end = i + 1;
        break;
      }
    }
    if (end < 0) return null;
    i = end;
    const text = src.slice(start, end).trim();
    const body = text.replace(/^(@\w+(\s*\([^)]*\))?\s*)*/, '');
    const m = /^(fn|var|const|struct|alias|enable)\b\s*(<[^>]*>)?\s*([A-Za-z_]\w*)?/.exec(body);
    if (!m) return null; // override, requires, diagnostic, let, ...
    const kind = m[1] as Decl['kind'];
    if (kind !== 'enable' && !m[3]) return null;
    out.push({ text, kind, name: kind === 'enable' ? '' : m[3]! });
  }
  return out;
}

/** Renames the identifiers of `names` in `text` with `prefix` (not after '.'; not a struct's member names). */
function rename(text: string, names: ReadonlySet<string>, prefix: string, struct: boolean): string {
  return text.replace(/[A-Za-z_]\w*/g, (id, at: number) => {
    if (!names.has(id)) return id;
    let b = at - 1;
    while (b >= 0 && /\s/.test(text[b]!)) b--;
    if (text[b] === '.' || text[b] === '@') return id;
    if (struct && /^\s*:/.test(text.slice(at + id.length, at + id.length + 8))) return id;
    return prefix + id;
  });
}

/** Bytes of a workgroup variable's type (host-shareable layout), or null where not understood. */
function typeBytes(t: string, consts: ReadonlyMap<string, number>): { size: number; align: number } | null {
  t = t.replace(/\s/g, '');
  const scalar: Record<string, number> = { f32: 4, i32: 4, u32: 4, f16: 2, bool: 4 };
  if (t in scalar) return { size: scalar[t]!, align: scalar[t]! };
  let m = /^atomic<(u32|i32)>$/.exec(t);
  if (m) return { size: 4, align: 4 };
  m = /^vec([234])(?:<(f32|i32|u32|f16)>|([fiuh]))$/.exec(t);
  if (m) {
    const k = Number(m[1]);
    const s = (m[2] ?? m[3]) === 'f16' || m[3] === 'h' ? 2 : 4;
    return { size: k * s, align: (k === 2 ? 2 : 4) * s };
  }
  m = /^array<(.+),([^,<>]+)>$/.exec(t);
  if (m) {
    const e = typeBytes(m[1]!, consts);
    const lit = /^(\d+)[ui]?$/.exec(m[2]!);
    const count = lit ? Number(lit[1]) : consts.get(m[2]!);
    if (!e || count === undefined) return null;
    return { size: count * Math.ceil(e.size / e.align) * e.align, align: e.align };
  }
  return null;
}

/** One kernel, parsed for merging. */
interface Parsed {
  readonly decls: Decl[];
  readonly entry: Decl;
  readonly size: string;
  readonly dims: [number, number, number];
  /** The entry's params: builtin and declared `name: type`. */
  readonly params: { builtin: string; decl: string }[];
  readonly workgroupBytes: number;
  /** Invocations per workgroup. */
  readonly flat: number;
  /** Whether the kernel needs its own workgroup size (barriers, workgroup memory, subgroup or quad builtins). */
  readonly fixed: boolean;
}

const WORKGROUP_BOUND = /\b(workgroupBarrier|storageBarrier|textureBarrier|workgroupUniformLoad|subgroup\w*|quad\w*)\b/;

function parse(source: string): Parsed | null {
  const decls = declarations(stripComments(source));
  if (!decls) return null;
  const entries = decls.filter((d) => d.kind === 'fn' && /@compute\b/.test(d.text));
  if (entries.length !== 1) return null;
  const entry = entries[0]!;
  const ws = /@workgroup_size\s*\(([^)]*)\)/.exec(entry.text);
  if (!ws) return null;
  const parts = ws[1]!
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (parts.length > 3 || parts.some((p) => !/^\d+[ui]?$/.test(p))) return null;
  const d = parts.map((p) => Number.parseInt(p, 10));
  const dims: [number, number, number] = [d[0]!, d[1] ?? 1, d[2] ?? 1];
  const head = /\bfn\s+\w+\s*\(([^)]*(?:\([^)]*\)[^)]*)*)\)\s*\{/.exec(entry.text);
  if (!head) return null;
  const params: { builtin: string; decl: string }[] = [];
  for (const p of head[1]!.split(/,(?![^(]*\))/)) {
    if (p.trim() === '') continue;
    const m = /^\s*@builtin\s*\(\s*(\w+)\s*\)\s*([A-Za-z_]\w*\s*:\s*[\w<>]+)\s*$/.exec(p);
    if (!m || !BUILTINS.has(m[1]!)) return null;
    params.push({ builtin: m[1]!, decl: m[2]! });
  }
  const consts = new Map<string, number>();
  for (const c of decls) {
    const m = /^const\s+(\w+)\s*(?::\s*\w+\s*)?=\s*(\d+)[ui]?\s*;$/.exec(c.text);
    if (c.kind === 'const' && m) consts.set(m[1]!, Number(m[2]));
  }
  let workgroupBytes = 0;
  for (const v of decls) {
    if (v.kind !== 'var' || !/^var\s*<\s*workgroup\s*>/.test(v.text)) continue;
    const m = /:\s*([\s\S]+);$/.exec(v.text);
    const t = m && typeBytes(m[1]!, consts);
    if (!t) return null;
    workgroupBytes += Math.ceil(t.size / 16) * 16;
  }
  const flat = dims[0] * dims[1] * dims[2];
  const fixed = workgroupBytes > 0 || decls.some((x) => x.kind === 'fn' && WORKGROUP_BOUND.test(x.text));
  return { decls, entry, size: dims.join(', '), dims, params, workgroupBytes, flat, fixed };
}

/**
 * The value of a builtin for kernel i's workgroup `r` of grid `g` (workgroup size `s`), its invocation's local id
 * and index being `lid` and `lix`.
 */
function builtinArg(
  builtin: string,
  r: string,
  g: readonly number[],
  s: readonly number[],
  lid = 'mx_lid',
  lix = 'mx_lix',
): string {
  const [gx, gy, gz] = g;
  const wid = `vec3u(${r} % ${gx}u, (${r} / ${gx}u) % ${gy}u, ${r} / ${gx! * gy!}u)`;
  switch (builtin) {
    case 'workgroup_id':
      return wid;
    case 'num_workgroups':
      return `vec3u(${gx}u, ${gy}u, ${gz}u)`;
    case 'local_invocation_id':
      return lid;
    case 'local_invocation_index':
      return lix;
    case 'subgroup_invocation_id':
      return 'mx_sgi';
    case 'subgroup_size':
      return 'mx_sgs';
    default:
      return `${wid} * vec3u(${s[0]}u, ${s[1]}u, ${s[2]}u) + ${lid}`;
  }
}

/** Kernels merged into one module dispatched on the returned grid (see the module comment), or null. */
export function mergeKernels(kernels: readonly MergeKernel[], limits: MergeLimits): Merged | null {
  if (kernels.length < 2) return null;
  if (kernels.some((k) => /\b(m\d+|mx)_\w/.test(k.source))) return null;
  const parsed: Parsed[] = [];
  for (const k of kernels) {
    const p = parse(k.source);
    if (!p) return null;
    parsed.push(p);
  }
  const fixed = parsed.filter((p) => p.fixed);
  if (fixed.some((p) => p.size !== fixed[0]!.size)) return null;
  const own = fixed[0] ?? parsed.reduce((a, p) => (p.flat > a.flat ? p : a));
  if (parsed.some((p) => p.size !== own.size && p.flat % own.flat !== 0 && own.flat % p.flat !== 0)) return null;
  const wgBytes = parsed.reduce((s, p) => s + p.workgroupBytes, 0);
  if (wgBytes > limits.maxComputeWorkgroupStorageSize) return null;
  const enables = new Set<string>();
  const body: string[] = [];
  let binding = 0;
  let storage = 0;
  let uniforms = 0;
  const calls: string[] = [];
  let from = 0;
  for (let i = 0; i < parsed.length; i++) {
    const p = parsed[i]!;
    const prefix = `m${i}_`;
    const names = new Set(p.decls.filter((d) => d.kind !== 'enable').map((d) => d.name));
    names.add(p.entry.name);
    const renamed = new Map<number, number>();
    let top = -1;
    for (const d of p.decls) {
      if (d.kind === 'enable') {
        enables.add(d.text.replace(/\s+/g, ' '));
        continue;
      }
      let text = d === p.entry ? entryFn(d.text, p.params) : d.text;
      if (!text) return null;
      text = rename(text, names, prefix, d.kind === 'struct');
      const b = /^@group\(\s*0\s*\)\s*@binding\(\s*(\d+)\s*\)\s*var\s*<\s*([\w\s,]+)>/.exec(text);
      if (b) {
        const old = Number(b[1]);
        if (renamed.has(old)) return null;
        renamed.set(old, binding + old);
        top = Math.max(top, old);
        if (b[2]!.trim() === 'uniform') uniforms++;
        else storage++;
        text = text.replace(/@binding\(\s*\d+\s*\)/, `@binding(${binding + old})`);
      } else if (/@(group|binding)\b/.test(text)) return null;
      body.push(text);
    }
    if (renamed.size !== top + 1) return null; // bindings 0..top, each once
    binding += top + 1;
    const g = kernels[i]!.grid;
    const n = g[0] * g[1] * g[2];
    const { call, count } = callOf(p, `${prefix}${p.entry.name}`, g, n, from, own);
    calls.push(`if (mx_w < ${from + count}u) ${call}`);
    from += count;
  }
  if (storage > limits.maxStorageBuffersPerShaderStage || uniforms > limits.maxUniformBuffers) return null;
  const max = limits.maxComputeWorkgroupsPerDimension;
  const grid: [number, number, number] = from <= max ? [from, 1, 1] : [max, Math.ceil(from / max), 1];
  if (grid[1] > max) return null;
  const sub = parsed.some((p) => p.params.some((q) => SUBGROUP_BUILTINS.has(q.builtin)));
  const subArgs = sub ? ',\n    @builtin(subgroup_invocation_id) mx_sgi: u32, @builtin(subgroup_size) mx_sgs: u32' : '';
  const main = `@compute @workgroup_size(${own.size}) fn main(@builtin(workgroup_id) mx_wid: vec3u,
    @builtin(num_workgroups) mx_nwg: vec3u, @builtin(local_invocation_id) mx_lid: vec3u,
    @builtin(local_invocation_index) mx_lix: u32${subArgs}) {
  let mx_w = mx_wid.y * mx_nwg.x + mx_wid.x;
  ${calls.join(' else ')}
}`;
  return { code: [...enables, ...body, main].join('\n'), grid };
}

/**
 * The call of kernel `p` (function `fn`, grid `g` of n workgroups) from merged workgroups [from, from + count) of
 * `size` invocations each (see the module comment), and that count.
 */
function callOf(
  p: Parsed,
  fn: string,
  g: readonly number[],
  n: number,
  from: number,
  own: Parsed,
): { call: string; count: number } {
  const size = own.flat;
  if (p.size === own.size) {
    const args = p.params.map((q) => builtinArg(q.builtin, `(mx_w - ${from}u)`, g, p.dims)).join(', ');
    return { call: `{ ${fn}(${args}); }`, count: n };
  }
  const [sx, sy] = p.dims;
  const lid = `vec3u(mx_li % ${sx}u, (mx_li / ${sx}u) % ${sy}u, mx_li / ${sx * sy}u)`;
  const args = p.params.map((q) => builtinArg(q.builtin, 'mx_r', g, p.dims, lid, 'mx_li')).join(', ');
  if (p.flat > size) {
    const c = p.flat / size;
    const at = `let mx_r = (mx_w - ${from}u) / ${c}u; let mx_li = ((mx_w - ${from}u) % ${c}u) * ${size}u + mx_lix;`;
    return { call: `{ ${at} ${fn}(${args}); }`, count: n * c };
  }
  const c = size / p.flat; // 1 where the sizes agree but not the shapes
  const at = `let mx_r = (mx_w - ${from}u) * ${c}u + mx_lix / ${p.flat}u; let mx_li = mx_lix % ${p.flat}u;`;
  return { call: `{ ${at} if (mx_r < ${n}u) { ${fn}(${args}); } }`, count: Math.ceil(n / c) };
}

/** The entry point as a plain function of its builtins' values (attributes dropped), or null. */
function entryFn(text: string, params: readonly { decl: string }[]): string | null {
  const m = /\bfn\s+(\w+)\s*\(([^)]*(?:\([^)]*\)[^)]*)*)\)\s*\{/.exec(text);
  if (!m) return null;
  const open = m.index + m[0].length;
  return `fn ${m[1]}(${params.map((q) => q.decl).join(', ')}) {${text.slice(open)}`;
}

/** Two kernels merged (mergeKernels with two). */
export function mergeWgsl(
  k1: string,
  k2: string,
  grid1: readonly [number, number, number],
  grid2: readonly [number, number, number],
  limits: MergeLimits,
): Merged | null {
  return mergeKernels(
    [
      { source: k1, grid: grid1 },
      { source: k2, grid: grid2 },
    ],
    limits,
  );
}
