/**
 * The ModelProto bytes of a built graph, written with the decoder's own onnx.proto schema (proto-schema.ts)
 * through protobufjs: IR version 8, the default domain at the chosen opset.
 */
import { onnxType } from '../proto-schema.js';
import type { GraphBuilder, ValueObject } from './graph.js';

/** What the model says about itself. */
export interface ModelInfo {
  readonly opset: number;
  readonly graphName: string;
  readonly docString?: string;
  readonly producerVersion: string;
}

const valueInfo = (v: ValueObject) => ({
  name: v.name,
  type: {
    tensor_type: {
      elem_type: v.elemType,
      shape: { dim: v.dims.map((d) => (typeof d === 'string' ? { dim_param: d } : { dim_value: d })) },
    },
  },
});

/** ModelProto bytes of graph `g`. */
export function encodeModel(g: GraphBuilder, info: ModelInfo): Uint8Array {
  const t = onnxType('ModelProto');
  const model = {
    ir_version: 8,
    opset_import: [{ domain: '', version: info.opset }],
    producer_name: 'polyhal',
    producer_version: info.producerVersion,
    ...(info.docString ? { doc_string: info.docString } : {}),
    graph: {
      name: info.graphName,
      node: g.nodes,
      initializer: g.initializers,
      input: g.inputs.map(valueInfo),
      output: g.outputs.map(valueInfo),
    },
  };
  return t.encode(t.fromObject(model)).finish();
}
