import { afterEach, describe, expect, test } from '@jest/globals';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CONFIG_MAX_BYTES,
  createBackend,
  InvalidArgumentError,
  loadConfig,
  registerBackend,
  UnknownBackendError,
  unregisterBackend,
} from '@polyhal/hal';
import { cpuBackendEntry } from '@polyhal/backend-cpu';
import { createWasmBackend } from '@polyhal/backend-wasm';

// Input to backend selection (polyhal.config.json, createBackend's options, backend names) is bounded
// and scoped: a typed error naming what was wrong, at once, never a hang, a TypeError or a silent default.
const startDir = process.cwd();
afterEach(() => {
  process.chdir(startDir);
  registerBackend(cpuBackendEntry);
});
const tempDir = (): string => realpathSync(mkdtempSync(join(tmpdir(), 'polyhal-input-')));
const failure = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => 'no error',
    (e: unknown) => e,
  );
const expectTyped = async (p: Promise<unknown>, type: unknown, message: RegExp): Promise<Error> => {
  const err = (await failure(p)) as Error;
  expect(err).toBeInstanceOf(type as typeof Error);
  expect(err.message).toMatch(message);
  return err;
};

describe('an explicit config path names a regular file of at most CONFIG_MAX_BYTES', () => {
  test('/dev/zero is refused at once, not read forever', async () => {
    const started = Date.now();
    await expectTyped(
      createBackend({ backend: 'cpu', env: {}, configPath: '/dev/zero' }),
      InvalidArgumentError,
      /config file \/dev\/zero is not a regular file/,
    );
    expect(Date.now() - started).toBeLessThan(2000);
  });

  test('a directory is refused, naming the path', async () => {
    const dir = tempDir();
    await expectTyped(
      createBackend({ backend: 'cpu', env: {}, configPath: dir }),
      InvalidArgumentError,
      new RegExp(`config file ${dir} is not a regular file`),
    );
  });

  test('a FIFO is refused at once, never opened (which would wait for a writer)', async () => {
    const fifo = join(tempDir(), 'polyhal.config.json');
    execFileSync('mkfifo', [fifo]);
    // Should the FIFO be opened, this writer ends the wait after 3 s (the read then returns "{}"), so the
    // test fails on its timing and its assertion instead of hanging; with the check it is never needed.
    const writer = spawn(
      process.execPath,
      ['-e', 'setTimeout(() => require("fs").writeFileSync(process.argv[1], "{}"), 3000)', fifo],
      { stdio: 'ignore' },
    );
    try {
      const started = Date.now();
      await expectTyped(
        createBackend({ backend: 'cpu', env: {}, configPath: fifo }),
        InvalidArgumentError,
        new RegExp(`config file ${fifo} is not a regular file`),
      );
      expect(Date.now() - started).toBeLessThan(2000);
      // Discovery skips it as well (it is no file), and does not block either.
      await expect(loadConfig(undefined, join(fifo, '..'))).resolves.toBeUndefined();
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      writer.kill('SIGKILL');
    }
  }, 10_000);

  test('a 3 GB file (sparse) and one just over the cap are refused by size before reading', async () => {
    expect(CONFIG_MAX_BYTES).toBe(2 ** 20);
    const dir = tempDir();
    const big = join(dir, 'big.json');
    writeFileSync(big, '');
    truncateSync(big, 3 * 2 ** 30);
    await expectTyped(
      createBackend({ backend: 'cpu', env: {}, configPath: big }),
      InvalidArgumentError,
      new RegExp(`config file ${big} is 3221225472 bytes, over the limit of 1048576 \\(1 MiB\\)`),
    );
    const over = join(dir, 'over.json');
    writeFileSync(over, `{"backend": "cpu"${' '.repeat(CONFIG_MAX_BYTES - 17)}}`); // CONFIG_MAX_BYTES + 1 bytes
    await expectTyped(loadConfig(over), InvalidArgumentError, /over\.json is 1048577 bytes, over the limit/);
    const under = join(dir, 'under.json');
    writeFileSync(under, `{"backend": "cpu"${' '.repeat(CONFIG_MAX_BYTES - 18)}}`); // CONFIG_MAX_BYTES bytes
    await expect(loadConfig(under)).resolves.toEqual({ file: under, config: { backend: 'cpu' } });
  });
});

describe('discovery of polyhal.config.json stops at the project root', () => {
  // root/polyhal.config.json (above the project), root/proj/{package.json or .git}, root/proj/src/deep (cwd)
  const tree = (marker: 'package.json' | '.git') => {
    const root = tempDir();
    const proj = join(root, 'proj');
    const deep = join(proj, 'src', 'deep');
    mkdirSync(deep, { recursive: true });
    if (marker === '.git') mkdirSync(join(proj, '.git'));
    else writeFileSync(join(proj, 'package.json'), '{}');
    writeFileSync(join(root, 'polyhal.config.json'), JSON.stringify({ backend: 'wasm' }));
    return { root, proj, deep };
  };

  test.each(['package.json', '.git'] as const)('a config above the nearest %s is ignored', async (marker) => {
    const { deep } = tree(marker);
    await expect(loadConfig(undefined, deep)).resolves.toBeUndefined();
    process.chdir(deep);
    const { backend, report } = await createBackend({ backend: 'cpu', env: {} });
    expect(report.configFile).toBeUndefined();
    backend.dispose();
  });

  test('a config in the project root (beside package.json) or between root and cwd is found', async () => {
    const { proj, deep } = tree('package.json');
    const inRoot = join(proj, 'polyhal.config.json');
    writeFileSync(inRoot, JSON.stringify({ backend: 'cpu', options: { memoryLimit: 4096 } }));
    expect((await loadConfig(undefined, deep))?.file).toBe(inRoot);
    const between = join(proj, 'src', 'polyhal.config.json');
    writeFileSync(between, JSON.stringify({ backend: 'cpu', options: { memoryLimit: 8192 } }));
    process.chdir(deep);
    const { backend, report } = await createBackend({ env: {} });
    expect(report.configFile).toBe(between);
    expect(backend.memoryAvailable()).toBe(8192);
    backend.dispose();
  });

  test('outside any project only the working directory itself is searched', async () => {
    // (os.tmpdir() is assumed to lie outside any project: no package.json or .git above it.)
    const root = tempDir();
    const cwd = join(root, 'a', 'b');
    mkdirSync(cwd, { recursive: true });
    writeFileSync(join(root, 'polyhal.config.json'), '{}');
    await expect(loadConfig(undefined, cwd)).resolves.toBeUndefined();
    writeFileSync(join(cwd, 'polyhal.config.json'), '{}');
    expect((await loadConfig(undefined, cwd))?.file).toBe(join(cwd, 'polyhal.config.json'));
  });
});

describe('keys and backend names are own properties only', () => {
  const configFile = (text: string): string => {
    const file = join(tempDir(), 'polyhal.config.json');
    writeFileSync(file, text);
    return file;
  };
  test.each(['constructor', '__proto__', 'toString'])('%s as a config key is an unknown key', async (key) => {
    const file = configFile(`{"${key}": 1}`);
    await expectTyped(
      loadConfig(file),
      InvalidArgumentError,
      new RegExp(`${file}: unknown key '${key}' \\(known: backend, prefer, fallback, options\\)`),
    );
  });

  test.each(['constructor', '__proto__', 'toString'])('%s as an option key is an unknown option', async (key) => {
    const options = JSON.parse(`{"${key}": 1}`) as Record<string, unknown>;
    await expectTyped(
      createBackend({ backend: 'cpu', env: {}, configPath: null, options }),
      InvalidArgumentError,
      new RegExp(`createBackend options: unknown option '${key}' \\(options of the registered backends: .*memoryLimit`),
    );
    await expectTyped(
      loadConfig(configFile(`{"options": {"${key}": 1}}`)).then((c) =>
        createBackend({ backend: 'cpu', env: {}, configPath: c!.file }),
      ),
      InvalidArgumentError,
      new RegExp(`options: unknown option '${key}'`),
    );
    await expectTyped(createWasmBackend(options), InvalidArgumentError, new RegExp(`unknown option '${key}'`));
  });

  test.each(['constructor', '__proto__', 'toString'])('%s as a backend name is an unknown backend', async (name) => {
    for (const how of [
      { backend: name, env: {} },
      { env: { POLYHAL_BACKEND: name } },
      { backend: 'cpu', prefer: [name], env: {} },
      { configPath: configFile(JSON.stringify({ backend: name })), env: {} },
      { backend: 'cpu', configPath: configFile(JSON.stringify({ prefer: ['cpu', name] })), env: {} },
    ]) {
      const err = await expectTyped(
        createBackend({ configPath: null, ...how }),
        UnknownBackendError,
        new RegExp(`unknown backend '${name}'; available backends: .*cpu`),
      );
      expect(err.message).not.toMatch(/native code|\[object Object\]|is not registered/);
    }
  });
});

describe("createBackend's own options are checked", () => {
  test.each([
    [null, /createBackend: options must be an object, got null/],
    [{ configPath: 42 }, /createBackend: option 'configPath' must be a path \(a string\) or null, got 42/],
    [{ prefer: 'cpu' }, /createBackend: option 'prefer' must be an array of strings, got "cpu"/],
    [{ prefer: [] }, /createBackend: option 'prefer' must name at least one backend/],
    [{ backend: '' }, /createBackend: option 'backend' must be a backend name or "auto", got ""/],
    [{ backend: 7 }, /createBackend: option 'backend' must be a string, got 7/],
    [{ fallback: 'yes' }, /createBackend: option 'fallback' must be true or false, got "yes"/],
    [{ env: 'POLYHAL_BACKEND=cpu' }, /createBackend: option 'env' must be an object/],
    [
      { backnd: 'cpu' },
      /createBackend: unknown option 'backnd' \(known: backend, prefer, fallback, options, env, configPath\)/,
    ],
  ])('%j is an InvalidArgumentError naming the option', async (options, message) => {
    await expectTyped(createBackend(options as never), InvalidArgumentError, message);
  });

  test('an empty backend name in polyhal.config.json is an error, not silently auto', async () => {
    const file = join(tempDir(), 'polyhal.config.json');
    writeFileSync(file, '{"backend": ""}');
    await expectTyped(
      createBackend({ env: {}, configPath: file }),
      InvalidArgumentError,
      new RegExp(`${file}: key 'backend' must be a backend name or "auto", got ""`),
    );
  });
});

test('a backend of this project that is not registered names its package (reference, too)', async () => {
  unregisterBackend('reference');
  for (const [name, pkg] of [
    ['reference', '@polyhal/backend-reference'],
    ['webgpu', '@polyhal/backend-webgpu'],
  ]) {
    await expectTyped(
      createBackend({ backend: name, env: {}, configPath: null }),
      UnknownBackendError,
      new RegExp(`${name} is not registered: import '${pkg}' first`),
    );
  }
  // A name of this project in `prefer` that is not imported here is tolerated (a config shared by programs).
  const { backend, report } = await createBackend({ prefer: ['reference', 'cpu'], env: {}, configPath: null });
  expect(report.chosen).toBe('cpu');
  expect(report.attempts[0]).toMatchObject({ backend: 'reference', outcome: 'rejected' });
  backend.dispose();
});
