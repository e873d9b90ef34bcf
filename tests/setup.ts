// Leaks found by the garbage collector are reported on stderr directly: through console, a report that
// arrives after a test file finished would make jest fail the run for logging late.
import { setLeakReporter } from '@polyhal/autograd';

setLeakReporter((m) => process.stderr.write(`${m}\n`));
