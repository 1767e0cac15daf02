// The real protoc as a judge of the wire: `--encode` turns protobuf text format into binary, `--decode`
// turns binary into protoc's canonical text (fields in number order, map entries sorted by key).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const protoDir = fileURLToPath(new URL("../../../../../proto/", import.meta.url));

function protoc(args: readonly string[], input: string | Uint8Array): Buffer {
  const result = spawnSync("protoc", [`--proto_path=${protoDir}`, ...args, "grpc_service.proto"], { input });
  if (result.error)
    throw new Error(
      `protoc is required for the golden wire tests (apt-get install protobuf-compiler; .ci/run installs it): ${result.error.message}`,
    );
  assert.equal(result.status, 0, `protoc ${args.join(" ")} failed: ${result.stderr.toString()}`);
  return result.stdout;
}

/** `protoc --encode=<typeName>`: text format in, the bytes protoc writes out. */
export function protocEncode(typeName: string, text: string): Uint8Array {
  return new Uint8Array(protoc([`--encode=${typeName}`], text));
}

/** `protoc --decode=<typeName>`: bytes in, protoc's text out. */
export function protocDecode(typeName: string, bytes: Uint8Array): string {
  return protoc([`--decode=${typeName}`], bytes).toString("utf8");
}
