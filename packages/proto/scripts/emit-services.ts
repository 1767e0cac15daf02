// Writes src/gen/services.ts: for every service in the protos, a table of its methods with the gRPC path,
// the streaming flags and the static request/response classes, so gRPC clients and servers (grpc-js) are
// wired from the contract instead of a hand-written list of paths.
import type protobuf from "protobufjs";
import { generatedHeader } from "./generated-header.js";

/** Services to emit, with the exported constant name of each. */
const services: readonly [fullName: string, exportName: string][] = [
  ["inference.GRPCInferenceService", "grpcInferenceServiceMethods"],
  ["grpc.health.v1.Health", "healthServiceMethods"],
];

/** `inference.ModelInferRequest`: the static module exposes packages as nested objects. */
function staticClass(type: protobuf.Type | null, method: protobuf.Method): string {
  if (!type) throw new Error(`${method.fullName}: unresolved request/response type`);
  return type.fullName.slice(1);
}

/** The text of `services.ts` for a loaded root. */
export function emitServices(root: protobuf.Root): string {
  const blocks = services.map(([fullName, exportName]) => {
    const service = root.lookupService(fullName);
    const methods = service.methodsArray.map((method) => {
      const lines = [
        `  ${method.name}: {`,
        `    name: "${method.name}",`,
        `    path: "/${fullName}/${method.name}",`,
        `    requestStream: ${method.requestStream === true},`,
        `    responseStream: ${method.responseStream === true},`,
        `    requestType: ${staticClass(method.resolvedRequestType, method)},`,
        `    responseType: ${staticClass(method.resolvedResponseType, method)},`,
        "  },",
      ];
      return lines.join("\n");
    });
    return (
      `/** The methods of \`${fullName}\`, keyed by method name, in declaration order. */\n` +
      `export const ${exportName} = {\n${methods.join("\n")}\n} as const;\n`
    );
  });
  return (
    generatedHeader("proto/grpc_service.proto and proto/health.proto") +
    'import { grpc, inference } from "#gen/static";\n\n' +
    blocks.join("\n")
  );
}
