/**
 * Cancellation and deadlines: an AbortSignal or a `timeoutMs` cancels the HTTP request itself (the server
 * sees the connection drop), and the call rejects with AbortedError (cause: the signal's reason) or
 * DeadlineExceededError. `timeoutUs` is different: a queue timeout the server enforces.
 *   npx tsx examples/cancellation.ts [http://localhost:8000]
 */
import { pathToFileURL } from "node:url";
import { AbortedError, createHttpClient, DeadlineExceededError, type InferInput } from "@tbench/client";

/** How each call ended. */
export interface CancellationResult {
  aborted: string;
  abortReason: unknown;
  deadline: string;
  inTime: string;
}

/** Starts requests and cancels them. */
export async function main(
  url: string,
  log: (line: string) => void = console.log,
): Promise<CancellationResult> {
  await using client = createHttpClient({ url });
  // A batch of 8 images for resnet_like: ~4.8 MB up and real work on the server, so it takes a while.
  const batch: InferInput = {
    name: "input",
    datatype: "FP32",
    shape: [8, 3, 224, 224],
    data: new Float32Array(8 * 3 * 224 * 224).fill(0.5),
  };

  // 1. Abort from outside, e.g. the user navigated away.
  const controller = new AbortController();
  const pending = client.infer("resnet_like", { inputs: [batch] }, { signal: controller.signal });
  controller.abort(new Error("user cancelled"));
  let aborted = "completed";
  let abortReason: unknown;
  try {
    await pending;
  } catch (error) {
    if (!(error instanceof AbortedError)) throw error;
    aborted = error.code;
    abortReason = error.cause;
    log(`aborted: ${error.message}; reason: ${(error.cause as Error).message}`);
  }

  // 2. A deadline: the whole call (including retries) must finish within timeoutMs.
  let deadline = "completed";
  try {
    await client.infer("resnet_like", { inputs: [batch] }, { timeoutMs: 1 });
  } catch (error) {
    if (!(error instanceof DeadlineExceededError)) throw error;
    deadline = error.code;
    log(`deadline: ${error.message}`);
  }

  // 3. AbortSignal.timeout() and AbortSignal.any() compose with it; a generous one lets the call finish.
  const result = await client.infer(
    "resnet_like",
    { inputs: [{ ...batch, shape: [1, 3, 224, 224], data: new Float32Array(3 * 224 * 224) }] },
    {
      signal: AbortSignal.any([AbortSignal.timeout(30_000), new AbortController().signal]),
    },
  );
  const inTime = `${result.output("output")!.size} scores`;
  log(`in time: ${inTime}`);
  return { aborted, abortReason, deadline, inTime };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main(process.argv[2] ?? "http://localhost:8000");
}
