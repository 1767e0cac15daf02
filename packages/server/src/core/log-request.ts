/**
 * The prefix Triton puts before a request's error messages and log lines (its LOG_REQUEST), shared by the
 * front ends, the schedulers and ensembles so that every message about one request names it alike.
 */

/** Triton's request prefix: `[request id: <id>] ` (`<id_unknown>` when the request has no id). */
export function logRequest(request: { readonly id?: string }): string {
  return `[request id: ${request.id ? request.id : "<id_unknown>"}] `;
}
