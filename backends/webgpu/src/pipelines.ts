/**
 * Pipelines and bind groups of the WebGPU backend. Pipelines are cached per kernel key, with an
 * explicit layout read from the kernel's WGSL declarations: binding 0 (the uniform params) has a
 * dynamic offset and `var<storage, read>` bindings are read-only storage. Because the uniform block
 * is bound with a dynamic offset, a bind group depends only on the kernel and its buffers, so a
 * repeated op on the same buffers reuses it (createBindGroup is the costliest call of a dispatch:
 * 14–24 µs on this project's CI machine). Bind groups holding a destroyed buffer are dropped.
 */
export interface Pipeline {
  pipe: GPUComputePipeline;
  layout: GPUBindGroupLayout;
  /** Per storage binding (1, 2, ...): whether the kernel may write it (`read_write`). */
  writes: boolean[];
}

export class PipelineCache {
  private readonly pipelines = new Map<string, Pipeline>();
  private readonly bindGroups = new Map<string, GPUBindGroup>();
  private readonly bindKeysOf = new Map<GPUBuffer, string[]>();
  private readonly ids = new WeakMap<GPUBuffer, number>();
  private nextId = 1;

  /** `uniforms`: the buffer behind binding 0 (bound at offset 0; the dispatch passes the offset). */
  constructor(
    private readonly device: GPUDevice,
    private readonly uniforms: GPUBuffer,
    private readonly maxBindGroups = 8192,
  ) {}

  pipeline(key: string, source: () => string): Pipeline {
    let p = this.pipelines.get(key);
    if (!p) {
      const code = source();
      const entries: GPUBindGroupLayoutEntry[] = [];
      const writes: boolean[] = [];
      // in binding order (a merged kernel has a uniform binding per part: plan-merge.ts)
      const decls = [...code.matchAll(/@group\(0\) @binding\((\d+)\) var<([^>]+)>/g)];
      for (const m of decls.sort((a, b) => Number(a[1]) - Number(b[1]))) {
        const kind = m[2]!.replace(/\s/g, '');
        if (kind !== 'uniform') writes.push(kind !== 'storage,read');
        entries.push({
          binding: Number(m[1]),
          visibility: 4, // GPUShaderStage.COMPUTE
          buffer:
            kind === 'uniform'
              ? { type: 'uniform', hasDynamicOffset: true }
              : { type: kind === 'storage,read' ? 'read-only-storage' : 'storage' },
        });
      }
      const layout = this.device.createBindGroupLayout({ entries, label: key });
      const module = this.device.createShaderModule({ code, label: key });
      const pipe = this.device.createComputePipeline({
        layout: this.device.createPipelineLayout({ bindGroupLayouts: [layout] }),
        compute: { module, entryPoint: 'main' },
        label: key,
      });
      this.pipelines.set(key, (p = { pipe, layout, writes }));
    }
    return p;
  }

  /** The bind group `id` (bindGroupId) over the uniform buffer (`bytes` wide) and `buffers` (bindings 1..). */
  /** The cache key of kernel `key`'s bind group over the uniform block (`bytes` wide) and `buffers`. */
  bindGroupId(key: string, bytes: number, buffers: GPUBuffer[]): string {
    return `${key}|${bytes}|${buffers.map((b) => this.id(b)).join(',')}`;
  }

  /** Whether kernel `key` and bind group `id` are both cached: using them creates no GPU object. */
  cached(key: string, id: string): boolean {
    return this.pipelines.has(key) && this.bindGroups.has(id);
  }

  bindGroup(id: string, layout: GPUBindGroupLayout, bytes: number, buffers: GPUBuffer[]): GPUBindGroup {
    let bind = this.bindGroups.get(id);
    if (!bind) {
      if (this.bindGroups.size >= this.maxBindGroups) {
        this.bindGroups.clear();
        this.bindKeysOf.clear();
      }
      bind = this.device.createBindGroup({
        layout,
        entries: [
          { binding: 0, resource: { buffer: this.uniforms, offset: 0, size: bytes } },
          ...buffers.map((buffer, i) => ({ binding: i + 1, resource: { buffer } })),
        ],
      });
      this.bindGroups.set(id, bind);
      for (const b of buffers) {
        const keys = this.bindKeysOf.get(b);
        if (keys) keys.push(id);
        else this.bindKeysOf.set(b, [id]);
      }
    }
    return bind;
  }

  /** Drops the bind groups that hold `b` (called before it is destroyed). */
  forget(b: GPUBuffer): void {
    for (const id of this.bindKeysOf.get(b) ?? []) this.bindGroups.delete(id);
    this.bindKeysOf.delete(b);
  }

  get size(): number {
    return this.bindGroups.size;
  }

  private id(b: GPUBuffer): number {
    let id = this.ids.get(b);
    if (id === undefined) this.ids.set(b, (id = this.nextId++));
    return id;
  }
}
