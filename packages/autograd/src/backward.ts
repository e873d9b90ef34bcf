/**
 * The backward engine: walks the graph from an output in reverse topological order, runs each op's
 * gradient rule (ops.ts) and accumulates into the leaves' `.grad`. Checks everything it can before
 * allocating anything, and frees everything it allocated when something throws part way.
 */
import {
  type ComputeBackend,
  DeviceMismatchError,
  DTypeError,
  InvalidArgumentError,
  isWholeBuffer,
  type NDArray,
  ShapeMismatchError,
  UseAfterFreeError,
} from '@polyhal/hal';
import { keep } from './scope.js';
import { type BackwardOptions, releaseNode, Tensor } from './tensor.js';

/**
 * Hears each leaf gradient backward writes (`accumulated`: added to a gradient the leaf had): compile.ts records
 * a training function's leaf gradients this way. Internal; one observer at a time.
 */
let leafGradObserver: ((leaf: Tensor, accumulated: boolean) => void) | null = null;

/** Sets (or clears, with null) the observer of leaf gradients; returns the one it replaces. */
export function observeLeafGrads(fn: ((leaf: Tensor, accumulated: boolean) => void) | null) {
  const prev = leafGradObserver;
  leafGradObserver = fn;
  return prev;
}

const describe = (t: Tensor): string =>
  `tensor ${t.id} [${t.shape.join(', ')}]${t.gradFn ? ` (result of '${t.gradFn}')` : ''}`;

/**
 * The tensors of root's graph that need a gradient, inputs before the ops that use them. Throws
 * UseAfterFreeError (before anything is allocated) for a disposed tensor or a freed graph on the way.
 */
function graphOrder(root: Tensor): Tensor[] {
  const order: Tensor[] = [];
  const seen = new Set<Tensor>();
  const visit = (t: Tensor, user: Tensor | null): void => {
    if (seen.has(t) || !t.requiresGrad) return;
    seen.add(t);
    if (t.isDisposed) {
      throw new UseAfterFreeError(
        `backward: ${describe(t)} was disposed before ` +
          `backward${user ? `, but '${user.gradFn}' (tensor ${user.id}) needs its gradient` : ''}; ` +
          'keep every tensor of the graph alive until backward has run (dispose it afterwards, or ' +
          'return it from its scope)',
      );
    }
    if (!t.node && t.gradFn) {
      throw new UseAfterFreeError(
        `backward: the graph behind ${describe(t)} was freed by an earlier backward(); to run ` +
          `backward through it again, ` +
          'pass { retainGraph: true } to the earlier backward (gradients then accumulate)',
      );
    }
    for (const i of t.node?.inputs ?? []) visit(i, t);
    order.push(t);
  };
  visit(root, null);
  return order;
}

function checkGradOutput(root: Tensor, gradOutput: Tensor | undefined): void {
  if (!gradOutput) {
    if (root.size !== 1) {
      throw new ShapeMismatchError(
        `backward: a gradient can be created implicitly only for one-element outputs, got ` +
          `[${root.shape.join(', ')}]; pass gradOutput`,
        [root.shape],
      );
    }
    return;
  }
  gradOutput.assertLive('backward (gradOutput)');
  if (gradOutput.backend !== root.backend) {
    throw new DeviceMismatchError(
      `backward: gradOutput is on ${gradOutput.backend.name} (${gradOutput.backend.deviceName}) but ` +
        `the output is on ${root.backend.name} (${root.backend.deviceName}); move it with await gradOutput.to(backend)`,
    );
  }
  if (gradOutput.shape.length !== root.shape.length || gradOutput.shape.some((d, i) => d !== root.shape[i])) {
    throw new ShapeMismatchError(
      `backward: gradOutput has shape [${gradOutput.shape.join(', ')}] but the output has shape ` +
        `[${root.shape.join(', ')}]; they must be equal`,
      [gradOutput.shape, root.shape],
    );
  }
  if (gradOutput.dtype !== root.dtype)
    throw new DTypeError(`backward: gradOutput has dtype ${gradOutput.dtype} but the output has dtype ${root.dtype}`);
}

/** The engine behind `Tensor.backward` (see its docstring for the semantics and errors). */
export function runBackward(root: Tensor, gradOutput: Tensor | undefined, options: BackwardOptions): void {
  root.assertLive('backward');
  const be = root.backend;
  if (!root.requiresGrad)
    throw new InvalidArgumentError('backward: the tensor does not require grad (no input had requiresGrad)');
  checkGradOutput(root, gradOutput);
  const order = graphOrder(root);
  const retain = options.retainGraph === true;
  // Every array the engine owns is in `grads` (pending gradients) or `loose` (in hand during one
  // node); whatever is left in either when something throws is freed.
  const grads = new Map<Tensor, NDArray>();
  const loose = new Map<DeviceBufferLike, NDArray>();
  // A gradient buffer may have several owners (a rule that passes g on to two inputs: add's x + y): how
  // many, where more than one. Nothing here writes a gradient in place, so sharing is safe; a buffer is
  // freed when its last owner lets go, and copied only to become a leaf's .grad (which the user owns).
  const owners = new Map<DeviceBufferLike, number>();
  const own = (a: NDArray): NDArray => {
    loose.set(a.buffer, a);
    return a;
  };
  const shared = (a: NDArray): boolean => (owners.get(a.buffer) ?? 1) > 1;
  /** Lets go of one owner's array: frees the buffer with its last owner. */
  const drop = (a: NDArray): void => {
    const n = owners.get(a.buffer) ?? 1;
    if (n > 1) {
      owners.set(a.buffer, n - 1);
      return;
    }
    owners.delete(a.buffer);
    loose.delete(a.buffer);
    be.free(a);
  };
  const accumulate = (t: Tensor, g: NDArray): void => {
    const prev = grads.get(t);
    if (!prev) {
      grads.set(t, g);
      loose.delete(g.buffer);
      return;
    }
    const sum = be.add(prev, g);
    grads.set(t, sum);
    drop(prev);
    drop(g);
  };
  try {
    grads.set(root, gradOutput ? be.contiguous(gradOutput.value) : be.full(root.shape, 1, root.dtype));
    for (let i = order.length - 1; i >= 0; i--) {
      const t = order[i]!;
      let g = grads.get(t);
      if (!g) continue;
      grads.delete(t);
      own(g);
      if (!t.node) {
        // A leaf: accumulate into .grad (a whole contiguous array, as optimizers update and users read it).
        const accumulated = t.grad !== null;
        if (t.grad) {
          const sum = own(be.add(t.grad.value, g));
          drop(g);
          t.grad.dispose();
          t.grad = new Tensor(be, sum);
          loose.delete(sum.buffer);
        } else {
          if (!isWholeBuffer(g) || shared(g)) {
            const c = own(be.contiguous(g));
            drop(g);
            g = c;
          }
          t.grad = new Tensor(be, g);
          loose.delete(g.buffer);
        }
        keep(t.grad); // gradients outlive the scope that ran backward
        leafGradObserver?.(t, accumulated);
        continue;
      }
      const node = t.node;
      const gOut = g;
      const inputGrads = freeOnThrow(be, (tracked) => node.backward(gOut, tracked));
      for (const gi of inputGrads) if (gi) own(gi);
      // A rule may return g itself or a view of it (reshape, permute, expand, shrink): the first input
      // that gets one takes g's buffer over; a later one becomes one more owner of it (`owners`).
      const taken = new Set<DeviceBufferLike>();
      const given: [Tensor, NDArray][] = [];
      node.inputs.forEach((inp, k) => {
        const gi = inputGrads[k];
        if (!gi || !inp.requiresGrad) return;
        if (taken.has(gi.buffer)) owners.set(gi.buffer, (owners.get(gi.buffer) ?? 1) + 1);
        taken.add(gi.buffer);
        given.push([inp, gi]);
      });
      node.inputs.forEach((inp, k) => {
        const gi = inputGrads[k];
        if (gi && !inp.requiresGrad && gi.buffer !== g.buffer && !taken.has(gi.buffer) && loose.has(gi.buffer))
          drop(gi);
      });
      if (!taken.has(g.buffer)) drop(g);
      for (const [inp, gi] of given) accumulate(inp, gi);
      if (!retain) releaseNode(t); // free the graph as we go
    }
  } finally {
    for (const g of grads.values()) loose.set(g.buffer, g);
    for (const a of loose.values()) {
      try {
        be.free(a);
      } catch {
        /* the error that brought us here is the one to report */
      }
    }
  }
}

/**
 * Runs a gradient rule with a view of `be` that notes every array it creates and frees: when the
 * rule throws, the arrays it made and still held are freed before the error goes on.
 */
function freeOnThrow<T>(be: ComputeBackend, fn: (tracked: ComputeBackend) => T): T {
  const made = new Map<DeviceBufferLike, NDArray>();
  const isArray = (v: unknown): v is NDArray =>
    typeof v === 'object' && v !== null && 'buffer' in v && 'shape' in v && 'strides' in v;
  const note = (r: unknown, args: unknown[]): void => {
    if (isArray(r)) {
      if (!args.some((a) => isArray(a) && a.buffer === r.buffer)) made.set(r.buffer, r);
    } else if (r && typeof r === 'object' && Object.getPrototypeOf(r) === Object.prototype) {
      for (const v of Object.values(r)) note(v, args);
    }
  };
  const tracked = new Proxy(be, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target) as unknown;
      if (typeof v !== 'function') return v;
      if (prop === 'free') {
        return (x: NDArray) => {
          made.delete(x.buffer);
          target.free(x);
        };
      }
      if (prop === 'deallocate') {
        return (b: DeviceBufferLike) => {
          made.delete(b);
          target.deallocate(b);
        };
      }
      return (...args: unknown[]) => {
        const r = (v as (...a: unknown[]) => unknown).apply(target, args);
        note(r, args);
        return r;
      };
    },
  });
  try {
    return fn(tracked);
  } catch (e) {
    for (const a of made.values()) {
      try {
        be.free(a);
      } catch {
        /* already gone */
      }
    }
    throw e;
  }
}

type DeviceBufferLike = NDArray['buffer'];
