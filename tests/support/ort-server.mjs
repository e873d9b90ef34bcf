// onnxruntime-node behind process messages (child_process.fork with serialization 'advanced', so typed arrays
// travel as they are): the examples' tests run their onnxruntime peer here rather than in jest's process, where
// the native binding's threads and finalizers outlive the test file that loaded them.
//   { id, op: 'create', model: Uint8Array }        → { id, ok: { session, inputNames, outputNames } }
//   { id, op: 'run', session, feeds: { name: { type, dims, data } } } → { id, ok: { name: { type, dims, data } } }
//   { id, op: 'release', session }                 → { id, ok: true }
// Any failure answers { id, error: message }. The process ends when its parent disconnects.
import * as ort from 'onnxruntime-node';

const sessions = new Map();
let next = 1;

async function handle(m) {
  if (m.op === 'create') {
    const s = await ort.InferenceSession.create(m.model, { logSeverityLevel: 3 });
    const session = next++;
    sessions.set(session, s);
    return { session, inputNames: s.inputNames, outputNames: s.outputNames };
  }
  const s = sessions.get(m.session);
  if (!s) throw new Error(`no session ${m.session}`);
  if (m.op === 'run') {
    const feeds = {};
    for (const [name, t] of Object.entries(m.feeds)) feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
    const out = await s.run(feeds);
    const res = {};
    for (const [name, t] of Object.entries(out)) res[name] = { type: t.type, dims: [...t.dims], data: t.data };
    return res;
  }
  if (m.op === 'release') {
    await s.release();
    sessions.delete(m.session);
    return true;
  }
  throw new Error(`unknown op ${m.op}`);
}

process.on('message', (m) => {
  handle(m).then(
    (ok) => process.send({ id: m.id, ok }),
    (e) => process.send({ id: m.id, error: String(e?.message ?? e) }),
  );
});
process.on('disconnect', () => process.exit(0));
