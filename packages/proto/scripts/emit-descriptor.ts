// Writes src/gen/descriptor.ts: the protobufjs JSON reflection descriptor of every proto, as a TypeScript
// module so that tsc carries it into dist/ like any other source (a .json file would need copying).
import type protobuf from "protobufjs";
import { generatedHeader } from "./generated-header.js";

/** The text of `descriptor.ts` for a loaded root (comments dropped: they are not part of the schema). */
export function emitDescriptor(root: protobuf.Root): string {
  const json = root.toJSON({ keepComments: false });
  return (
    generatedHeader("proto/*.proto (protobufjs reflection JSON, field names as written)") +
    'import type { INamespace } from "protobufjs";\n\n' +
    // Not annotated in place: protobufjs's INamespace typing lacks map fields' keyType.
    `const json = ${JSON.stringify(json, null, 2)};\n\n` +
    "/** JSON reflection descriptor of model_config.proto, grpc_service.proto and health.proto. */\n" +
    "export const descriptorJson: INamespace = json;\n"
  );
}
