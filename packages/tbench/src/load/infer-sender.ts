import type { InferenceClient, InferInput, InferResult, PreparedInfer } from "@tbench/client";
import type { ExpectedOutput, RequestData } from "./input-data.js";
import { type RequestSender, type SequenceFields, VALIDATION_ERROR_KIND } from "./request-sender.js";

/** Options of {@link createInferSender}. */
export interface InferSenderOptions {
  client: InferenceClient;
  model: string;
  modelVersion: string | undefined;
  requests: readonly RequestData[];
  binaryInputs: boolean;
  binaryOutputs: boolean;
  /** Close the client when the sender is closed (true when the sender created it). */
  ownsClient: boolean;
}

/** A response that does not match the input file's `validation_data`; counted as `VALIDATION`. */
export class ValidationMismatchError extends Error {
  readonly code = VALIDATION_ERROR_KIND;
  override readonly name = "ValidationMismatchError";
}

function sameValue(actual: unknown, expected: unknown): boolean {
  if (typeof actual === "bigint" || typeof expected === "bigint") return String(actual) === String(expected);
  if (typeof actual === "boolean" || typeof expected === "boolean")
    return Number(actual) === Number(expected);
  return actual === expected;
}

/** Checks a response against `validation_data`; throws {@link ValidationMismatchError} on the first mismatch. */
export function checkExpected(
  result: Awaited<ReturnType<PreparedInfer["send"]>>,
  expected: readonly ExpectedOutput[],
): void {
  for (const want of expected) {
    const output = result.output(want.name);
    if (output === undefined)
      throw new ValidationMismatchError(`output ${want.name} missing from the response`);
    const got = output.toArray() as unknown[];
    if (got.length !== want.values.length) {
      throw new ValidationMismatchError(
        `output ${want.name}: expected ${want.values.length} values, got ${got.length}`,
      );
    }
    for (let i = 0; i < got.length; i++) {
      if (!sameValue(got[i], want.values[i])) {
        throw new ValidationMismatchError(
          `output ${want.name}[${i}]: expected ${String(want.values[i])}, got ${String(got[i])}`,
        );
      }
    }
  }
}

/**
 * Sends infer requests through `@tbench/client`. Each distinct request is encoded once with
 * `prepareInfer` and re-sent as is, so the per-request cost is the client's send path only. A step of a
 * sequence carries its own id and flags, so it is encoded as it is sent (`infer`).
 */
export function createInferSender(options: InferSenderOptions): RequestSender {
  const { client, requests } = options;
  const prepared = requests.map((request) =>
    client.prepareInfer(options.model, {
      inputs: request.inputs as unknown as InferInput[],
      ...(options.modelVersion !== undefined ? { modelVersion: options.modelVersion } : {}),
      binaryInputs: options.binaryInputs,
      binaryOutputs: options.binaryOutputs,
    }),
  );
  const count = prepared.length;
  let closed = false;
  const sendStep = (slot: number, sequence: SequenceFields) =>
    client.infer(options.model, {
      inputs: requests[slot]!.inputs as unknown as InferInput[],
      ...(options.modelVersion !== undefined ? { modelVersion: options.modelVersion } : {}),
      binaryInputs: options.binaryInputs,
      binaryOutputs: options.binaryOutputs,
      sequenceId: sequence.id,
      sequenceStart: sequence.start,
      sequenceEnd: sequence.end,
    });
  return {
    // Not an async function: without validation data the client's own promise is handed back as is, so
    // a request costs the load loop one promise layer fewer. A synchronous throw still becomes a rejection.
    send(index, sequence) {
      const slot = index % count;
      let sent: Promise<InferResult>;
      try {
        sent = sequence === undefined ? prepared[slot]!.send() : sendStep(slot, sequence);
      } catch (error) {
        return Promise.reject(error);
      }
      const expected = requests[slot]?.expected;
      if (expected === undefined) return sent;
      return sent.then((result) => checkExpected(result, expected));
    },
    async close() {
      if (closed) return;
      closed = true;
      if (options.ownsClient) await client.close();
    },
  };
}

/** Sends `GET /v2/health/ready` through the client (the trivial endpoint of the benchmark). */
export function createHealthSender(client: InferenceClient, ownsClient: boolean): RequestSender {
  let closed = false;
  const checkReady = (ready: boolean) => {
    if (!ready) throw Object.assign(new Error("server not ready"), { code: "UNAVAILABLE" });
  };
  return {
    send() {
      return client.isServerReady().then(checkReady);
    },
    async close() {
      if (closed) return;
      closed = true;
      if (ownsClient) await client.close();
    },
  };
}
