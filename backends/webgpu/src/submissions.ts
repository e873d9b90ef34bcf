/**
 * Outcomes of command-buffer submissions ("correct or a typed error, never silent"). A WebGPU error
 * in any op of a submission invalidates the whole command buffer (an invalid bind group or pipeline
 * makes the encoder invalid; a destroyed buffer fails the submit), so nothing of it runs and every
 * buffer it writes holds stale data. Each submission therefore collects the error scopes of its ops
 * and of itself, and remembers the submissions that last wrote the buffers it reads (its
 * dependencies): it fails when a scope reports an error or a dependency failed (its results were
 * computed from lost data), with that root-cause error.
 *
 * Every buffer remembers the last submission that wrote it, so a read of a buffer written by a
 * failed submission rejects with that error for as long as the buffer holds the result — a read or a
 * synchronize never consumes it — while buffers written by submissions that succeeded (or by the
 * host) read normally. Buffers are named by keys: the HAL's buffer ids, and negative keys for the
 * backend's own scratch buffers.
 */
import { GpuError } from './gpu-error.js';

type ScopeKind = 'validation' | 'out-of-memory';

const DONE: Promise<void> = Promise.resolve();

export class Submission {
  /** The ops encoded into it (for error messages). */
  readonly ops: string[] = [];
  /** The error of this submission or of a submission it read from; final once `settled` resolves. */
  error: GpuError | null = null;
  /** Its own error (a scope of its ops or of the submission), not one inherited from a dependency. */
  ownError: GpuError | null = null;
  done = false;
  /** Resolves when every scope of it and every dependency have settled (never rejects). */
  settled: Promise<void> = DONE;
  // Scopes are counted, not kept: one callback per scope and nothing else per op stays on the heap
  // while the event loop has not yet turned.
  private pendingScopes = 0;
  private sealed = false;
  private deps: Set<Submission> | null = new Set();
  private release: (() => void) | null = null;

  /** Records the outcome of an error scope (`p`: popErrorScope) of `op`. */
  watch(op: string, kind: ScopeKind, p: Promise<GPUError | null>): void {
    this.pendingScopes++;
    p.then(
      (err) => {
        if (err && !this.ownError) this.ownError = new GpuError(op, kind, err.message);
        this.scopeSettled();
      },
      (e: unknown) => {
        if (!this.ownError) this.ownError = new GpuError(op, 'internal', e instanceof Error ? e.message : String(e));
        this.scopeSettled();
      },
    );
  }

  /** This submission reads what `s` wrote. */
  dependOn(s: Submission): void {
    if (s !== this && !(s.done && !s.error)) this.deps!.add(s);
  }

  /** Called once it is submitted: no more scopes or dependencies. */
  seal(): Promise<void> {
    const deps = [...this.deps!];
    this.deps = null;
    this.sealed = true;
    const finish = (): void => {
      this.error = this.ownError ?? deps.find((d) => d.error)?.error ?? null;
      this.done = true;
    };
    if (this.pendingScopes === 0 && deps.length === 0) {
      finish();
      return (this.settled = DONE);
    }
    const scopes =
      this.pendingScopes === 0
        ? DONE
        : new Promise<void>((resolve) => {
            this.release = resolve;
          });
    this.settled = scopes.then(() => (deps.length ? Promise.all(deps.map((d) => d.settled)) : undefined)).then(finish);
    return this.settled;
  }

  private scopeSettled(): void {
    if (--this.pendingScopes === 0 && this.sealed && this.release) {
      this.release();
      this.release = null;
    }
  }
}

export class SubmissionTracker {
  private openSubmission: Submission | null = null;
  private readonly writers = new Map<number, Submission>();
  private readonly inflight = new Set<Submission>();
  private unreported: GpuError | null = null;

  /** The submission being encoded, or null. */
  get open(): Submission | null {
    return this.openSubmission;
  }

  /** Starts the next submission (the caller pushes its error scopes). */
  begin(): Submission {
    return (this.openSubmission ??= new Submission());
  }

  /** The open submission reads buffer `key`. */
  read(key: number): void {
    const w = this.writers.get(key);
    if (w) this.openSubmission!.dependOn(w);
  }

  /** The open submission writes buffer `key` (possibly in part, so it also depends on the previous writer). */
  write(key: number): void {
    const s = this.openSubmission!;
    const w = this.writers.get(key);
    if (w) s.dependOn(w);
    this.writers.set(key, s);
  }

  /** Buffer `key` now holds data from elsewhere (a host write) or is gone (freed). */
  forget(key: number): void {
    this.writers.delete(key);
  }

  /** The submission that last wrote buffer `key` (undefined: the host, or nothing yet). */
  writer(key: number): Submission | undefined {
    return this.writers.get(key);
  }

  /** Seals the open submission (it has been submitted) and returns it. */
  seal(): Submission {
    const s = this.openSubmission!;
    this.openSubmission = null;
    this.inflight.add(s);
    void s.seal().then(() => {
      this.inflight.delete(s);
      if (s.ownError && !this.unreported) this.unreported = s.ownError;
    });
    return s;
  }

  /** Submissions sealed and not settled yet. */
  get inflightCount(): number {
    return this.inflight.size;
  }

  /** Resolves when every sealed submission has settled. */
  async settleAll(): Promise<void> {
    while (this.inflight.size > 0) await Promise.all([...this.inflight].map((s) => s.settled));
    await DONE; // the bookkeeping of the last ones (a then() after `settled`)
  }

  /** The first error of a failed submission not yet reported by synchronize(), once. */
  takeUnreported(): GpuError | null {
    const e = this.unreported;
    this.unreported = null;
    return e;
  }
}
