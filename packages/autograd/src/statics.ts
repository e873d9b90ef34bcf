/**
 * The creation functions as Tensor statics (PyTorch's `torch.zeros` as `Tensor.zeros`): `Tensor.zeros(be,
 * [2, 3])` is `zeros(be, [2, 3])`, `Tensor.from(be, [[1, 2], [3, 4]])` is `tensor(be, ...)`. Same arguments,
 * options and errors as the functions in creation.ts and random.ts.
 */
import { arange, eye, linspace, ones, tensor, zeros } from './creation.js';
import { rand, randint, randn } from './random.js';
import { Tensor } from './tensor.js';

declare module './tensor.js' {
  namespace Tensor {
    /** `tensor(be, data, opts)`: a tensor from nested arrays, shape and dtype inferred (creation.ts). */
    let from: typeof tensor;
    /** `zeros(be, shape, opts)` (creation.ts). */
    let zeros: typeof import('./creation.js').zeros;
    /** `ones(be, shape, opts)` (creation.ts). */
    let ones: typeof import('./creation.js').ones;
    /** `arange(be, [start,] end[, step], opts)` (creation.ts). */
    let arange: typeof import('./creation.js').arange;
    /** `linspace(be, start, stop, num, opts)` (creation.ts). */
    let linspace: typeof import('./creation.js').linspace;
    /** `eye(be, n, m, opts)` (creation.ts). */
    let eye: typeof import('./creation.js').eye;
    /** `rand(be, shape, opts)` (random.ts). */
    let rand: typeof import('./random.js').rand;
    /** `randn(be, shape, opts)` (random.ts). */
    let randn: typeof import('./random.js').randn;
    /** `randint(be, low, high, shape, opts)` (random.ts). */
    let randint: typeof import('./random.js').randint;
  }
}

Object.assign(Tensor, { from: tensor, zeros, ones, arange, linspace, eye, rand, randn, randint });
