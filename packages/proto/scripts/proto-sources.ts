// Where the .proto files live and how every generator loads them, so all generated files agree.
import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";

/** The repository's `proto/` directory (the wire contract). */
export const protoDir = fileURLToPath(new URL("../../../proto/", import.meta.url));

/** The .proto files compiled into `src/gen/`, in load order (model_config.proto is imported by grpc_service.proto). */
export const protoFiles = ["model_config.proto", "grpc_service.proto", "health.proto"] as const;

/** Absolute paths of {@link protoFiles}. */
export function protoPaths(): string[] {
  return protoFiles.map((file) => protoDir + file);
}

/**
 * Parses every proto with Triton's original (snake_case) field names and the `//` comments kept,
 * resolving imports inside `proto/` only.
 */
export function loadProtoRoot(): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => protoDir + target.slice(target.lastIndexOf("/") + 1);
  root.loadSync([...protoFiles], { keepCase: true, alternateCommentMode: true });
  root.resolveAll();
  return root;
}
