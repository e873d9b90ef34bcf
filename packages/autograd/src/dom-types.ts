/**
 * Web platform types of the public API, taken from the program's own globals (as the webgpu backend takes
 * GPUDevice): the real type where the program has it (TypeScript's DOM lib, or @types/node's URL and Blob),
 * else `never`. So the published declarations compile under `lib: es2022` alone, and a program with the DOM
 * lib gets the real types.
 */
type Global<K extends string> = typeof globalThis extends Record<K, { prototype: infer T }> ? T : never;

/** WHATWG `URL`, where the program has it. */
export type UrlLike = Global<'URL'>;
/** `Blob` (and so `File`), where the program has it. */
export type BlobLike = Global<'Blob'>;
/**
 * What a canvas can draw (the DOM's CanvasImageSource) and OffscreenCanvas, where the program has them: an
 * image, SVG image, video or canvas element, an ImageBitmap, an OffscreenCanvas or a VideoFrame.
 */
export type ImageSourceLike =
  | Global<'HTMLImageElement'>
  | Global<'SVGImageElement'>
  | Global<'HTMLVideoElement'>
  | Global<'HTMLCanvasElement'>
  | Global<'ImageBitmap'>
  | Global<'OffscreenCanvas'>
  | Global<'VideoFrame'>;
