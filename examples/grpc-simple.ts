/**
 * The quick start over gRPC: examples/simple.ts with one line changed (createGrpcClient for
 * createHttpClient), the `simple` model: OUTPUT0 = INPUT0 + INPUT1 and OUTPUT1 = INPUT0 - INPUT1.
 * Run against a tbench-server (or Triton) that serves the bundled models:
 *   npx tsx examples/grpc-simple.ts [localhost:8001]
 */
import { pathToFileURL } from "node:url";
import { createGrpcClient } from "@tbench/client";

/** What the example computed. */
export interface SimpleResult {
  sum: number[];
  difference: number[];
}

/** Adds and subtracts two vectors on the server. */
export async function main(url: string, log: (line: string) => void = console.log): Promise<SimpleResult> {
  await using client = createGrpcClient({ url, timeoutMs: 10_000 }); // the one line that changed
  if (!(await client.isModelReady("simple"))) throw new Error(`model 'simple' is not ready at ${url}`);

  const a = Int32Array.from({ length: 16 }, (_, i) => i); // 0..15
  const b = new Int32Array(16).fill(1);
  const result = await client.infer("simple", {
    inputs: [
      // batch dimension first: the model batches (max_batch_size 8), so [1, 16] is one request of 16 values
      { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: a },
      { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: b },
    ],
  });

  // as("INT32") is an Int32Array over the response buffer (no copy), checked against the output's datatype
  const sum = [...result.output("OUTPUT0")!.as("INT32")];
  const difference = [...result.output("OUTPUT1")!.as("INT32")];
  for (let i = 0; i < 16; i++) log(`${a[i]} + ${b[i]} = ${sum[i]}    ${a[i]} - ${b[i]} = ${difference[i]}`);
  return { sum, difference };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main(process.argv[2] ?? "localhost:8001");
}
