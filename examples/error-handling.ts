/**
 * Error handling: every failure is an InferenceError with a stable `code`; switch on it (or use
 * instanceof). The server's message, HTTP status and request id are kept.
 *   npx tsx examples/error-handling.ts [http://localhost:8000]
 */
import { pathToFileURL } from "node:url";
import {
  ConnectionError,
  createHttpClient,
  InferenceError,
  InvalidArgumentError,
  ModelNotFoundError,
} from "@tbench/client";

/** The code each provoked failure had. */
export interface ErrorHandlingResult {
  unknownModel: string;
  badShapeClientSide: string;
  missingInputServerSide: string;
  noServer: string;
}

function describe(error: unknown): string {
  if (!(error instanceof InferenceError)) throw error; // not ours: a bug, rethrow
  switch (error.code) {
    case "NOT_FOUND":
      return `NOT_FOUND (status ${error.status}): ${error.serverMessage}`;
    case "INVALID_ARGUMENT":
      return `INVALID_ARGUMENT${error.status === undefined ? " (caught before sending)" : ` (status ${error.status})`}: ${error.message}`;
    case "UNAVAILABLE":
    case "CONNECTION":
      return `${error.code}: retry later (${error.message})`;
    default:
      return `${error.code}: ${error.message}`;
  }
}

/** Provokes and handles four kinds of failure. */
export async function main(
  url: string,
  log: (line: string) => void = console.log,
): Promise<ErrorHandlingResult> {
  await using client = createHttpClient({ url, timeoutMs: 10_000 });
  const ones = new Int32Array(16).fill(1);
  const codes: Partial<ErrorHandlingResult> = {};

  // 1. A model the server does not have: Triton answers 400 "Request for unknown model", mapped to NOT_FOUND.
  try {
    await client.infer("no_such_model", {
      inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 16], data: ones }],
      id: "req-1",
    });
  } catch (error) {
    log(describe(error));
    if (error instanceof ModelNotFoundError) log(`  request id kept: ${error.requestId}`);
    codes.unknownModel = (error as InferenceError).code;
  }

  // 2. Shape and data disagree: rejected before anything is sent.
  try {
    await client.infer("simple", {
      inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 8], data: ones }],
    });
  } catch (error) {
    log(describe(error));
    codes.badShapeClientSide = (error as InferenceError).code;
  }

  // 3. A request the server rejects: a missing input (400).
  try {
    await client.infer("simple", {
      inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 16], data: ones }],
    });
  } catch (error) {
    log(describe(error));
    if (error instanceof InvalidArgumentError) codes.missingInputServerSide = error.code;
  }

  // 4. No server at all: a connection error (retried first, since nothing was sent).
  await using nowhere = createHttpClient({
    url: "http://127.0.0.1:9",
    maxRetries: 1,
    backoff: { initialDelayMs: 10 },
  });
  try {
    await nowhere.isServerLive();
  } catch (error) {
    log(describe(error));
    if (error instanceof ConnectionError) log(`  requestSent: ${error.requestSent}`);
    codes.noServer = (error as InferenceError).code;
  }
  return codes as ErrorHandlingResult;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main(process.argv[2] ?? "http://localhost:8000");
}
