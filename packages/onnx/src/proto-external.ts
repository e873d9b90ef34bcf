/**
 * External data of ONNX models (tensors stored beside `model.onnx`, `data_location = EXTERNAL`): a loader
 * that reads them from a directory with a synchronous file system (Node.js's `fs`, or any object of the same
 * four calls), checking every read against the file's size before allocating anything.
 */
import type { ExternalDataLoader } from './proto-tensor.js';

/** The synchronous file calls the loader uses (Node.js's `node:fs` has them). */
export interface SyncFileSystem {
  /** Opens `path` for reading; returns a file descriptor. */
  openSync(path: string, flags: 'r'): number;
  /** The open file's size in bytes. */
  fstatSync(fd: number): { size: number | bigint };
  /** Reads up to `length` bytes at file position `position` into buffer[offset...]; returns the count read. */
  readSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number;
  /** Closes the descriptor. */
  closeSync(fd: number): void;
}

/**
 * A loader of external tensor data from files under `dir` (the model's directory): reads exactly `length`
 * bytes of `dir/location` at `offset`. Throws, before allocating, when the file is shorter than
 * `offset + length`; decodeModel turns any throw into an OnnxDecodeError naming the tensor, the file and the
 * range. `location` arrives checked by the decoder (relative, no `..`). Files stay open only during a read.
 *
 * ```ts
 * import * as fs from 'node:fs';
 * const model = decodeModel(fs.readFileSync(path), {
 *   source: path,
 *   externalData: externalDataFromDirectory(dirname(path), fs),
 * });
 * ```
 */
export function externalDataFromDirectory(dir: string, fs: SyncFileSystem): ExternalDataLoader {
  return (location, offset, length) => {
    const path = `${dir.replace(/[\\/]+$/, '')}/${location}`;
    const fd = fs.openSync(path, 'r');
    try {
      const size = Number(fs.fstatSync(fd).size);
      if (offset + length > size)
        throw new Error(`${length} bytes at offset ${offset} run past the end of the file (${size} bytes)`);
      const buf = new Uint8Array(length);
      let done = 0;
      while (done < length) {
        const n = fs.readSync(fd, buf, done, length - done, offset + done);
        if (n <= 0) throw new Error(`the file ended after ${offset + done} bytes`);
        done += n;
      }
      return buf;
    } finally {
      fs.closeSync(fd);
    }
  };
}
