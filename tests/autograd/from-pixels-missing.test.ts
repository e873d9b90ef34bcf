// decodeImage when the decoder package is not installed: pngjs and jpeg-js are mocked as modules that fail
// to load, as a missing package does; fromPixels on ImageData needs neither.
import { expect, jest, test } from '@jest/globals';
import type { ComputeBackend } from '@polyhal/hal';

const fail = () => {
  throw new Error("Cannot find package 'x'");
};
jest.unstable_mockModule('pngjs', fail);
jest.unstable_mockModule('jpeg-js', fail);
const ag = await import('@polyhal/autograd');
const { REPO_BACKENDS } = await import('../support/backends.js');

test('a MissingDecoderError names the package to install; ImageData still works', async () => {
  const be: ComputeBackend = await REPO_BACKENDS['cpu']!();
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]);
  await expect(ag.decodeImage(be, png)).rejects.toThrow(ag.MissingDecoderError);
  await expect(ag.decodeImage(be, png)).rejects.toThrow(/the pngjs package is needed .*npm install pngjs/);
  await expect(ag.decodeImage(be, new Uint8Array([0xff, 0xd8, 0xff, 0]))).rejects.toThrow(/npm install jpeg-js/);
  const t = ag.fromPixels(be, { data: new Uint8ClampedArray([1, 2, 3, 4]), width: 1, height: 1 });
  expect(Array.from(await t.data())).toEqual([1, 2, 3]);
  t.dispose();
  be.dispose();
});
