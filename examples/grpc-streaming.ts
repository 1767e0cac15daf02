/**
 * Many requests on one gRPC stream (Triton's ModelStreamInfer), the `simple` model. Two ways to use it:
 * write() requests and read every answer with `for await` (matched to its request by id; an error answer
 * comes as `ok: false`, never dropped), or infer() for one promise per request. Run against a
 * tbench-server (or Triton) that serves the bundled models:
 *   npx tsx examples/grpc-streaming.ts [localhost:8001]
 */
import { pathToFileURL } from "node:url";
import { createGrpcClient, type InferInput } from "@tbench/client";

/** What the example saw. */
export interface StreamingResult {
  /** Answers read from the iterator, by request id: the first sum element, or the error's code. */
  answers: Record<string, number | string>;
  /** Results of stream.infer(), in call order: the first difference element. */
  inferred: number[];
}

/** Request `i`: INPUT0 = i..i+15, INPUT1 = 1, so OUTPUT0[0] = i + 1 and OUTPUT1[0] = i - 1. */
function inputs(i: number): InferInput[] {
  return [
    {
      name: "INPUT0",
      datatype: "INT32",
      shape: [1, 16],
      data: Int32Array.from({ length: 16 }, (_, k) => i + k),
    },
    { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: new Int32Array(16).fill(1) },
  ];
}

/** Sends five requests (one of them wrong) and reads the answers, then three more with infer(). */
export async function main(url: string, log: (line: string) => void = console.log): Promise<StreamingResult> {
  await using client = createGrpcClient({ url, timeoutMs: 10_000 });

  const stream = client.stream("simple");
  for (let i = 0; i < 5; i++) {
    // request 3 lacks INPUT1: the server answers that request with an error; the stream stays open
    stream.write({ id: `req-${i}`, inputs: i === 3 ? inputs(i).slice(0, 1) : inputs(i) });
  }
  stream.end(); // no more requests: the loop ends once all five are answered
  const answers: Record<string, number | string> = {};
  for await (const answer of stream) {
    if (answer.ok) {
      answers[answer.id] = answer.result.output("OUTPUT0")!.as("INT32")[0]!;
      log(`${answer.id}: OUTPUT0[0] = ${answers[answer.id]}`);
    } else {
      answers[answer.id] = answer.error.code;
      log(`${answer.id}: ${answer.error.code} ${answer.error.message}`);
    }
  }

  // One promise per request, like unary calls, on one stream (what `tbench --streaming` does).
  await using second = client.stream("simple");
  const inferred = await Promise.all(
    [10, 20, 30].map(
      async (i) => (await second.infer({ inputs: inputs(i) })).output("OUTPUT1")!.as("INT32")[0]!,
    ),
  );
  log(`infer(): OUTPUT1[0] = ${inferred.join(", ")}`);
  return { answers, inferred };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main(process.argv[2] ?? "localhost:8001");
}
