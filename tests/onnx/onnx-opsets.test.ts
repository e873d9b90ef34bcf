import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type OnnxNodeTestsResult, runOnnxNodeTests } from '@polyhal/conformance';
import { REPO_BACKENDS, requiredBackends } from '../support/backends.js';
import { attr } from '../support/onnx-builder.js';
import { type OpCase, writeOrtCases } from '../support/onnx-ort.js';

// The ops of the models we run (PP-OCRv4 det at opset 11, rec and cls at opset 9, Silero VAD v5 at opset
// 16 and its If branches), one case per op and opset version whose semantics differ, checked against
// onnxruntime-node through the conformance kit's runner (the path ONNX's node tests take) on every backend.
// Where the models use an op with particular attributes (depthwise Conv, Resize nearest/asymmetric/floor,
// Softmax on a rank-4 input at opset 9), the case uses them too.

const f32 = (name: string, shape: number[], range?: [number, number]) => ({ name, shape, range });
const i64 = (name: string, data: (number | bigint)[], shape = [data.length]) => ({
  name,
  dtype: 'int64' as const,
  shape,
  data: data.map((v) => BigInt(v)),
  init: true,
});
const scalarF = (name: string, v: number) => ({ name, shape: [], data: [v], init: true });
const MAX = 2n ** 63n - 1n;

const CASES: OpCase[] = [
  // Conv: depthwise, strided, asymmetric kernels and pads (det, rec, cls); 1-D (Silero's STFT and encoder)
  ...[9, 11, 16].map(
    (opset): OpCase => ({
      name: `conv_depthwise_opset${opset}`,
      op: 'Conv',
      opset,
      inputs: [f32('x', [1, 8, 9, 7]), { ...f32('w', [8, 1, 5, 5]), init: true }, { ...f32('b', [8]), init: true }],
      attrs: {
        group: attr.int(8),
        kernel_shape: attr.ints([5, 5]),
        pads: attr.ints([2, 2, 2, 2]),
        strides: attr.ints([2, 1]),
        dilations: attr.ints([1, 1]),
      },
    }),
  ),
  {
    name: 'conv_1x3_pads_opset9',
    op: 'Conv',
    opset: 9,
    inputs: [f32('x', [2, 4, 3, 6]), { ...f32('w', [6, 4, 1, 3]), init: true }],
    attrs: { kernel_shape: attr.ints([1, 3]), pads: attr.ints([0, 1, 0, 1]), strides: attr.ints([1, 2]) },
  },
  {
    name: 'conv_1d_stft_opset16',
    op: 'Conv',
    opset: 16,
    inputs: [f32('x', [1, 1, 320]), { ...f32('w', [10, 1, 128]), init: true }],
    attrs: {
      kernel_shape: attr.ints([128]),
      strides: attr.ints([64]),
      pads: attr.ints([0, 0]),
      dilations: attr.ints([1]),
    },
  },
  {
    name: 'conv_1d_encoder_opset16',
    op: 'Conv',
    opset: 16,
    inputs: [f32('x', [1, 6, 5]), { ...f32('w', [4, 6, 3]), init: true }, { ...f32('b', [4]), init: true }],
    attrs: { kernel_shape: attr.ints([3]), strides: attr.ints([2]), pads: attr.ints([1, 1]), group: attr.int(1) },
  },
  {
    name: 'convtranspose_k2s2_opset11',
    op: 'ConvTranspose',
    opset: 11,
    inputs: [f32('x', [1, 4, 3, 5]), { ...f32('w', [4, 2, 2, 2]), init: true }, { ...f32('b', [2]), init: true }],
    attrs: { kernel_shape: attr.ints([2, 2]), strides: attr.ints([2, 2]), pads: attr.ints([0, 0, 0, 0]) },
  },
  // BatchNormalization in inference: opset 7 (spatial), 9 (no spatial), 14 and 15 (training_mode absent)
  ...[7, 9, 11, 15].map(
    (opset): OpCase => ({
      name: `batchnorm_opset${opset}`,
      op: 'BatchNormalization',
      opset,
      inputs: [
        f32('x', [2, 3, 4, 5]),
        { ...f32('scale', [3]), init: true },
        { ...f32('bias', [3]), init: true },
        { ...f32('mean', [3]), init: true },
        { ...f32('var', [3], [0.5, 2]), init: true },
      ],
      attrs: { epsilon: attr.float(1e-5), momentum: attr.float(0.9) },
    }),
  ),
  // Clip: attributes before opset 11, inputs from 11 (either bound may be omitted)
  {
    name: 'clip_attrs_opset9',
    op: 'Clip',
    opset: 9,
    inputs: [f32('x', [3, 8], [-3, 9])],
    attrs: { min: attr.float(0), max: attr.float(6) },
  },
  {
    name: 'clip_max_only_opset9',
    op: 'Clip',
    opset: 9,
    inputs: [f32('x', [3, 8], [-3, 9])],
    attrs: { max: attr.float(6) },
  },
  {
    name: 'clip_inputs_opset11',
    op: 'Clip',
    opset: 11,
    inputs: [f32('x', [3, 8], [-3, 9]), scalarF('lo', 0), scalarF('hi', 6)],
  },
  {
    name: 'clip_omitted_min_opset13',
    op: 'Clip',
    opset: 13,
    inputs: [f32('x', [3, 8], [-3, 9]), scalarF('hi', 6)],
    nodeInputs: ['x', '', 'hi'],
  },
  {
    name: 'hardsigmoid_opset9',
    op: 'HardSigmoid',
    opset: 9,
    inputs: [f32('x', [2, 16], [-6, 6])],
    attrs: { alpha: attr.float(1 / 6), beta: attr.float(0.5) },
  },
  { name: 'globalaveragepool_opset9', op: 'GlobalAveragePool', opset: 9, inputs: [f32('x', [2, 3, 5, 7])] },
  {
    name: 'averagepool_exclude_pad_opset9',
    op: 'AveragePool',
    opset: 9,
    inputs: [f32('x', [1, 2, 6, 8])],
    attrs: {
      kernel_shape: attr.ints([3, 2]),
      strides: attr.ints([3, 2]),
      pads: attr.ints([0, 0, 0, 0]),
      count_include_pad: attr.int(0),
    },
  },
  {
    name: 'maxpool_2x2_opset9',
    op: 'MaxPool',
    opset: 9,
    inputs: [f32('x', [1, 3, 6, 8])],
    attrs: { kernel_shape: attr.ints([2, 2]), strides: attr.ints([2, 2]), pads: attr.ints([0, 0, 0, 0]) },
  },
  // Constant: a value tensor (int64 held as int32), value_float/value_ints from opset 12
  ...(
    [
      ['float', 9, { value: attr.tensor({ dtype: 'float32', dims: [2, 2], data: [1.5, -2, 0.25, 8] }) }, 'float32'],
      ['int64', 11, { value: attr.tensor({ dtype: 'int64', dims: [3], data: [16000n, -1n, 0n] }) }, 'int64'],
      ['bool', 16, { value: attr.tensor({ dtype: 'bool', dims: [2], data: [1, 0] }) }, 'bool'],
      ['value_float', 13, { value_float: attr.float(0.75) }, 'float32'],
      ['value_ints', 13, { value_ints: attr.ints([3, -4, 5]) }, 'int64'],
    ] as const
  ).map(
    ([kind, opset, attrs, dtype]): OpCase => ({
      name: `constant_${kind}_opset${opset}`,
      op: 'Constant',
      opset,
      inputs: [],
      outputs: [{ name: 'y', dtype }],
      attrs,
    }),
  ),
  // Resize: opset 10 (Upsample's asymmetric/floor), 11 and 13 (coordinate transformation, nearest mode, roi,
  // scales or sizes); Upsample: the scales attribute at opset 7, an input from 9
  ...[11, 13].map(
    (opset): OpCase => ({
      name: `resize_nearest_asymmetric_floor_opset${opset}`,
      op: 'Resize',
      opset,
      inputs: [
        f32('x', [1, 2, 3, 5]),
        { ...f32('roi', [0]), init: true },
        { name: 's', shape: [4], data: [1, 1, 2, 2], init: true },
      ],
      attrs: {
        mode: attr.string('nearest'),
        coordinate_transformation_mode: attr.string('asymmetric'),
        nearest_mode: attr.string('floor'),
      },
    }),
  ),
  {
    name: 'resize_sizes_linear_half_pixel_opset13',
    op: 'Resize',
    opset: 13,
    inputs: [f32('x', [1, 2, 4, 5]), i64('sizes', [1, 2, 7, 3])],
    nodeInputs: ['x', '', '', 'sizes'],
    attrs: { mode: attr.string('linear'), coordinate_transformation_mode: attr.string('half_pixel') },
    options: { opset: 13 },
  },
  {
    name: 'resize_default_modes_opset11',
    op: 'Resize',
    opset: 11,
    inputs: [
      f32('x', [1, 1, 4, 4]),
      { ...f32('roi', [0]), init: true },
      { name: 's', shape: [4], data: [1, 1, 1.5, 0.75], init: true },
    ],
  },
  {
    name: 'resize_opset10',
    op: 'Resize',
    opset: 10,
    inputs: [f32('x', [1, 2, 3, 3]), { name: 's', shape: [4], data: [1, 1, 2, 3], init: true }],
    attrs: { mode: attr.string('nearest') },
  },
  {
    name: 'upsample_scales_input_opset9',
    op: 'Upsample',
    opset: 9,
    inputs: [f32('x', [1, 2, 3, 3]), { name: 's', shape: [4], data: [1, 1, 2, 2], init: true }],
    attrs: { mode: attr.string('linear') },
  },
  {
    name: 'upsample_scales_attr_opset7',
    op: 'Upsample',
    opset: 7,
    inputs: [f32('x', [1, 2, 3, 3])],
    attrs: { mode: attr.string('nearest'), scales: attr.floats([1, 1, 2, 3]) },
  },
  // Slice: attributes at opset 9 (ends of INT64_MAX, negative starts), inputs from 10 (negative steps at 11)
  {
    name: 'slice_attrs_opset9',
    op: 'Slice',
    opset: 9,
    inputs: [f32('x', [5, 6, 4])],
    attrs: { starts: attr.ints([1, -4]), ends: attr.ints([MAX, -1]), axes: attr.ints([0, 2]) },
  },
  {
    name: 'slice_inputs_negative_step_opset11',
    op: 'Slice',
    opset: 11,
    inputs: [
      f32('x', [5, 6, 4]),
      i64('starts', [-1, 0]),
      i64('ends', [-(2n ** 63n), MAX]),
      i64('axes', [1, 0]),
      i64('steps', [-2, 2]),
    ],
  },
  {
    name: 'slice_inputs_opset13',
    op: 'Slice',
    opset: 13,
    inputs: [f32('x', [1, 130, 7]), i64('starts', [0]), i64('ends', [65]), i64('axes', [1])],
  },
  // Squeeze/Unsqueeze: the axes attribute before opset 13, an input from 13
  {
    name: 'squeeze_attr_opset9',
    op: 'Squeeze',
    opset: 9,
    inputs: [f32('x', [1, 3, 1, 2])],
    attrs: { axes: attr.ints([2]) },
  },
  { name: 'squeeze_all_opset11', op: 'Squeeze', opset: 11, inputs: [f32('x', [1, 3, 1, 2])] },
  { name: 'squeeze_input_opset13', op: 'Squeeze', opset: 13, inputs: [f32('x', [1, 3, 1, 2]), i64('axes', [-2])] },
  {
    name: 'unsqueeze_attr_opset9',
    op: 'Unsqueeze',
    opset: 9,
    inputs: [f32('x', [3, 2])],
    attrs: { axes: attr.ints([0, 3]) },
  },
  { name: 'unsqueeze_input_opset13', op: 'Unsqueeze', opset: 13, inputs: [f32('x', [3, 2]), i64('axes', [1, -1])] },
  // Cast (to float, int32, int64, bool)
  ...(
    [
      [1, 'float32', 'int64'],
      [6, 'int32', 'float32'],
      [7, 'int64', 'float32'],
      [9, 'bool', 'float32'],
      [1, 'float32', 'bool'],
    ] as const
  ).flatMap(([to, out, from]) =>
    [9, 16].map(
      (opset): OpCase => ({
        name: `cast_${from}_to_${out}_opset${opset}`,
        op: 'Cast',
        opset,
        inputs: [{ name: 'x', dtype: from, shape: [3, 4], range: [-40, 40] }],
        outputs: [{ name: 'y', dtype: out }],
        attrs: { to: attr.int(to) },
      }),
    ),
  ),
  // Softmax: flattened to 2-D at axis before opset 13 (the rec model's axis 2 and 3 of rank 4), one axis after
  ...[1, 2, 3].map(
    (axis): OpCase => ({
      name: `softmax_rank4_axis${axis}_opset9`,
      op: 'Softmax',
      opset: 9,
      inputs: [f32('x', [2, 3, 4, 5], [-4, 4])],
      attrs: { axis: attr.int(axis) },
    }),
  ),
  {
    name: 'softmax_rank4_axis1_opset13',
    op: 'Softmax',
    opset: 13,
    inputs: [f32('x', [2, 3, 4, 5], [-4, 4])],
    attrs: { axis: attr.int(1) },
  },
  // ReduceMean: axes attribute to opset 17, input from 18
  {
    name: 'reducemean_last_opset9',
    op: 'ReduceMean',
    opset: 9,
    inputs: [f32('x', [2, 3, 8])],
    attrs: { axes: attr.ints([-1]) },
  },
  {
    name: 'reducemean_nokeep_opset16',
    op: 'ReduceMean',
    opset: 16,
    inputs: [f32('x', [2, 3, 8])],
    attrs: { axes: attr.ints([1]), keepdims: attr.int(0) },
  },
  { name: 'reducemean_input_opset18', op: 'ReduceMean', opset: 18, inputs: [f32('x', [2, 3, 8]), i64('axes', [0, 2])] },
  // elementwise with broadcasting
  ...(['Add', 'Sub', 'Mul', 'Div'] as const).map(
    (op): OpCase => ({
      name: `${op.toLowerCase()}_bcast_opset9`,
      op,
      opset: 9,
      inputs: [f32('a', [2, 3, 4]), f32('b', [3, 1], [0.5, 2])],
    }),
  ),
  { name: 'pow_square_opset9', op: 'Pow', opset: 9, inputs: [f32('x', [3, 5]), scalarF('p', 2)] },
  { name: 'pow_square_opset16', op: 'Pow', opset: 16, inputs: [f32('x', [3, 5]), scalarF('p', 2)] },
  { name: 'sqrt_opset9', op: 'Sqrt', opset: 9, inputs: [f32('x', [3, 5], [0, 4])] },
  { name: 'relu_opset9', op: 'Relu', opset: 9, inputs: [f32('x', [3, 5])] },
  { name: 'sigmoid_opset11', op: 'Sigmoid', opset: 11, inputs: [f32('x', [3, 5], [-6, 6])] },
  { name: 'identity_opset16', op: 'Identity', opset: 16, inputs: [f32('x', [3, 5])] },
  // MatMul: batched and broadcast, as the rec model's attention
  { name: 'matmul_3d_2d_opset9', op: 'MatMul', opset: 9, inputs: [f32('a', [2, 5, 6]), f32('b', [6, 3])] },
  { name: 'matmul_4d_opset9', op: 'MatMul', opset: 9, inputs: [f32('a', [1, 2, 5, 6]), f32('b', [1, 2, 6, 5])] },
  {
    name: 'transpose_5d_opset9',
    op: 'Transpose',
    opset: 9,
    inputs: [f32('x', [2, 3, 2, 4, 2])],
    attrs: { perm: attr.ints([2, 0, 3, 1, 4]) },
  },
  { name: 'reshape_zero_minus1_opset9', op: 'Reshape', opset: 9, inputs: [f32('x', [2, 3, 4]), i64('shape', [0, -1])] },
  {
    name: 'reshape_allowzero0_opset14',
    op: 'Reshape',
    opset: 14,
    inputs: [f32('x', [2, 3, 4]), i64('shape', [0, 4, -1])],
    attrs: { allowzero: attr.int(0) },
  },
  {
    name: 'concat_axis1_opset11',
    op: 'Concat',
    opset: 11,
    inputs: [f32('a', [2, 3, 2]), f32('b', [2, 1, 2])],
    attrs: { axis: attr.int(1) },
  },
  // shape arithmetic: Shape (start/end from 15), Size, Gather, Equal, Not, ConstantOfShape
  {
    name: 'shape_opset9',
    op: 'Shape',
    opset: 9,
    inputs: [f32('x', [2, 3, 4])],
    outputs: [{ name: 'y', dtype: 'int64' }],
  },
  {
    name: 'shape_start_end_opset15',
    op: 'Shape',
    opset: 15,
    inputs: [f32('x', [2, 3, 4, 5])],
    outputs: [{ name: 'y', dtype: 'int64' }],
    attrs: { start: attr.int(1), end: attr.int(-1) },
  },
  {
    name: 'size_opset13',
    op: 'Size',
    opset: 13,
    inputs: [f32('x', [2, 3, 4])],
    outputs: [{ name: 'y', dtype: 'int64' }],
  },
  {
    name: 'gather_scalar_index_opset13',
    op: 'Gather',
    opset: 13,
    inputs: [{ name: 'x', dtype: 'int64', shape: [3], range: [1, 100] }, i64('i', [-1], [])],
    outputs: [{ name: 'y', dtype: 'int64' }],
    attrs: { axis: attr.int(0) },
  },
  {
    name: 'gather_state_opset16',
    op: 'Gather',
    opset: 16,
    inputs: [f32('x', [2, 3, 8]), i64('i', [1], [])],
    attrs: { axis: attr.int(0) },
  },
  {
    name: 'equal_int64_opset16',
    op: 'Equal',
    opset: 16,
    inputs: [{ name: 'a', dtype: 'int64', shape: [], data: [16000n] }, i64('b', [16000], [])],
    outputs: [{ name: 'y', dtype: 'bool' }],
  },
  {
    name: 'equal_float_opset11',
    op: 'Equal',
    opset: 11,
    inputs: [f32('a', [3, 4], [-1, 1]), f32('b', [4], [-1, 1])],
    outputs: [{ name: 'y', dtype: 'bool' }],
  },
  {
    name: 'not_opset16',
    op: 'Not',
    opset: 16,
    inputs: [{ name: 'x', dtype: 'bool', shape: [7] }],
    outputs: [{ name: 'y', dtype: 'bool' }],
  },
  { name: 'constantofshape_default_opset16', op: 'ConstantOfShape', opset: 16, inputs: [i64('s', [2, 3])] },
  {
    name: 'constantofshape_int64_opset16',
    op: 'ConstantOfShape',
    opset: 16,
    inputs: [i64('s', [1])],
    outputs: [{ name: 'y', dtype: 'int64' }],
    attrs: { value: attr.tensor({ dtype: 'int64', dims: [1], data: [0n] }) },
  },
  // Pad: attributes at opset 2, inputs from 11, reflect (Silero's STFT padding), axes from 18
  {
    name: 'pad_attrs_opset9',
    op: 'Pad',
    opset: 9,
    inputs: [f32('x', [2, 5])],
    attrs: { pads: attr.ints([0, 1, 1, 2]), value: attr.float(1.5) },
  },
  {
    name: 'pad_constant_opset11',
    op: 'Pad',
    opset: 11,
    inputs: [f32('x', [2, 5]), i64('p', [1, 0, 0, 3]), scalarF('v', -2)],
  },
  {
    name: 'pad_reflect_opset16',
    op: 'Pad',
    opset: 16,
    inputs: [f32('x', [1, 20]), i64('p', [0, 4, 0, 4])],
    attrs: { mode: attr.string('reflect') },
  },
  {
    name: 'pad_axes_opset18',
    op: 'Pad',
    opset: 18,
    inputs: [f32('x', [2, 3, 5]), i64('p', [2, 1]), scalarF('v', 0), i64('axes', [-1])],
    attrs: { mode: attr.string('edge') },
  },
  // Split: the split attribute to 12, an input from 13, num_outputs from 18
  {
    name: 'split_attr_opset11',
    op: 'Split',
    opset: 11,
    inputs: [f32('x', [2, 7])],
    outputs: [{ name: 'y0' }, { name: 'y1' }],
    attrs: { axis: attr.int(1), split: attr.ints([3, 4]) },
  },
  {
    name: 'split_input_opset13',
    op: 'Split',
    opset: 13,
    inputs: [f32('x', [2, 7]), i64('s', [5, 2])],
    outputs: [{ name: 'y0' }, { name: 'y1' }],
    attrs: { axis: attr.int(-1) },
  },
  {
    name: 'split_num_outputs_opset18',
    op: 'Split',
    opset: 18,
    inputs: [f32('x', [7, 2])],
    outputs: [{ name: 'y0' }, { name: 'y1' }, { name: 'y2' }],
    attrs: { num_outputs: attr.int(3) },
  },
  // the newest versions of the models' ops (18–21): new attributes at their defaults, axes forms
  {
    name: 'resize_axes_opset18',
    op: 'Resize',
    opset: 18,
    inputs: [f32('x', [1, 2, 3, 4]), { name: 's', shape: [2], data: [2, 0.5], init: true }],
    nodeInputs: ['x', '', 's'],
    attrs: { axes: attr.ints([2, 3]), mode: attr.string('linear'), antialias: attr.int(0) },
  },
  {
    name: 'resize_sizes_axes_opset19',
    op: 'Resize',
    opset: 19,
    inputs: [f32('x', [1, 2, 3, 4]), i64('sizes', [5])],
    nodeInputs: ['x', '', '', 'sizes'],
    attrs: {
      axes: attr.ints([-1]),
      keep_aspect_ratio_policy: attr.string('stretch'),
      nearest_mode: attr.string('ceil'),
    },
  },
  {
    name: 'cast_saturate_opset19',
    op: 'Cast',
    opset: 19,
    inputs: [{ name: 'x', dtype: 'float32', shape: [6], range: [-40, 40] }],
    outputs: [{ name: 'y', dtype: 'int32' }],
    attrs: { to: attr.int(6), saturate: attr.int(1) },
  },
  {
    name: 'averagepool_dilations_opset19',
    op: 'AveragePool',
    opset: 19,
    inputs: [f32('x', [1, 2, 7, 7])],
    attrs: { kernel_shape: attr.ints([2, 2]), dilations: attr.ints([2, 1]), pads: attr.ints([1, 0, 0, 1]) },
  },
  {
    name: 'pad_wrap_opset19',
    op: 'Pad',
    opset: 19,
    inputs: [f32('x', [2, 5]), i64('p', [0, 2, 1, 3])],
    attrs: { mode: attr.string('wrap') },
  },
  { name: 'reshape_opset21', op: 'Reshape', opset: 21, inputs: [f32('x', [2, 3, 4]), i64('shape', [4, -1])] },
  { name: 'squeeze_opset21', op: 'Squeeze', opset: 21, inputs: [f32('x', [1, 3, 1]), i64('axes', [0])] },
  { name: 'unsqueeze_opset21', op: 'Unsqueeze', opset: 21, inputs: [f32('x', [3]), i64('axes', [0, 2])] },
  {
    name: 'shape_opset21',
    op: 'Shape',
    opset: 21,
    inputs: [f32('x', [2, 3, 4])],
    outputs: [{ name: 'y', dtype: 'int64' }],
    attrs: { start: attr.int(-2) },
  },
  {
    name: 'constantofshape_opset21',
    op: 'ConstantOfShape',
    opset: 21,
    inputs: [i64('s', [2, 2])],
    attrs: { value: attr.tensor({ dtype: 'float32', dims: [1], data: [0.5] }) },
  },
  {
    name: 'reducemean_noop_opset18',
    op: 'ReduceMean',
    opset: 18,
    inputs: [f32('x', [2, 3]), i64('axes', [])],
    attrs: { noop_with_empty_axes: attr.int(1) },
  },
  { name: 'identity_opset21', op: 'Identity', opset: 21, inputs: [f32('x', [3, 2])] },
  {
    name: 'conv_auto_pad_opset21',
    op: 'Conv',
    opset: 21,
    inputs: [f32('x', [1, 3, 5, 6]), { ...f32('w', [4, 3, 3, 3]), init: true }],
    attrs: { auto_pad: attr.string('SAME_UPPER'), strides: attr.ints([2, 2]) },
  },
  {
    name: 'gather_opset21',
    op: 'Gather',
    opset: 21,
    inputs: [f32('x', [4, 3]), i64('i', [3, -4, 1], [3])],
    attrs: { axis: attr.int(0) },
  },
];

let dir = '';
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'polyhal-onnx-opsets-'));
  writeOrtCases(dir, CASES);
}, 120_000);
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

for (const [name, factory] of Object.entries(REPO_BACKENDS)) {
  describe(`the models' ops against onnxruntime on ${name}`, () => {
    test(`every case runs and matches onnxruntime (${CASES.length} cases)`, async () => {
      let r: OnnxNodeTestsResult;
      try {
        r = await runOnnxNodeTests(factory, dir);
      } catch (e) {
        if (!requiredBackends().includes(name) && (e as Error).name === 'BackendUnavailableError') return;
        throw e;
      }
      const bad = r.results.filter((t) => t.status !== 'passed').map((t) => `${t.test}: ${t.status} ${t.reason}`);
      expect(bad).toEqual([]);
      expect(r.passed).toBe(CASES.length);
    }, 120_000);
  });
}
