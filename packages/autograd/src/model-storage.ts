/**
 * Where `saveModel` writes a model file and `loadModel` reads one (tfjs's IO handlers): a path or `file://` URL
 * in Node (node:fs), `localstorage://name` (base64 text in window.localStorage), `indexeddb://name` (the bytes
 * in an IndexedDB object store), `downloads://name` (a Blob saved through an anchor's download; save only) and
 * `http://`/`https://` URLs (fetch; load only).
 */
import { describeValue, InvalidArgumentError, PolyHalError } from '@polyhal/hal';
import { nodeBuiltin } from '@polyhal/hal/internal';

type Fs = typeof import('node:fs');
/** A path, or a file:// URL as a URL (node:fs takes both). */
const fsPath = (scheme: string, rest: string, url: string): string | URL => (scheme === 'file' ? new URL(url) : rest);

/**
 * The browser's storage refused the file: localStorage's quota (about 5 MB per origin in most browsers, and
 * base64 text takes 4/3 of the bytes) or IndexedDB's. Use `indexeddb://` or `downloads://` for larger models.
 */
export class StorageQuotaError extends PolyHalError {}

/** The localStorage key of `localstorage://name` (tfjs keeps its own under `tensorflowjs_models/`). */
export const LOCAL_STORAGE_PREFIX = 'polyhal_models/';
/** The IndexedDB database and object store of `indexeddb://name`; the key is the name. */
export const INDEXED_DB = { database: 'polyhal_models', store: 'models' } as const;

/** A target or source string split into its scheme ('' for a plain path) and the rest. */
function parse(url: string): { scheme: string; rest: string } {
  const m = /^([a-z][a-z0-9+.-]*):\/\/(.*)$/i.exec(url);
  return m ? { scheme: m[1]!.toLowerCase(), rest: m[2]! } : { scheme: '', rest: url };
}

function need<T>(op: string, what: string, v: T | undefined): T {
  if (v === undefined || v === null)
    throw new InvalidArgumentError(`${op}: ${what} is not available in this runtime (a browser page has it)`);
  return v;
}

function base64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

function unbase64(op: string, text: string): Uint8Array {
  let s: string;
  try {
    s = atob(text);
  } catch {
    throw new InvalidArgumentError(`${op}: the stored text is not base64`);
  }
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

function openDb(op: string): Promise<IDBDatabase> {
  const idb = need(op, 'indexedDB', (globalThis as { indexedDB?: IDBFactory }).indexedDB);
  return new Promise((resolve, reject) => {
    const req = idb.open(INDEXED_DB.database, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(INDEXED_DB.store);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(new InvalidArgumentError(`${op}: IndexedDB did not open (${req.error?.message})`));
  });
}

async function idb<T>(op: string, mode: IDBTransactionMode, act: (s: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  const db = await openDb(op);
  try {
    return await new Promise<T>((resolve, reject) => {
      const tx = db.transaction(INDEXED_DB.store, mode);
      const req = act(tx.objectStore(INDEXED_DB.store));
      let result: T;
      req.onsuccess = () => {
        result = req.result;
      };
      tx.oncomplete = () => resolve(result);
      const fail = (): void => {
        const e = req.error ?? tx.error;
        reject(
          e?.name === 'QuotaExceededError'
            ? new StorageQuotaError(`${op}: IndexedDB's quota is exceeded (${e.message})`)
            : new InvalidArgumentError(`${op}: IndexedDB failed (${e?.message ?? 'aborted'})`),
        );
      };
      tx.onerror = fail;
      tx.onabort = fail;
    });
  } finally {
    db.close();
  }
}

/**
 * Writes `bytes` to `target`: a file path or `file://` URL (Node), `localstorage://name`, `indexeddb://name`
 * or `downloads://name` (the browser saves `name`, with `.safetensors` added unless it has an extension).
 * StorageQuotaError when localStorage or IndexedDB refuses the size; InvalidArgumentError for an unknown
 * scheme, an empty name, or a target this runtime lacks (localStorage in Node).
 */
export async function writeModelBytes(target: string, bytes: Uint8Array): Promise<void> {
  const op = 'saveModel';
  const { scheme, rest } = parse(target);
  if (rest === '') throw new InvalidArgumentError(`${op}: ${JSON.stringify(target)} names no file or key`);
  if (scheme === '' || scheme === 'file') {
    const fs = await nodeBuiltin<Fs>('fs');
    if (!fs)
      throw new InvalidArgumentError(
        `${op}: ${target} is a file, and this runtime has no file system; in a browser use localstorage://, ` +
          'indexeddb:// or downloads://',
      );
    await fs.promises.writeFile(fsPath(scheme, rest, target), bytes);
  } else if (scheme === 'localstorage') {
    const store = need(op, 'localStorage', (globalThis as { localStorage?: Storage }).localStorage);
    const text = base64(bytes);
    try {
      store.setItem(LOCAL_STORAGE_PREFIX + rest, text);
    } catch (e) {
      if ((e as Error)?.name === 'QuotaExceededError')
        throw new StorageQuotaError(
          `${op}: localStorage's quota does not hold ${rest} (${bytes.length} bytes, ${text.length} as base64): ` +
            'save to indexeddb:// or downloads:// instead',
        );
      throw e;
    }
  } else if (scheme === 'indexeddb') {
    await idb(op, 'readwrite', (s) => s.put(bytes, rest));
  } else if (scheme === 'downloads') {
    const doc = need(op, 'document', (globalThis as { document?: Document }).document);
    const url = URL.createObjectURL(new Blob([bytes as Uint8Array<ArrayBuffer>], { type: 'application/octet-stream' }));
    const a = doc.createElement('a');
    a.href = url;
    a.download = /\.[^/.]+$/.test(rest) ? rest : `${rest}.safetensors`;
    doc.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  } else
    throw new InvalidArgumentError(
      `${op}: unknown target scheme ${JSON.stringify(`${scheme}://`)}; a path, file://, localstorage://, ` +
        'indexeddb:// or downloads://',
    );
}

/** GET `url`'s body; InvalidArgumentError for a failed request or a status other than 2xx. */
async function fetchBytes(op: string, url: string): Promise<Uint8Array> {
  let res: Response;
  try {
    res = await fetch(url);
  } catch (e) {
    throw new InvalidArgumentError(`${op}: GET ${url} failed (${(e as Error).message})`);
  }
  if (!res.ok) throw new InvalidArgumentError(`${op}: GET ${url} answered ${res.status} ${res.statusText}`);
  return new Uint8Array(await res.arrayBuffer());
}

/**
 * The bytes of a model file from `source`: a Uint8Array or ArrayBuffer (as they are), a Blob or File, a path or
 * `file://` URL (Node; in a browser a plain path is fetched, relative to the page), `localstorage://name`,
 * `indexeddb://name`, or an `http(s)://` URL (fetch).
 * InvalidArgumentError naming the source when nothing is stored there or the fetch fails.
 */
export async function readModelBytes(source: unknown): Promise<Uint8Array> {
  const op = 'loadModel';
  if (source instanceof Uint8Array) return source;
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  if (typeof Blob !== 'undefined' && source instanceof Blob) return new Uint8Array(await source.arrayBuffer());
  if (typeof source !== 'string')
    throw new InvalidArgumentError(
      `${op}: source must be a path, a URL, bytes or a Blob, got ${describeValue(source)}`,
    );
  const { scheme, rest } = parse(source);
  const missing = (): InvalidArgumentError => new InvalidArgumentError(`${op}: nothing is stored at ${source}`);
  if (scheme === '' || scheme === 'file') {
    const fs = await nodeBuiltin<Fs>('fs');
    // A runtime without node:fs (a browser page or worker): a plain path is a URL relative to the page.
    if (!fs && scheme === '') return fetchBytes(op, source);
    if (!fs) throw new InvalidArgumentError(`${op}: ${source} needs a file system, which this runtime lacks`);
    try {
      return new Uint8Array(await fs.promises.readFile(fsPath(scheme, rest, source)));
    } catch (e) {
      throw new InvalidArgumentError(`${op}: cannot read ${source} (${(e as Error).message})`);
    }
  }
  if (scheme === 'localstorage') {
    const store = need(op, 'localStorage', (globalThis as { localStorage?: Storage }).localStorage);
    const text = store.getItem(LOCAL_STORAGE_PREFIX + rest);
    if (text === null) throw missing();
    return unbase64(op, text);
  }
  if (scheme === 'indexeddb') {
    const v: unknown = await idb(op, 'readonly', (s) => s.get(rest));
    if (v instanceof Uint8Array) return v;
    if (v instanceof ArrayBuffer) return new Uint8Array(v);
    throw missing();
  }
  if (scheme === 'http' || scheme === 'https') return fetchBytes(op, source);
  if (scheme === 'downloads')
    throw new InvalidArgumentError(`${op}: downloads:// is a save target; load the downloaded File (a Blob) instead`);
  throw new InvalidArgumentError(`${op}: unknown source scheme ${JSON.stringify(`${scheme}://`)}`);
}

/** Removes a model stored at `localstorage://name` or `indexeddb://name` (tfjs's `tf.io.removeModel`). */
export async function removeModel(url: string): Promise<void> {
  const { scheme, rest } = parse(url);
  if (scheme === 'localstorage')
    need('removeModel', 'localStorage', (globalThis as { localStorage?: Storage }).localStorage).removeItem(
      LOCAL_STORAGE_PREFIX + rest,
    );
  else if (scheme === 'indexeddb') await idb('removeModel', 'readwrite', (s) => s.delete(rest));
  else throw new InvalidArgumentError(`removeModel: ${JSON.stringify(url)} is not localstorage:// or indexeddb://`);
}
