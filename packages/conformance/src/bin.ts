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

main(process.argv.slice(2)).then(
  (code) => {
    settled = true;
    process.exit(code);
  },
  (e) => {
    settled = true;
    console.error(e);
    process.exit(2);
  },
);
