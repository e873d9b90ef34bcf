// What every suite shares: timing a PolyHAL call against its TensorFlow.js peer (lib/harness.mjs's pair, with
// PolyHAL timed alone when the peer cannot run the workload), seeded inputs, and forcing a result the way a
// user would read it.
import { mulberry32 } from '@polyhal/hal';
import { pair as timePair, solo } from '../lib/harness.mjs';

/** Both timed; when the peer cannot run the workload, PolyHAL alone with the peer's error recorded. */
export async function pair(ours, theirs, opts) {
  const t = await timePair(ours, theirs, opts);
  if (t.peerError) return { ours: await solo(ours, opts), theirs: null, peerError: t.peerError };
  return t;
}

export const rand = (n, seed) => {
  const r = mulberry32(seed);
  return Float32Array.from({ length: n }, () => r() * 2 - 1);
};
/** Reads one element of `x` (a 1-element view), which forces every op queued before it. */
export const readOne = async (be, x) => {
  const v = be.shrink(
    x,
    x.shape.map(() => [0, 1]),
  );
  await be.read(v);
};
// On a GPU the result must be read to force the work. CPU backends (cpu, wasm and their tfjs peers)
// compute inside the call, so their kernels are timed alone: tfjs-wasm's one-element read of a large
// tensor (slice, then data) costs more than the op itself (55 ms after a 16M-element add of 16 ms),
// which would credit PolyHAL with TensorFlow.js's read path.
export const force = async (be, x) => {
  if (be.deviceType === 'gpu') await readOne(be, x);
};
export const forceTf = async (be, tf, c) => {
  if (be.deviceType !== 'gpu') return;
  const o = tf.slice(
    c,
    c.shape.map(() => 0),
    c.shape.map(() => 1),
  );
  await o.data();
  o.dispose();
};
