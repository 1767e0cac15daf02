/**
 * Encodes and decodes ONNX `ModelProto` messages with protobufjs, using the subset of ONNX's schema in
 * `onnx.proto` next to this file (loaded at run time; field names keep ONNX's snake_case).
 */
import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";

const PROTO_PATH = fileURLToPath(new URL("./onnx.proto", import.meta.url));

let modelType: protobuf.Type | undefined;

function modelProtoType(): protobuf.Type {
  if (modelType === undefined) {
    const root = new protobuf.Root().loadSync(PROTO_PATH, { keepCase: true });
    modelType = root.lookupType("onnx.ModelProto");
  }
  return modelType;
}

/** A `ModelProto` as a plain object with ONNX's field names (`ir_version`, `opset_import`, ...). */
export type ModelProtoObject = Record<string, unknown>;

/**
 * Serializes a model to the bytes of a `.onnx` file.
 * @throws Error naming the offending field when the object does not fit the schema.
 */
export function encodeModelProto(model: ModelProtoObject): Uint8Array {
  const type = modelProtoType();
  const problem = type.verify(model);
  if (problem !== null) throw new Error(`invalid ONNX ModelProto: ${problem}`);
  return type.encode(type.fromObject(model)).finish();
}

/**
 * Parses the bytes of a `.onnx` file into a plain object (int64 fields as strings, bytes as Buffers); fields
 * outside this schema's subset are skipped.
 */
export function decodeModelProto(bytes: Uint8Array): ModelProtoObject {
  const type = modelProtoType();
  return type.toObject(type.decode(bytes), { longs: String, defaults: false }) as ModelProtoObject;
}
