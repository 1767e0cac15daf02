// Reflection access to the wire contract: a protobufjs Root built from the generated JSON descriptor
// (src/gen/descriptor.ts), for code driven by the schema at run time such as the config.pbtxt codec.
import protobuf from "protobufjs";
import { descriptorJson } from "./gen/descriptor.js";

let root: protobuf.Root | undefined;

/**
 * The protobufjs reflection root of model_config.proto, grpc_service.proto and health.proto, with the
 * field names as written in the protos (snake_case: `max_batch_size`, `raw_input_contents`).
 * Built on first use and shared afterwards: treat it as read-only.
 */
export function protoRoot(): protobuf.Root {
  if (root === undefined) {
    root = protobuf.Root.fromJSON(descriptorJson);
    root.resolveAll();
  }
  return root;
}

/** The reflection type of `inference.ModelConfig` (the schema of config.pbtxt), from {@link protoRoot}. */
export function modelConfigType(): protobuf.Type {
  return protoRoot().lookupType("inference.ModelConfig");
}
