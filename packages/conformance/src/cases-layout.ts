/**
 * Conformance cases of the layout ops (concat, stack, split, tile, flip, trilu, pad modes) on float32
 * and int32: odd sizes, empty arrays, strided, permuted and broadcast views, and (float32) NaN and ±Inf
 * through trilu.
 */
import type { Case, InputSpec, ViewSpec } from './cases.js';

type Pads = [number, number][];

export function layoutCases(): Case[] {
  const cases: Case[] = [];
  for (const dtype of ['float32', 'int32'] as const) {
    const gen =
      dtype === 'float32'
        ? ({ kind: 'uniform', lo: -10, hi: 10 } as const)
        : ({ kind: 'int', lo: -1000, hi: 1000 } as const);
    const input = (shape: number[], view?: ViewSpec): InputSpec => ({ shape, gen, dtype, view });
    const add = (op: string, tag: string, inputs: InputSpec[], params: Case['params']): void => {
      cases.push({ id: `${op}/${dtype}/${tag}`, kind: 'movement', op, dtype, inputs, params });
    };
    add('concat', '[3,4]+[2,4]+[0,4]/axis=0', [input([3, 4]), input([2, 4]), input([0, 4])], { axis: 0 });
    add('concat', '[3,5].permute+[5,2]/axis=1', [input([3, 5], { permute: [1, 0] }), input([5, 2])], { axis: 1 });
    add('concat', '[2,3,17]+[2,3,1]+[2,3,31]/axis=-1', [input([2, 3, 17]), input([2, 3, 1]), input([2, 3, 31])], {
      axis: -1,
    });
    add(
      'concat',
      '[4,1].expand+[3,6].stride/axis=0',
      [input([4, 1], { expand: [4, 3] }), input([6, 6], { stride: [2, -2] })],
      {
        axis: 0,
      },
    );
    add('concat', '[33]/single', [input([33])], { axis: 0 });
    add('stack', '3x[4,5]/axis=0', [input([4, 5]), input([4, 5]), input([4, 5])], { axis: 0 });
    add('stack', '2x[3,7].stride/axis=-1', [input([3, 7]), input([6, 7], { stride: [2, -1] })], { axis: -1 });
    add('stack', '2x[0,3]/axis=1', [input([0, 3]), input([0, 3])], { axis: 1 });
    add('stack', '2x[]/axis=0', [input([]), input([])], { axis: 0 });
    add('split', '[10,3]/sections=5', [input([10, 3])], { split: 5, axis: 0 });
    add('split', '[9,7].permute/sizes=2,0,7', [input([9, 7], { permute: [1, 0] })], { split: [2, 0, 7], axis: 1 });
    add('split', '[17]/sections=1', [input([17])], { split: 1, axis: 0 });
    add('tile', '[3,4]/reps=2,3', [input([3, 4])], { reps: [2, 3] });
    add('tile', '[5]/reps=3,2', [input([5])], { reps: [3, 2] });
    add('tile', '[2,3,4]/reps=2', [input([2, 3, 4])], { reps: [2] });
    add('tile', '[3,4]/reps=0,2', [input([3, 4])], { reps: [0, 2] });
    add('tile', '[6,5].stride/reps=2,1', [input([6, 5], { stride: [-2, 1] })], { reps: [2, 1] });
    add('flip', '[7,9]/axes=0', [input([7, 9])], { axes: [0] });
    add('flip', '[2,3,5]/all', [input([2, 3, 5])], {});
    add('flip', '[4,6].permute/axes=-1', [input([4, 6], { permute: [1, 0] })], { axes: [-1] });
    add('flip', '[0,3]/axes=1', [input([0, 3])], { axes: [1] });
    add('trilu', '[5,7]/upper,k=0', [input([5, 7])], { k: 0, upper: true });
    add('trilu', '[7,5]/lower,k=-2', [input([7, 5])], { k: -2, upper: false });
    add('trilu', '[2,4,6].stride/upper,k=1', [input([2, 8, 6], { stride: [1, 2, -1] })], { k: 1, upper: true });
    add('trilu', '[3,31]/lower,k=3', [input([3, 31])], { k: 3, upper: false });
    add('trilu', '[3,3]/upper,k=10', [input([3, 3])], { k: 10, upper: true });
    add('trilu', '[3,4]/upper,k=-10', [input([3, 4])], { k: -10, upper: true });
    add('trilu', '[6,6].permute/lower,k=0', [input([6, 6], { permute: [1, 0] })], { k: 0, upper: false });
    add('trilu', '[0,3]/upper,k=0', [input([0, 3])], { k: 0, upper: true });
    const pad = (mode: 'edge' | 'reflect' | 'wrap', shape: number[], pads: Pads, view?: ViewSpec, tag = ''): void =>
      add('pad', `${mode}/[${shape.join(',')}]${view ? `.${Object.keys(view)[0]}` : ''}${tag}`, [input(shape, view)], {
        pads,
        mode,
      });
    for (const mode of ['edge', 'reflect', 'wrap'] as const) {
      pad(
        mode,
        [3, 4],
        [
          [1, 2],
          [0, 3],
        ],
      );
      pad(
        mode,
        [5, 4],
        [
          [2, 6],
          [3, 1],
        ],
      );
      pad(
        mode,
        [1, 3],
        [
          [2, 1],
          [1, 4],
        ],
      );
      pad(
        mode,
        [4, 5],
        [
          [1, 1],
          [2, 0],
        ],
        { permute: [1, 0] },
      );
      pad(
        mode,
        [2, 3, 17],
        [
          [0, 0],
          [1, 1],
          [5, 4],
        ],
      );
      pad(
        mode,
        [0, 3],
        [
          [0, 0],
          [1, 1],
        ],
      );
    }
  }
  cases.push({
    id: 'trilu/float32/special/upper,k=-1',
    kind: 'movement',
    op: 'trilu',
    dtype: 'float32',
    inputs: [{ shape: [8, 8], gen: { kind: 'special' } }],
    params: { k: -1, upper: true },
  });
  return cases;
}
