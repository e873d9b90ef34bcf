// Leaks found by the garbage collector are reported on stderr directly: through console, a report that
// arrives after a test file finished would make jest fail the run for logging late.
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setLeakReporter } from '@polyhal/autograd';

setLeakReporter((m) => process.stderr.write(`${m}\n`));

// The Vulkan loader warns when XDG_RUNTIME_DIR is unset; give Dawn (and spawned runtimes) one.
if (!process.env['XDG_RUNTIME_DIR']) {
  const dir = join(tmpdir(), `polyhal-xdg-${process.getuid?.() ?? 'user'}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  process.env['XDG_RUNTIME_DIR'] = dir;
}
