/**
 * Differentiable scatter, scatterAdd, gatherND, scatterND and scatterElements (hal/src/families/indexing/indexing.ts,
 * indexing-nd.ts). The N-dimensional ops run on the HAL as one op each; their gradients work on the
 * flat form the HAL composes them from (FlatIndexPlan: the operand reshaped so that int32 positions
 * index its axis 0), so one rule per reduction serves all:
 * - gather (gatherND): g scattered back with scatterAdd (duplicates add up, positions out of range
 *   give nothing).
 * - scatter, reduction 'none': to target, g with the written positions zeroed (a scatter of zeros);
 *   to updates, g gathered at their positions for the update that wins each position (the last in
 *   index order), 0 for the overwritten ones and those out of range (dropped).
 * - 'add': g to target; g gathered to the updates in range, 0 to the dropped ones.
 * - 'mul': no gradient; InvalidArgumentError when an input requires one.
 * Indices are int32 and never receive a gradient.
 */
import {
  type ComputeBackend,
  type FlatIndexPlan,
  gatherNDPlan,
  InvalidArgumentError,
  type NDArray,
  type ScatterReduction,
  scatterElementsPlan,
  scatterNDPlan,
  withTemps,
} from '@polyhal/hal';
import { record } from './ops.js';
import { isGradEnabled, type Tensor } from './tensor.js';

/**
 * Updates' gradient of a scatter along `axis`: g gathered at the indices, times a 0/1 mask of the
 * updates that count — in range ('add'), or also the last at their position ('none').
 */
function updatesGrad(
  be: ComputeBackend,
  g: NDArray,
  indices: NDArray,
  axis: number,
  reduction: ScatterReduction,
): NDArray {
  const d = g.shape[axis]!;
  const k = indices.shape.reduce((p, n) => p * n, 1);
  const shape = [...g.shape.slice(0, axis), ...indices.shape, ...g.shape.slice(axis + 1)];
  if (d === 0 || k === 0) return be.full(shape, 0, g.dtype);
  return withTemps(be, (t) => {
    const order = t(
      be.fromArray(
        Int32Array.from({ length: k }, (_, i) => i),
        indices.shape,
        'int32',
      ),
    );
    let mask: NDArray;
    if (reduction === 'none') {
      // the winner of each position (−1: none), read back at each update's position (INT32_MIN out of range)
      const winners = t(be.scatter(t(be.full([d], -1, 'int32')), indices, order, 0, 'none'));
      const won = t(be.gather(winners, indices, 0));
      const lt = (a: NDArray, b: NDArray): NDArray => t(be.binary('cmplt', a, b));
      mask = t(be.binary('sub', t(be.binary('sub', 1, lt(won, order))), lt(order, won)));
    } else {
      mask = t(be.binary('sub', t(be.binary('cmplt', indices, d)), t(be.binary('cmplt', indices, -d))));
    }
    // masked-out updates read position 0 (in range), then count 0
    const read = t(be.gather(g, t(be.binary('mul', indices, mask)), axis));
    const lifted = [...g.shape.slice(0, axis).map(() => 1), ...indices.shape, ...g.shape.slice(axis + 1).map(() => 1)];
    // a view of a fresh contiguous array: not a temporary of its own
    const m = be.reshape(mask.dtype === g.dtype ? mask : t(be.cast(mask, g.dtype)), lifted);
    return be.binary('mul', read, m);
  });
}

/** The gradients of a scatter along `axis` of the given reduction, to target and updates. */
function scatterGrads(
  be: ComputeBackend,
  g: NDArray,
  indices: NDArray,
  updates: NDArray,
  axis: number,
  reduction: ScatterReduction,
  needs: boolean[],
): [NDArray | null, NDArray | null] {
  let gt: NDArray | null = null;
  if (needs[0]) {
    if (reduction === 'add') gt = be.binary('add', g, 0);
    else {
      const zero = be.full([], 0, g.dtype);
      try {
        gt = be.scatter(g, indices, be.expand(zero, updates.shape), axis, 'none');
      } finally {
        be.free(zero);
      }
    }
  }
  return [gt, needs[2] ? updatesGrad(be, g, indices, axis, reduction) : null];
}

function noMulGrad(op: string, reduction: ScatterReduction, inputs: Tensor[]): void {
  if (reduction === 'mul' && isGradEnabled() && inputs.some((t) => t.requiresGrad))
    throw new InvalidArgumentError(
      `${op}: reduction 'mul' has no gradient here; detach the target and the updates (or use no_grad)`,
    );
}

/** target with updates written along `axis` at the int32 indices, in index order (HAL scatter). */
export function scatter(
  target: Tensor,
  indices: Tensor,
  updates: Tensor,
  axis = 0,
  reduction: ScatterReduction = 'none',
): Tensor {
  noMulGrad('scatter', reduction, [target, updates]);
  return record(
    'scatter',
    [target, indices, updates],
    (be, [t, i, u]) => be.scatter(t!, i!, u!, axis, reduction),
    (be, g, [t, i, u], _out, needs) => {
      const ax = axis < 0 ? axis + t!.shape.length : axis;
      const [gt, gu] = scatterGrads(be, g, i!, u!, ax, reduction, needs);
      return [gt, null, gu];
    },
  );
}

/** target with updates added along `axis` at the int32 indices, in index order (HAL scatterAdd). */
export function scatterAdd(target: Tensor, indices: Tensor, updates: Tensor, axis = 0): Tensor {
  return record(
    'scatterAdd',
    [target, indices, updates],
    (be, [t, i, u]) => be.scatterAdd(t!, i!, u!, axis),
    (be, g, [t, i, u], _out, needs) => {
      const ax = axis < 0 ? axis + t!.shape.length : axis;
      const [gt, gu] = scatterGrads(be, g, i!, u!, ax, 'add', needs);
      return [gt, null, gu];
    },
  );
}

/** Runs `fn` on g reshaped to the plan's flat shape, then frees the plan's own index. */
function onPlan<T>(be: ComputeBackend, g: NDArray, plan: FlatIndexPlan, fn: (flat: NDArray) => T): T {
  try {
    const flat = be.reshape(g, plan.flatShape);
    try {
      return fn(flat);
    } finally {
      if (flat.buffer !== g.buffer) be.free(flat);
    }
  } finally {
    if (plan.owned) be.free(plan.index);
  }
}

/** x's slices at index tuples (HAL gatherND). Gradient: g scattered back with scatterAdd. */
export function gatherND(x: Tensor, indices: Tensor, batchDims = 0): Tensor {
  return record(
    'gatherND',
    [x, indices],
    (be, [v, i]) => be.gatherND(v!, i!, batchDims),
    (be, g, [v, i], _out, needs) => {
      if (!needs[0]) return [null, null];
      const plan = gatherNDPlan(be, v!, i!, batchDims);
      const zero = be.full([], 0, v!.dtype);
      try {
        const flat = be.scatterAdd(be.expand(zero, plan.flatShape), plan.index, g, 0);
        return [be.reshape(flat, v!.shape), null];
      } finally {
        be.free(zero);
        if (plan.owned) be.free(plan.index);
      }
    },
  );
}

/** The gradient rule of an N-dimensional scatter through its flat plan. */
function flatScatterRule(
  be: ComputeBackend,
  g: NDArray,
  plan: FlatIndexPlan,
  updates: NDArray,
  reduction: ScatterReduction,
  needs: boolean[],
): (NDArray | null)[] {
  return onPlan(be, g, plan, (flat) => {
    const [gt, gu] = scatterGrads(be, flat, plan.index, updates, 0, reduction, needs);
    return [gt && be.reshape(gt, g.shape), null, gu];
  });
}

/** target with updates written at index tuples, in order (HAL scatterND). */
export function scatterND(
  target: Tensor,
  indices: Tensor,
  updates: Tensor,
  reduction: ScatterReduction = 'none',
): Tensor {
  noMulGrad('scatterND', reduction, [target, updates]);
  return record(
    'scatterND',
    [target, indices, updates],
    (be, [t, i, u]) => be.scatterND(t!, i!, u!, reduction),
    (be, g, [t, i, u], _out, needs) =>
      flatScatterRule(be, g, scatterNDPlan(be, t!, i!, u!, reduction), u!, reduction, needs),
  );
}

/** target with each element of updates written at its own position along `axis` (HAL scatterElements). */
export function scatterElements(
  target: Tensor,
  indices: Tensor,
  updates: Tensor,
  axis = 0,
  reduction: ScatterReduction = 'none',
): Tensor {
  noMulGrad('scatterElements', reduction, [target, updates]);
  return record(
    'scatterElements',
    [target, indices, updates],
    (be, [t, i, u]) => be.scatterElements(t!, i!, u!, axis, reduction),
    (be, g, [t, i, u], _out, needs) =>
      flatScatterRule(be, g, scatterElementsPlan(be, t!, i!, u!, axis, reduction), u!, reduction, needs),
  );
}
