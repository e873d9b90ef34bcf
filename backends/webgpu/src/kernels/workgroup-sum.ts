/**
 * The sum over a workgroup of T invocations of one value each (f32 or vec2f), the same in every invocation: the
 * reduction of the row-per-workgroup norm kernels (layer-norm-rows.ts, layer-norm-backward-rows.ts). Two forms:
 * - a binary tree in workgroup memory: log2(T) levels, a barrier each;
 * - with subgroups (the `subgroups` feature): `subgroupAdd` within each subgroup, whose first invocation leaves the
 *   sum in its own slot of workgroup memory (the others a zero), then every invocation adds the T slots in order —
 *   two barriers, whatever the subgroup size (4 to 128) and however the adapter forms its subgroups. On an H200
 *   [12608, 384]'s layerNorm forward took … against … µs (benches/probes/webgpu-layer-norm.ts).
 * Error: the tree adds log2(T) levels to each invocation's own sum; the subgroup form up to the subgroup's size − 1
 * additions (subgroupAdd's order is the adapter's) and then T − 1 in order (of at most T / 4 non-zero terms).
 * Must be called in uniform control flow by every invocation of the workgroup (it holds barriers).
 */

/** The builtin argument the subgroup form needs in the entry point (`sgi`), and its enable. */
export const SUBGROUP_INVOCATION_ARG = '@builtin(subgroup_invocation_id) sgi: u32';
export const SUBGROUPS_ENABLE = 'enable subgroups;\n';

/**
 * WGSL of `fn NAME(v: TYPE, t: u32, sgi: u32) -> TYPE` (t: the local invocation index, sgi: the subgroup
 * invocation id, or 0u in the tree form) and its workgroup array.
 */
export function workgroupSumWgsl(name: string, type: 'f32' | 'vec2f', T: number, subgroups: boolean): string {
  const part = `${name}Part`;
  const body = subgroups
    ? `  let s = subgroupAdd(v);
  ${part}[t] = select(${type}(0.0), s, sgi == 0u);
  workgroupBarrier();
  var total = ${type}(0.0);
  for (var i = 0u; i < ${T}u; i++) { total = total + ${part}[i]; }
  workgroupBarrier();
  return total;`
    : `  ${part}[t] = v;
  workgroupBarrier();
  for (var h = ${T / 2}u; h > 0u; h = h / 2u) {
    if (t < h) { ${part}[t] = ${part}[t] + ${part}[t + h]; }
    workgroupBarrier();
  }
  let total = ${part}[0];
  workgroupBarrier();
  return total;`;
  return `var<workgroup> ${part}: array<${type}, ${T}>;
fn ${name}(v: ${type}, t: u32, sgi: u32) -> ${type} {
${body}
}`;
}
