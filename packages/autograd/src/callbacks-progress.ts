/**
 * A terminal progress bar for fit, drawn with cli-progress (the CLI's bar). The module is loaded when
 * training begins, by a dynamic import that bundlers leave alone, so the autograd package has no
 * dependency on it: install cli-progress beside it to use the bar, or pass the module in `options.module`.
 */
import type { Callback } from './callbacks.js';

/** The part of cli-progress's API the bar uses. */
interface CliProgressModule {
  SingleBar: new (
    options: Record<string, unknown>,
    preset?: unknown,
  ) => {
    start(total: number, value: number, payload?: Record<string, unknown>): void;
    update(value: number, payload?: Record<string, unknown>): void;
    stop(): void;
  };
  Presets: { shades_classic: unknown };
}

/** Options of progressBar. */
export interface ProgressBarOptions {
  /** Where the bar is drawn (default process.stderr). */
  stream?: unknown;
  /** The cli-progress module itself (default: imported when training begins). */
  module?: unknown;
}

/**
 * A Callback drawing one bar per epoch in a terminal: `epoch 2/5 [████░░] 120/469 | loss 0.3121 | acc
 * 0.9012 | 8123 samples/s`, then the epoch's logs (val_ values included) when it ends.
 */
export function progressBar(options: ProgressBarOptions = {}): Callback {
  let lib: CliProgressModule | null = null;
  let bar: InstanceType<CliProgressModule['SingleBar']> | null = null;
  let epochStart = 0;
  let batches = 0;
  const fmt = (logs: Record<string, number>): string =>
    Object.entries(logs)
      .map(([k, v]) => `${k} ${k === 'lr' ? v.toExponential(2) : v.toFixed(4)}`)
      .join(' | ');
  return {
    async onTrainBegin() {
      if (!lib) {
        const specifier = 'cli-progress';
        const m = (options.module ?? (await import(/* webpackIgnore: true */ /* @vite-ignore */ specifier))) as {
          default?: CliProgressModule;
        } & CliProgressModule;
        lib = m.SingleBar ? m : m.default!;
      }
    },
    onEpochBegin(epoch, ctx) {
      bar = new lib!.SingleBar(
        {
          format: `epoch ${epoch + 1}/${ctx.epochs} [{bar}] {value}/{total} | {logs} | {sps} samples/s`,
          hideCursor: true,
          noTTYOutput: true,
          notTTYSchedule: 10_000,
          stream: options.stream ?? (globalThis as { process?: { stderr?: unknown } }).process?.stderr,
        },
        lib!.Presets.shades_classic,
      );
      epochStart = performance.now();
      batches = ctx.batches;
      bar.start(batches, 0, { logs: '', sps: '-' });
    },
    onBatchEnd(batch, logs, progress) {
      const sps = progress.samples / Math.max(1e-9, (performance.now() - epochStart) / 1000);
      bar?.update(batch + 1, { logs: fmt(logs), sps: sps.toFixed(0) });
    },
    onEpochEnd(_epoch, logs) {
      bar?.update(batches, { logs: fmt(logs) });
      bar?.stop();
      bar = null;
    },
  };
}
