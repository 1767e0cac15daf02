/**
 * BYTES tensors in and out with `identity_bytes` (OUTPUT0 = INPUT0): strings are sent as UTF-8 with a
 * 4-byte length per element (binary) or as JSON strings, and come back as strings or byte arrays.
 *   npx tsx examples/bytes.ts [http://localhost:8000]
 */
import { pathToFileURL } from "node:url";
import { createHttpClient } from "@tbench/client";

/** What came back. */
export interface BytesResult {
  binary: string[];
  json: string[];
  byteLengths: number[];
}

/** Sends strings through identity_bytes, as binary and as JSON. */
export async function main(url: string, log: (line: string) => void = console.log): Promise<BytesResult> {
  await using client = createHttpClient({ url, timeoutMs: 10_000 });
  const words = ["hello", "wörld", "", "🚀 tensors"];

  // Binary (the default): each element is a 4-byte little-endian length and the UTF-8 bytes.
  const binary = await client.infer("identity_bytes", {
    inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [1, words.length], data: words }],
  });
  const out = binary.output("OUTPUT0")!;
  log(`binary: ${JSON.stringify(out.strings())} shape [${out.shape}]`);
  const byteLengths = out.bytes().map((b) => b.byteLength); // Uint8Array views, e.g. for non-text payloads

  // JSON both ways: readable on the wire, fine for small tensors.
  const json = await client.infer("identity_bytes", {
    inputs: [
      {
        name: "INPUT0",
        datatype: "BYTES",
        shape: [1, 2],
        data: [new TextEncoder().encode("raw"), new TextEncoder().encode("bytes")],
      },
    ],
    binaryInputs: false,
    binaryOutputs: false,
  });
  log(`json: ${JSON.stringify(json.output("OUTPUT0")!.strings())}`);
  return { binary: out.strings(), json: json.output("OUTPUT0")!.strings(), byteLengths };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main(process.argv[2] ?? "http://localhost:8000");
}
