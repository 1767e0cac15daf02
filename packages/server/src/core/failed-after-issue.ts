/**
 * Errors a request failed with after the core accepted it: its run failed, its queue timeout expired, it
 * was cancelled in the queue, an ensemble step failed. Refusals at submission (unknown model, validation,
 * a full queue, a stopping server) are not marked. Triton's gRPC stream error mode (`triton_grpc_error`)
 * ends a stream only for the former, as Triton's stream handler sees them: refusals come back from
 * TRITONSERVER_ServerInferAsync itself, the rest through the response callback.
 *
 * The mark is on the error object, so an error object must not be both: a scheduler that keeps an error to
 * refuse later submissions refuses them with a fresh one.
 */
const afterIssue = new WeakSet<object>();

/** Marks `error` as a failure after the request was accepted; returns it. */
export function markFailedAfterIssue<T>(error: T): T {
  if (typeof error === "object" && error !== null) afterIssue.add(error);
  return error;
}

/** Whether `error` was marked by {@link markFailedAfterIssue}. */
export function failedAfterIssue(error: unknown): boolean {
  return typeof error === "object" && error !== null && afterIssue.has(error);
}
