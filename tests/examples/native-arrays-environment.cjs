// Jest's node environment with the process's own typed-array and ArrayBuffer constructors instead of the test
// context's: onnxruntime-node's native binding makes its output arrays in the main realm, and
// onnxruntime-common's Tensor (loaded in the test context) checks their constructor, so a run inside an
// ordinary jest context fails with "A float32 tensor's data must be type of function Float32Array()".
// Test files that run onnxruntime-node name it in a @jest-environment docblock.
const { TestEnvironment } = require('jest-environment-node');

const NAMES = [
  'ArrayBuffer',
  'SharedArrayBuffer',
  'DataView',
  'Int8Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
];

class NativeArraysEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    for (const name of NAMES) this.global[name] = globalThis[name];
  }
}

module.exports = NativeArraysEnvironment;
