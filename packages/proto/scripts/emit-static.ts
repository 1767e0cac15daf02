// Runs pbjs/pbts (protobufjs-cli, in process) to produce the static code: src/gen/static.js (ES module) and
// src/gen/static.d.ts. Field names stay as written in the protos (--keep-case), so the static classes,
// config.pbtxt and the JSON forms all use Triton's snake_case spelling. 64-bit integers are Long (or
// number) as protobufjs decides; `toObject(m, { longs: String })` gives lossless strings.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pbjs } from "protobufjs-cli";
import { generatedHeader } from "./generated-header.js";
import { protoDir, protoPaths } from "./proto-sources.js";

/** pbjs options; verify, delimited, type-URL and pbjs service stubs are left out (gRPC uses grpc-js). */
export const pbjsOptions = [
  "--target",
  "static-module",
  "--wrap",
  "esm",
  "--keep-case",
  "--no-verify",
  "--no-delimited",
  "--no-typeurl",
  "--no-service",
] as const;

function runPbjs(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    pbjs.main(args, (error) => (error ? reject(error) : resolve()));
  });
}

/** The static module and its declarations for every proto, each with the generated-file header. */
export async function emitStatic(): Promise<{ js: string; dts: string }> {
  const work = mkdtempSync(join(tmpdir(), "tbench-pbjs-"));
  try {
    const out = join(work, "static.js");
    await runPbjs([...pbjsOptions, "--path", protoDir, "--dts", "--out", out, ...protoPaths()]);
    const header = generatedHeader("proto/*.proto (pbjs static-module, pbts)");
    return {
      js: header + readFileSync(out, "utf8"),
      dts: header + readFileSync(join(work, "static.d.ts"), "utf8"),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
