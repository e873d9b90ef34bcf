// The page browser-save.test.ts loads in headless Chromium (bundled by esbuild from the sources): saveModel and
// loadModel through the browser's own localStorage, IndexedDB, downloads and fetch, and fromPixels on canvases and
// images. Each function returns plain data for the test to check.
import * as ag from '@polyhal/autograd';
import { CpuBackend } from '@polyhal/backend-cpu';

const be = new CpuBackend();
const model = (): ag.Sequential =>
  new ag.Sequential(
    new ag.Linear(4, 8, { backend: be, rng: 1 }),
    new ag.GELU(),
    new ag.LayerNorm(8, { backend: be }),
    new ag.Linear(8, 3, { backend: be, rng: 2 }),
  ).eval();
const x = ag.Tensor.fromArray(be, [0.5, -1, 2, 0.25, 1, 1, -0.5, 3], [2, 4]);
const out = async (m: ag.Module): Promise<number[]> => Array.from(await m.forward(x).data());

/** Saves a model to `target`, loads it back (from `source`, default the same URL) and returns both outputs. */
async function roundTrip(
  target: string,
  source?: string,
): Promise<{ saved: number[]; loaded: number[]; eval: boolean }> {
  const m = model();
  await ag.saveModel(m, target);
  const back = await ag.loadModel(source ?? target, { backend: be });
  return { saved: await out(m), loaded: await out(back), eval: !back.training };
}

/** What localStorage holds under the model's key (base64 of the file), and after removeModel. */
async function localStorageEntry(name: string): Promise<{ length: number; afterRemove: string | null }> {
  await ag.saveModel(model(), `localstorage://${name}`);
  const text = localStorage.getItem(`${ag.LOCAL_STORAGE_PREFIX}${name}`) ?? '';
  await ag.removeModel(`localstorage://${name}`);
  return { length: text.length, afterRemove: localStorage.getItem(`${ag.LOCAL_STORAGE_PREFIX}${name}`) };
}

/** A model too large for localStorage's quota: the error's class and message. */
async function quota(): Promise<{ name: string; message: string; stored: boolean }> {
  const big = new ag.Linear(1500, 1500, { backend: be }); // 9 MB of float32, 12 MB as base64
  try {
    await ag.saveModel(big, 'localstorage://big');
    return { name: 'none', message: '', stored: true };
  } catch (e) {
    const err = e as Error;
    return {
      name: e instanceof ag.StorageQuotaError ? 'StorageQuotaError' : err.name,
      message: err.message,
      stored: localStorage.getItem(`${ag.LOCAL_STORAGE_PREFIX}big`) !== null,
    };
  }
}

/** A missing IndexedDB entry: the error message. */
async function missing(): Promise<string> {
  try {
    await ag.loadModel('indexeddb://never-saved', { backend: be });
    return 'loaded';
  } catch (e) {
    return `${(e as Error).constructor.name}: ${(e as Error).message}`;
  }
}

/** saveModel to downloads:// (the test catches the download); returns the bytes' length. */
async function download(name: string): Promise<number> {
  return (await ag.saveModel(model(), `downloads://${name}`)).length;
}

/** Loads bytes the test hands over (the downloaded file) from a Blob; returns its outputs and a fresh model's. */
async function fromBlob(bytes: number[]): Promise<{ saved: number[]; loaded: number[] }> {
  const back = await ag.loadModel(new Blob([new Uint8Array(bytes)]), { backend: be });
  return { saved: await out(model()), loaded: await out(back) };
}

/** Pixels drawn on a canvas, read by fromPixels from the canvas, an OffscreenCanvas, an image and an ImageBitmap. */
async function pixels(): Promise<Record<string, { shape: number[]; dtype: string; values: number[] }>> {
  const [w, h] = [3, 2];
  const canvas = document.createElement('canvas');
  [canvas.width, canvas.height] = [w, h];
  const ctx = canvas.getContext('2d')!;
  const img = ctx.createImageData(w, h);
  for (let i = 0; i < w * h; i++) img.data.set([i * 40, 255 - i * 30, (i * 77) % 256, 255], i * 4);
  ctx.putImageData(img, 0, 0);
  const off = new OffscreenCanvas(w, h);
  off.getContext('2d')!.putImageData(img, 0, 0);
  const image = new Image();
  image.src = canvas.toDataURL('image/png');
  await image.decode();
  const bitmap = await createImageBitmap(canvas);
  const read = async (t: ag.Tensor) => ({ shape: [...t.shape], dtype: t.dtype, values: Array.from(await t.data()) });
  return {
    imageData: await read(ag.fromPixels(be, img, 4)),
    canvas: await read(ag.fromPixels(be, canvas, 3)),
    offscreen: await read(ag.fromPixels(be, off, 4)),
    image: await read(ag.fromPixels(be, image, 3)),
    bitmap: await read(ag.fromPixels(be, bitmap, 1, { dtype: 'float32' })),
  };
}

Object.assign(window, { polyhalSave: { roundTrip, localStorageEntry, quota, missing, download, fromBlob, pixels } });
