/**
 * ONNX's onnx.proto (IR version 10, ONNX 1.16; proto2), the subset this package decodes, as a protobufjs JSON
 * descriptor with ONNX's own field numbers and names. Fields outside it (functions, sparse initializers,
 * training info, quantization annotations) are skipped by the decoder, as protobuf requires.
 */
import protobuf from 'protobufjs/light.js';

const f = (type: string, id: number, rule?: 'repeated') => (rule ? { type, id, rule } : { type, id });

/** ONNX's onnx.proto (subset), as a protobufjs JSON descriptor. */
export const ONNX_SCHEMA = {
  nested: {
    onnx: {
      nested: {
        AttributeProto: {
          fields: {
            name: f('string', 1),
            ref_attr_name: f('string', 21),
            doc_string: f('string', 13),
            type: f('int32', 20),
            f: f('float', 2),
            i: f('int64', 3),
            s: f('bytes', 4),
            t: f('TensorProto', 5),
            g: f('GraphProto', 6),
            floats: f('float', 7, 'repeated'),
            ints: f('int64', 8, 'repeated'),
            strings: f('bytes', 9, 'repeated'),
            tensors: f('TensorProto', 10, 'repeated'),
            graphs: f('GraphProto', 11, 'repeated'),
          },
        },
        ValueInfoProto: { fields: { name: f('string', 1), type: f('TypeProto', 2), doc_string: f('string', 3) } },
        NodeProto: {
          fields: {
            input: f('string', 1, 'repeated'),
            output: f('string', 2, 'repeated'),
            name: f('string', 3),
            op_type: f('string', 4),
            domain: f('string', 7),
            attribute: f('AttributeProto', 5, 'repeated'),
            doc_string: f('string', 6),
          },
        },
        ModelProto: {
          fields: {
            ir_version: f('int64', 1),
            opset_import: f('OperatorSetIdProto', 8, 'repeated'),
            producer_name: f('string', 2),
            producer_version: f('string', 3),
            domain: f('string', 4),
            model_version: f('int64', 5),
            doc_string: f('string', 6),
            graph: f('GraphProto', 7),
            metadata_props: f('StringStringEntryProto', 14, 'repeated'),
          },
        },
        GraphProto: {
          fields: {
            node: f('NodeProto', 1, 'repeated'),
            name: f('string', 2),
            initializer: f('TensorProto', 5, 'repeated'),
            doc_string: f('string', 10),
            input: f('ValueInfoProto', 11, 'repeated'),
            output: f('ValueInfoProto', 12, 'repeated'),
            value_info: f('ValueInfoProto', 13, 'repeated'),
          },
        },
        TensorProto: {
          fields: {
            dims: f('int64', 1, 'repeated'),
            data_type: f('int32', 2),
            float_data: f('float', 4, 'repeated'),
            int32_data: f('int32', 5, 'repeated'),
            string_data: f('bytes', 6, 'repeated'),
            int64_data: f('int64', 7, 'repeated'),
            name: f('string', 8),
            doc_string: f('string', 12),
            raw_data: f('bytes', 9),
            data_location: f('int32', 14),
            external_data: f('StringStringEntryProto', 13, 'repeated'),
            double_data: f('double', 10, 'repeated'),
            uint64_data: f('uint64', 11, 'repeated'),
          },
        },
        TensorShapeProto: {
          fields: { dim: f('Dimension', 1, 'repeated') },
          nested: {
            Dimension: {
              oneofs: { value: { oneof: ['dim_value', 'dim_param'] } },
              fields: { dim_value: f('int64', 1), dim_param: f('string', 2), denotation: f('string', 3) },
            },
          },
        },
        TypeProto: {
          oneofs: {
            value: { oneof: ['tensor_type', 'sequence_type', 'map_type', 'optional_type', 'sparse_tensor_type'] },
          },
          fields: {
            tensor_type: f('Tensor', 1),
            sequence_type: f('Sequence', 4),
            map_type: f('Map', 5),
            optional_type: f('Optional', 9),
            sparse_tensor_type: f('SparseTensor', 8),
            denotation: f('string', 6),
          },
          nested: {
            Tensor: { fields: { elem_type: f('int32', 1), shape: f('TensorShapeProto', 2) } },
            Sequence: { fields: { elem_type: f('TypeProto', 1) } },
            Map: { fields: { key_type: f('int32', 1), value_type: f('TypeProto', 2) } },
            Optional: { fields: { elem_type: f('TypeProto', 1) } },
            SparseTensor: { fields: { elem_type: f('int32', 1), shape: f('TensorShapeProto', 2) } },
          },
        },
        StringStringEntryProto: { fields: { key: f('string', 1), value: f('string', 2) } },
        OperatorSetIdProto: { fields: { domain: f('string', 1), version: f('int64', 2) } },
      },
    },
  },
};

let root: protobuf.Root | undefined;

/** The protobufjs type `onnx.<name>` of the schema (resolved, for checkWire's field types). */
export function onnxType(name: string): protobuf.Type {
  root ??= protobuf.Root.fromJSON(ONNX_SCHEMA).resolveAll() as protobuf.Root;
  return root.lookupType(`onnx.${name}`);
}
