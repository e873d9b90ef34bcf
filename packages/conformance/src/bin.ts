import { main } from './cli.js';

// A promise that never settles and holds no timer lets the event loop drain: without this, the process
// would exit 0 with no output. Timeouts make this unreachable in the runner; this is the last guard.
let settled = false;
process.on('beforeExit', () => {
  if (settled) return;
  console.error(
    'error: the run stopped with work that never settled (a backend promise that never resolves and ' +
      'holds nothing open); no result',
  );
  process.exit(1);
});

// Exits once stdout and stderr have flushed: to a pipe their writes are asynchronous, and a bare
// process.exit cut a long report (thousands of FAIL lines) short. (Backends may hold handles open, so
// the process does not end by itself.)
const exit = (code: number): void => {
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
};

main(process.argv.slice(2)).then(
  (code) => {
    settled = true;
    exit(code);
  },
  (e) => {
    settled = true;
    console.error(e);
    exit(2);
  },
);
