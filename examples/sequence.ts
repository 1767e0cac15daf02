/**
 * A stateful model: `sequence_accumulator` keeps a running sum per sequence (the server carries it between
 * requests as implicit state). Two sequences run interleaved over one client; each request of a sequence
 * waits for the previous answer, as the sequence batcher requires. Run against a tbench-server (or Triton)
 * that serves the bundled models:
 *   npx tsx examples/sequence.ts [http://localhost:8000]
 */
import { pathToFileURL } from "node:url";
import { createHttpClient, createSequence } from "@tbench/client";

/** The running sums each sequence saw, by sequence id. */
export type SequenceSums = Record<string, number[]>;

const step = (value: number) => ({
  // batch dimension first: the model batches (max_batch_size 8), so [1, 1] is one value of one sequence
  inputs: [{ name: "INPUT", datatype: "INT32" as const, shape: [1, 1], data: [value] }],
});

/** Sends 1..4 on one sequence and 10, 20, 30 on another, at the same time. */
export async function main(url: string, log: (line: string) => void = console.log): Promise<SequenceSums> {
  await using client = createHttpClient({ url, timeoutMs: 10_000 });
  if (!(await client.isModelReady("sequence_accumulator"))) {
    throw new Error(`model 'sequence_accumulator' is not ready at ${url}`);
  }
  const run = async (sequenceId: bigint | string, values: readonly number[]) => {
    await using sequence = createSequence(client, "sequence_accumulator", { sequenceId });
    const sums: number[] = [];
    for (const [i, value] of values.entries()) {
      // START goes with the first request, END with end(): the server then forgets the sequence.
      const result =
        i === values.length - 1 ? await sequence.end(step(value)) : await sequence.infer(step(value));
      sums.push(result.output("OUTPUT")!.as("INT32")[0]!);
      log(`sequence ${String(sequenceId)}: + ${value} = ${sums.at(-1)}`);
    }
    return sums;
  };
  const [numeric, named] = await Promise.all([run(1001n, [1, 2, 3, 4]), run("session-a", [10, 20, 30])]);
  return { "1001": numeric, "session-a": named };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main(process.argv[2] ?? "http://localhost:8000");
}
