// Benchmark suite 'tfjs-ports': the tfjs-examples ported line for line (examples/tfjs-ports) at their bench sizes,
// the tfjs original on TensorFlow.js's backend of the same name and the PolyHAL port on this backend, in one process
// on the same data: time per epoch (the polynomial example: its 75 SGD steps) and, beside it, what each reached
// after the same epochs (`accuracy`, `peerAccuracy`: MNIST validation accuracy, the sentiment LSTM's test accuracy,
// the polynomial's final loss) and the lines of each twin. The tfjs twin fails on tfjs-wasm for the ConvNet and the
// LSTM (no Conv2DBackpropFilter, no UnsortedSegmentSum kernel): PolyHAL is then timed alone, the error recorded.
// The 1-minute load average before and after each row is kept (`load`): the 2-core VM is often shared.
import os from 'node:os';
import { median, runMnist, runPolynomial, runSentiment } from '../../examples/tfjs-ports/run.mjs';

const quartiles = (xs) => {
  const s = [...xs].sort((p, q) => p - q);
  return s[Math.floor(s.length * 0.75)] - s[Math.floor(s.length * 0.25)];
};
const stats = (ms) => ({ median: median(ms), spread: quartiles(ms) });
const load = () => Number(os.loadavg()[0].toFixed(2));

/** One row: `times` picks the timed samples of a twin, `reached` its figure after training. */
function row(suite, size, port, times, reached, before) {
  const peer = port.tfjs.error ? null : port.tfjs;
  return {
    suite,
    size,
    unit: 'ms',
    work: 0,
    ours: stats(times(port.polyhal)),
    theirs: peer ? stats(times(peer)) : null,
    ...(peer ? {} : { peerError: port.tfjs.error }),
    extra: {
      accuracy: reached(port.polyhal),
      peerAccuracy: peer ? reached(peer) : null,
      lines: port.lines.polyhal,
      peerLines: port.lines.tfjs,
      load: [before, load()],
    },
  };
}

export const TFJS_PORT_SUITES = {
  async 'tfjs-ports'(be) {
    const rows = [];
    let before = load();
    const m = await runMnist(be, 'bench');
    const { trainSize, testSize, epochs, batchSize } = m.size;
    rows.push(
      row(
        `MNIST ConvNet epoch (tfjs-examples/mnist; ${trainSize} digits, batch ${batchSize}, Adam; ` +
          `accuracy: validation on ${testSize} after ${epochs} epochs)`,
        trainSize,
        m,
        (t) => t.epochMs,
        (t) => t.valAccuracy.at(-1),
        before,
      ),
    );
    before = load();
    const p = await runPolynomial(be, 'bench');
    rows.push(
      row(
        `polynomial regression, ${p.size.numIterations} SGD steps (tfjs-examples/polynomial-regression-core; ` +
          `accuracy: final loss)`,
        p.size.numPoints,
        p,
        (t) => t.runMs.slice(1), // the first run warms up
        (t) => t.loss.at(-1),
        before,
      ),
    );
    before = load();
    const s = await runSentiment(be, 'bench');
    rows.push(
      row(
        `sentiment LSTM epoch (tfjs-examples/sentiment; synthetic reviews, not IMDB; ${s.size.trainSize} × ` +
          `${s.size.maxLen} tokens, batch ${s.size.batchSize}; accuracy: test after ${s.size.epochs} epochs)`,
        s.size.trainSize,
        s,
        (t) => t.epochMs,
        (t) => t.testAccuracy,
        before,
      ),
    );
    return rows;
  },
};
