import { describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as hal from '@polyhal/hal';
import type { ComputeBackend, FamilyMethods } from '@polyhal/hal';
import * as internal from '@polyhal/hal/internal';
import { BaseBackend, defineFamilyMethods, FAMILIES } from '@polyhal/hal/internal';
import { CpuBackend } from '@polyhal/backend-cpu';

// @polyhal/hal has two entries: index.ts for users of a backend and internal.ts for backend authors. BaseBackend
// is composed in one place, FAMILIES (base.ts), which the compiler holds to FamilyMethods; these tests hold the
// result to ComputeBackend at run time, and the entries to each other and to what the backends import.
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

type Member = 'method' | 'optional method' | 'field';
/**
 * ComputeBackend's members outside its op families. `satisfies` makes the list exact at compile time (tsc -b):
 * a member added to ComputeBackend and missing here, or listed here and not in it, does not compile.
 */
const CORE = {
  name: 'field',
  id: 'field',
  deviceName: 'field',
  deviceType: 'field',
  capabilities: 'field',
  memoryAvailable: 'method',
  liveBufferCount: 'method',
  memoryStats: 'method',
  allocate: 'method',
  deallocate: 'method',
  free: 'method',
  write: 'method',
  copyToDevice: 'method',
  read: 'method',
  copyFromDevice: 'method',
  readHandle: 'method',
  readSync: 'optional method',
  supportsDType: 'method',
  synchronize: 'method',
  dispose: 'method',
  fromArray: 'method',
  full: 'method',
  binary: 'method',
  unary: 'method',
  mean: 'method',
  reduce: 'method',
  reshape: 'method',
  permute: 'method',
  expand: 'method',
  shrink: 'method',
  stride: 'method',
  pad: 'method',
  contiguous: 'method',
  cast: 'method',
  assign: 'method',
  matmul: 'method',
  fusedElementwise: 'method',
  softmax: 'method',
  logSoftmax: 'method',
  logsumexp: 'method',
  softmaxCrossEntropy: 'method',
  adamStep: 'method',
  sgdStep: 'method',
  nonFiniteCheckAndUnscale: 'method',
  attention: 'method',
  attentionBackward: 'method',
  attentionBackwardPacked: 'method',
  beginCapture: 'optional method',
  endCapture: 'optional method',
  abortCapture: 'optional method',
  captureLive: 'optional method',
  uncaptured: 'optional method',
} as const satisfies Record<Exclude<keyof ComputeBackend, keyof FamilyMethods>, Member>;

const familyMethods = Object.entries(FAMILIES).flatMap(([family, table]) =>
  Object.keys(table).map((name) => ({ family, name, fn: (table as Record<string, unknown>)[name] })),
);
const coreMethods = Object.entries(CORE).flatMap(([name, kind]) => (kind === 'field' ? [] : [name]));
// optional methods a backend may lack (BaseBackend has none of them)
const optionalMethods = new Set(
  Object.entries(CORE).flatMap(([name, kind]) => (kind === 'optional method' ? [name] : [])),
);

/** The names a source file imports from `spec`, each with whether it is imported as a type only. */
function importsFrom(source: string, spec: string): { name: string; type: boolean }[] {
  const re = new RegExp(`import\\s+(type\\s+)?\\{([^}]*)\\}\\s+from\\s+'${spec.replace(/\//g, '\\/')}'`, 'g');
  return [...source.matchAll(re)].flatMap((m) =>
    m[2]!
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map((s) => ({ name: s.replace(/^type\s+/, ''), type: Boolean(m[1]) || s.startsWith('type ') })),
  );
}
/** The names an entry file exports (`export { ... } from`), types included. */
function exportsOf(file: string): string[] {
  const source = readFileSync(join(root, file), 'utf8');
  return [...source.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)].flatMap((m) =>
    m[1]!
      .split(',')
      .map((s) => s.trim().replace(/^type\s+/, ''))
      .filter(Boolean),
  );
}
function sourcesUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f));
}
const backendSources = ['cpu', 'wasm', 'webgpu', 'reference'].flatMap((b) => sourcesUnder(`backends/${b}/src`));

describe('BaseBackend, composed from FAMILIES, has every method of ComputeBackend', () => {
  test('the op-table families hold one method per op of the op table, the others the op table names', () => {
    expect(Object.keys(FAMILIES.elementwise).sort()).toEqual([...hal.UNARY_OPS, ...hal.BINARY_OPS].sort());
    expect(Object.keys(FAMILIES.reduce).sort()).toEqual([...hal.REDUCE_OPS].sort());
    // OP_METHODS (ops/index.ts) lists every op by its method name, from the op table: each is a method here
    const methods = new Set([...coreMethods, ...familyMethods.map((m) => m.name)]);
    expect(hal.OP_METHODS.filter((op) => !methods.has(op))).toEqual([]);
    // no method is defined twice (defineFamilyMethods refuses it; this says so on the list itself)
    const names = familyMethods.map((m) => m.name);
    expect(names.length).toBe(new Set(names).size);
    expect(names.filter((n) => n in CORE)).toEqual([]);
  });

  test("each family's functions are BaseBackend.prototype's own methods, defined as a class defines them", () => {
    const proto = BaseBackend.prototype as unknown as Record<string, unknown>;
    const wrong = familyMethods.filter(({ name, fn }) => {
      const d = Object.getOwnPropertyDescriptor(proto, name);
      return !(typeof fn === 'function' && d?.value === fn && d.writable && d.configurable && !d.enumerable);
    });
    expect(wrong.map((m) => `${m.family}.${m.name}`)).toEqual([]);
    expect(coreMethods.filter((n) => !optionalMethods.has(n) && typeof proto[n] !== 'function')).toEqual([]);
  });

  test('a CpuBackend has every member of ComputeBackend: methods are functions, fields are set', () => {
    const be = new CpuBackend() as unknown as Record<string, unknown>;
    try {
      // capture is for backends that encode work (webgpu): the cpu backend computes at once and has none
      const capture = ['beginCapture', 'endCapture', 'abortCapture', 'captureLive', 'uncaptured'];
      expect(capture.filter((n) => be[n] !== undefined)).toEqual([]);
      const members = [...coreMethods.filter((n) => !capture.includes(n)), ...familyMethods.map((m) => m.name)];
      expect(members.filter((n) => typeof be[n] !== 'function')).toEqual([]);
      const fields = Object.entries(CORE).flatMap(([n, kind]) => (kind === 'field' ? [n] : []));
      expect(fields.filter((n) => be[n] === undefined)).toEqual([]);
      // a family method computes through the class it is defined on: flip is layout's, exp elementwise's
      const cpu = be as unknown as CpuBackend;
      const x = cpu.fromArray([1, 2, 3], [3]);
      expect(Array.from(cpu.readSync(cpu.flip(x)))).toEqual([3, 2, 1]);
      expect(Array.from(cpu.readSync(cpu.exp(cpu.fromArray([0], [1]))))).toEqual([1]);
    } finally {
      (be as unknown as CpuBackend).dispose();
    }
  });

  test('defineFamilyMethods refuses a method two families define, or one the class has, before defining any', () => {
    const twice = {};
    expect(() => defineFamilyMethods(twice, { a: { f() {}, g() {} }, b: { g() {} } })).toThrow(
      new hal.InvalidArgumentError("op family 'b': method g is already defined by family 'a'"),
    );
    expect(Object.getOwnPropertyNames(twice)).toEqual([]);
    class WithMethod {
      g(): void {}
    }
    expect(() => defineFamilyMethods(WithMethod.prototype, { a: { f() {}, g() {} } })).toThrow(
      /method g is already defined by the class/,
    );
    expect(Object.getOwnPropertyNames(WithMethod.prototype).sort()).toEqual(['constructor', 'g']);
  });

  test('the deprecated per-family installers define the functions of FAMILIES', () => {
    const installers: [(proto: object) => void, keyof typeof FAMILIES][] = [
      [hal.installLayoutOps, 'layout'],
      [hal.installIndexingOps, 'indexing'],
      [hal.installIndexingNDOps, 'indexingND'],
      [hal.installArgReduceOps, 'argReduce'],
      [hal.installLossOps, 'loss'],
      [hal.installNormOps, 'norm'],
      [hal.installConvOps, 'conv'],
      [hal.installLogicOps, 'logic'],
      [hal.installQuantOps, 'quant'],
      [hal.installScanOps, 'scan'],
      [hal.installRandomOps, 'random'],
    ];
    for (const [install, family] of installers) {
      const proto: Record<string, unknown> = {};
      install(proto);
      const installer = install.name;
      expect({ installer, methods: Object.getOwnPropertyNames(proto).map((n) => proto[n]) }).toEqual({
        installer,
        methods: Object.values(FAMILIES[family]),
      });
    }
  });
});

describe('the entries: @polyhal/hal for users, @polyhal/hal/internal for backend authors', () => {
  const internalNames = exportsOf('hal/src/internal.ts');
  const indexNames = new Set(exportsOf('hal/src/index.ts'));

  test('internal exports what the backends import from it; they import no author API from the index', () => {
    const imported = backendSources.flatMap((file) =>
      importsFrom(readFileSync(join(root, file), 'utf8'), '@polyhal/hal/internal').map((i) => ({ file, ...i })),
    );
    expect(imported.length).toBeGreaterThan(50);
    expect(new Set(imported.map((i) => i.file.split('/')[1])).size).toBe(4); // cpu, wasm, webgpu, reference
    expect(imported.filter((i) => !internalNames.includes(i.name)).map((i) => `${i.file}: ${i.name}`)).toEqual([]);
    const values = imported.filter((i) => !i.type);
    expect(values.filter((i) => !(i.name in internal)).map((i) => `${i.file}: ${i.name}`)).toEqual([]);
    const fromIndex = backendSources.flatMap((file) =>
      importsFrom(readFileSync(join(root, file), 'utf8'), '@polyhal/hal')
        .filter((i) => internalNames.includes(i.name))
        .map((i) => `${file}: ${i.name}`),
    );
    expect(fromIndex).toEqual([]);
  });

  test('the index still exports every name of internal that 0.1 exported, as the same binding', () => {
    // new in internal, never in the index: the composition table, its entries' type and its helper, and the
    // 2-D conv and convTranspose windows and the bias check the backends' direct conv kernels share, and where a
    // one-kernel softmax applies (softmaxRows)
    const onlyInternal = [
      'FAMILIES',
      'FamilyTable',
      'TransposeWindow2d',
      'Window2d',
      'checkConvBias',
      'convTransposeWindow2d',
      'defineFamilyMethods',
      'nonFiniteCheckAndUnscaleComposite',
      'attentionComposite',
      'attentionBackwardComposite',
      'attentionBackwardPackedComposite',
      'packedHeads',
      'softmaxRows',
      'window2d',
    ];
    expect(internalNames.filter((n) => !indexNames.has(n)).sort()).toEqual(onlyInternal.sort());
    const runtime = Object.keys(internal).filter((n) => !onlyInternal.includes(n));
    expect(runtime.length).toBeGreaterThan(100);
    const indexRecord = hal as Record<string, unknown>;
    const internalRecord = internal as Record<string, unknown>;
    expect(runtime.filter((n) => indexRecord[n] !== internalRecord[n])).toEqual([]);
    // and each entry's source lists what its module exports at run time (no name lost between them)
    expect(Object.keys(internal).filter((n) => !internalNames.includes(n))).toEqual([]);
    expect(Object.keys(hal).filter((n) => !indexNames.has(n))).toEqual([]);
  });

  test('hal/package.json maps ./internal like ".": the source, ESM and CJS builds and their declarations', () => {
    const manifest = JSON.parse(readFileSync(join(root, 'hal/package.json'), 'utf8')) as {
      exports: Record<string, unknown>;
    };
    const dot = JSON.stringify(manifest.exports['.']);
    expect(manifest.exports['./internal']).toEqual(JSON.parse(dot.replace(/\/index\./g, '/internal.')));
  });
});
