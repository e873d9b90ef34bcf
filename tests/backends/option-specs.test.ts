// Options are declared once, as specs: each options type is derived from its specs (OptionsOf), validation
// walks the same specs and docs/reference/OPTIONS.md renders them. The derived types are held here to the
// interfaces they replaced, written out by hand (tsc -b type-checks this file: a mismatch does not compile).
import { describe, expect, test } from '@jest/globals';
import {
  BASE_OPTION_SPECS,
  type BaseBackendOptions,
  CONFIG_OPTION_SPECS,
  CREATE_BACKEND_OPTION_SPECS,
  type CreateBackendOptions,
  defineOptions,
  InvalidArgumentError,
  type OptionSpecs,
  type OptionsOf,
  type PolyHalConfig,
  validateOptions,
} from '@polyhal/hal';
import type { CpuBackendOptions } from '@polyhal/backend-cpu';
import { WASM_OPTION_SPECS, type WasmBackendOptions } from '@polyhal/backend-wasm';
import {
  type GpuDeviceLike,
  type GpuLike,
  TILES,
  type TileName,
  WEBGPU_OPTION_SPECS,
  type WebGpuOptions,
} from '@polyhal/backend-webgpu';

/** true exactly when A and B are the same type. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const same = <A, B>(equal: Equal<A, B>): boolean => equal;

const TABLES: [string, OptionSpecs][] = [
  ['createBackend', CREATE_BACKEND_OPTION_SPECS],
  ['polyhal.config.json', CONFIG_OPTION_SPECS],
  ['base', BASE_OPTION_SPECS],
  ['wasm', WASM_OPTION_SPECS],
  ['webgpu', WEBGPU_OPTION_SPECS],
];

describe('option specs, the one declaration of each option', () => {
  test('the derived types are the interfaces they replaced', () => {
    expect(same<BaseBackendOptions, { memoryLimit?: number }>(true)).toBe(true);
    expect(same<CpuBackendOptions, { memoryLimit?: number }>(true)).toBe(true);
    type Wasm = {
      memoryLimit?: number;
      threads?: number | 'auto';
      threadThreshold?: number;
      elementwiseThreadThreshold?: number;
      relaxedSimd?: boolean | 'auto';
    };
    expect(same<WasmBackendOptions, Wasm>(true)).toBe(true);
    type Config = { backend?: string; prefer?: string[]; fallback?: boolean; options?: Record<string, unknown> };
    expect(same<PolyHalConfig, Config>(true)).toBe(true);
    type Create = {
      backend?: string;
      prefer?: readonly string[];
      fallback?: boolean;
      options?: Record<string, unknown>;
      env?: Record<string, string | undefined>;
      configPath?: string | null;
    };
    expect(same<CreateBackendOptions, Create>(true)).toBe(true);
    type WebGpu = {
      memoryLimit?: number;
      device?: GpuDeviceLike;
      gpu?: GpuLike;
      powerPreference?: 'low-power' | 'high-performance';
      dawnFlags?: string[];
      maxPooledBytes?: number;
      batchSize?: number;
      matmulTile?: 'auto' | TileName;
      matmulSplitK?: 'auto' | number;
      errorScopes?: 'op' | 'batch';
      float16Conversions?: 'auto' | 'integer' | 'hardware';
      float16Arithmetic?: 'auto' | 'native' | 'emulated';
      int8Storage?: 'packed' | 'int32';
      int8Packing?: 'auto' | 'always';
      int8Kernel?: 'auto' | 'subgroup-matrix' | 'dot4';
      float16Matmul?: 'auto' | 'subgroup-matrix' | 'float32';
      float16MatmulTile?: 'auto' | 'large' | 'medium' | 'small';
      int8Tile?: 'auto' | '128x128' | '64x128';
      subgroupMatrixBuiltins?: 'auto' | 'legacy' | 'vector';
      fuseInCapture?: boolean;
      mergeInCapture?: boolean;
      readAheadInReplay?: boolean;
      kernelTimestamps?: boolean;
      layerNormKernel?: 'auto' | 'subgroup' | 'workgroup' | 'invocation';
      tiledAttention?: boolean;
    };
    expect(same<WebGpuOptions, WebGpu>(true)).toBe(true);
  });

  test('OptionsOf reads type and values, and takes refined types for what JSON types cannot say', () => {
    const specs = defineOptions({
      n: { type: 'integer', min: 0 },
      mode: { type: 'string', values: ['a', 'b'] },
      name: { type: 'string' },
      flag: { type: 'boolean', values: ['auto'] },
      list: { type: 'string[]' },
      thing: { type: 'object' },
      path: { type: 'string' },
    });
    type Expected = {
      n?: number;
      mode?: 'a' | 'b';
      name?: string;
      flag?: boolean | 'auto';
      list?: string[];
      thing?: object;
      path?: string;
    };
    expect(same<OptionsOf<typeof specs>, Expected>(true)).toBe(true);
    type Refined = OptionsOf<typeof specs, { thing: Map<string, number>; path: string | null }>;
    type RefinedExpected = {
      n?: number;
      mode?: 'a' | 'b';
      name?: string;
      flag?: boolean | 'auto';
      list?: string[];
      thing?: Map<string, number>;
      path?: string | null;
    };
    expect(same<Refined, RefinedExpected>(true)).toBe(true);
    // @ts-expect-error a refined key must be one of the specs' keys
    const typo: OptionsOf<typeof specs, { pth: string | null }> = {};
    expect(typo).toEqual({});
    expect(defineOptions(specs)).toBe(specs);
  });

  test.each(TABLES)('%s: the specs hold only what validation and the docs read', (_name, specs) => {
    for (const [key, spec] of Object.entries(specs)) {
      expect([key, Object.keys(spec).filter((k) => !['type', 'min', 'max', 'values', 'doc'].includes(k))]).toEqual([
        key,
        [],
      ]);
      expect([key, typeof spec.doc]).toEqual([key, 'string']);
    }
  });

  test("createBackend's first four options are the config file's keys, the same spec objects", () => {
    expect(Object.keys(CREATE_BACKEND_OPTION_SPECS)).toEqual([
      ...Object.keys(CONFIG_OPTION_SPECS),
      'env',
      'configPath',
    ]);
    for (const key of Object.keys(CONFIG_OPTION_SPECS) as (keyof typeof CONFIG_OPTION_SPECS)[])
      expect(CREATE_BACKEND_OPTION_SPECS[key]).toBe(CONFIG_OPTION_SPECS[key]);
    expect(WASM_OPTION_SPECS.memoryLimit).toBe(BASE_OPTION_SPECS.memoryLimit);
    expect(WEBGPU_OPTION_SPECS.memoryLimit).toBe(BASE_OPTION_SPECS.memoryLimit);
  });

  test("validation walks the webgpu specs: literal values, the tile names, 'auto' beside a range", () => {
    const check = (options: Record<string, unknown>): void =>
      validateOptions('webgpu backend', options, WEBGPU_OPTION_SPECS);
    expect(() => check({ int8Tile: '128x128', matmulTile: Object.keys(TILES)[0], matmulSplitK: 'auto' })).not.toThrow();
    expect(() => check({ int8Tile: '32x32' })).toThrow(
      new InvalidArgumentError(
        `webgpu backend: option 'int8Tile' must be one of "auto", "128x128", "64x128", got "32x32"`,
      ),
    );
    expect(() => check({ matmulTile: 'huge' })).toThrow(/option 'matmulTile' must be one of "auto", ".*", got "huge"/);
    expect(() => check({ matmulSplitK: 2048 })).toThrow(
      new InvalidArgumentError(
        `webgpu backend: option 'matmulSplitK' must be an integer in [1, 1024] or "auto", got 2048`,
      ),
    );
    expect(() => check({ device: 'gpu0' })).toThrow(/option 'device' must be an object, got "gpu0"/);
  });
});
