// The browser entry that esbuild (--bundle --platform=browser) and webpack (no config: ./src/index.js
// → dist/main.js) bundle: one matmul on every backend; the page reads window.polyhalResult.
import { createBackend, registeredBackends } from '@polyhal/hal';
import '@polyhal/backend-cpu';
import '@polyhal/backend-wasm';
import '@polyhal/backend-webgpu';

window.polyhalResult = (async () => {
  const out = { registered: registeredBackends() };
  for (const name of ['cpu', 'wasm', 'webgpu']) {
    try {
      const { backend } = await createBackend({ backend: name });
      const c = backend.matmul(backend.fromArray([1, 2, 3, 4], [2, 2]), backend.fromArray([5, 6, 7, 8], [2, 2]));
      out[name] = { device: backend.deviceName, values: Array.from(await backend.read(c)) };
      backend.dispose();
    } catch (e) {
      out[name] = { error: `${e.name}: ${e.message}` };
    }
  }
  return out;
})();
