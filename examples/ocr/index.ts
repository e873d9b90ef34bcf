export { ctcClasses, ctcGreedyDecode, type Decoded } from './ctc-decode.js';
export { type DbOptions, dbPostprocess, readingOrder, type TextBox } from './db-postprocess.js';
export { type DetectOptions, detect, detectionSize } from './detect.js';
export { convexHull, minAreaRect, type Point, type Quad } from './geometry.js';
export { checkImage, type RgbaImage, resize } from './image.js';
export { Ocr, type OcrLine, type OcrModels, type OcrOptions } from './ocr.js';
export { cropBox, recognitionInput, recognize } from './recognize.js';
