/**
 * The examples' onnxruntime peer in a child process (tests/support/ort-server.mjs): the same CreateSession as
 * examples/engine.ts's fromOnnxRuntime, with onnxruntime-node's CPU provider, but the native binding stays out of
 * jest's process. `close()` ends the child (call it in afterAll).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { CreateSession, Session, Tensor } from '../../examples/engine.js';

interface Reply {
  id: number;
  ok?: unknown;
  error?: string;
}

/** A CreateSession on onnxruntime-node in one child process, and the way to end it. */
export function onnxRuntimeInChild(): { create: CreateSession; close(): void } {
  const child = fork(fileURLToPath(new URL('./ort-server.mjs', import.meta.url)), [], {
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let next = 1;
  child.on('message', (m: Reply) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.error !== undefined) p?.reject(new Error(`onnxruntime-node (child process): ${m.error}`));
    else p?.resolve(m.ok);
  });
  child.on('exit', (code, signal) => {
    for (const p of pending.values()) p.reject(new Error(`onnxruntime-node child exited (${code ?? signal})`));
    pending.clear();
  });
  const call = <T>(message: Record<string, unknown>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ id, ...message });
    });
  const create: CreateSession = async (model) => {
    const { session, inputNames, outputNames } = await call<{
      session: number;
      inputNames: string[];
      outputNames: string[];
    }>({ op: 'create', model });
    const s: Session = {
      inputNames,
      outputNames,
      run: (feeds) => call<Record<string, Tensor>>({ op: 'run', session, feeds }),
      release: async () => {
        await call({ op: 'release', session });
      },
    };
    return s;
  };
  return { create, close: () => child.disconnect() };
}
