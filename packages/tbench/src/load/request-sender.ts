import { GRPC_STATUS_NAMES } from "@tbench/proto";

/** The sequence fields of one request to a sequence model (sent as `sequence_id`, `sequence_start`, `sequence_end`). */
export interface SequenceFields {
  readonly id: number;
  readonly start: boolean;
  readonly end: boolean;
}

/**
 * What a layer between the load and the sender learns about one request, for its record (filled in by the
 * sequence layer; the load passes one only when the recorder keeps per-request records).
 */
export interface SendNote {
  /** The correlation id the request went with (0: not a sequence request). */
  sequenceId: number;
}

/**
 * What the load layer calls to issue one request. The real one wraps `@tbench/client` (see
 * `infer-sender.ts`); tests pass their own through options. `send` resolves when the response has been
 * received and checked, and rejects with the error that should be counted.
 */
export interface RequestSender {
  /**
   * Sends request number `index` (the sender picks its input data round-robin from it), as a step of a
   * sequence when `sequence` is given; a layer that picks the sequence itself writes its id into `note`.
   * The load ignores the resolved value, so a sender may return its client's promise as is (one promise
   * layer fewer).
   */
  send(index: number, sequence?: SequenceFields, note?: SendNote): Promise<unknown>;
  /** Releases connections; idempotent. */
  close(): Promise<void>;
}

/** Error code used when a response does not match the `validation_data` of the input file. */
export const VALIDATION_ERROR_KIND = "VALIDATION";

/** The gRPC status of an error from the gRPC transport: its own field, or grpc-js's status in `cause`. */
function grpcStatusOf(error: object): string | undefined {
  for (const key of ["grpcStatus", "grpcCode"]) {
    const value = (error as Record<string, unknown>)[key];
    if (typeof value === "string" && value.length > 0) return value;
    if (typeof value === "number") return GRPC_STATUS_NAMES[value] ?? String(value);
  }
  // grpc-js's ServiceError / StatusObject carries the status number as `code` (Node's errors use strings).
  const cause = (error as { cause?: unknown }).cause;
  if (cause !== null && typeof cause === "object") {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "number" && "details" in cause) return GRPC_STATUS_NAMES[code] ?? String(code);
  }
  return undefined;
}

/**
 * The kind under which a failed request is counted. Its first word is the client error's `code`, which
 * `@tbench/client` takes from @tbench/proto's status table for both transports, so the same failure counts
 * under the same word over HTTP and gRPC; in parentheses what the server said: the HTTP status number
 * (`UNAVAILABLE (503)`), or `grpc` and the gRPC status name (`UNAVAILABLE (grpc UNAVAILABLE)`). An error
 * answer on a stream (Triton's `error_message`, which has no status) and client-side failures have the
 * code alone; anything else is counted by its name.
 */
export function classifyError(error: unknown): string {
  if (error !== null && typeof error === "object") {
    const code = (error as { code?: unknown }).code;
    const status = (error as { status?: unknown }).status;
    if (typeof code === "string" && code.length > 0) {
      if (typeof status === "number") return `${code} (${status})`;
      const grpc = grpcStatusOf(error);
      return grpc === undefined ? code : `${code} (grpc ${grpc})`;
    }
    if (typeof status === "number") return `HTTP ${status}`;
    const name = (error as { name?: unknown }).name;
    if (typeof name === "string" && name.length > 0) return name;
  }
  return "UNKNOWN";
}
