/**
 * What the load layer calls to issue one request. The real one wraps `@tbench/client` (see
 * `infer-sender.ts`); tests pass their own through options. `send` resolves when the response has been
 * received and checked, and rejects with the error that should be counted.
 */
export interface RequestSender {
  /**
   * Sends request number `index` (the sender picks its input data round-robin from it). The load ignores
   * the resolved value, so a sender may return its client's promise as is (one promise layer fewer).
   */
  send(index: number): Promise<unknown>;
  /** Releases connections; idempotent. */
  close(): Promise<void>;
}

/** Error code used when a response does not match the `validation_data` of the input file. */
export const VALIDATION_ERROR_KIND = "VALIDATION";

/**
 * The kind under which a failed request is counted: the client error's `code` and, when known, its HTTP
 * status (e.g. `UNAVAILABLE (503)`); anything else by its name.
 */
export function classifyError(error: unknown): string {
  if (error !== null && typeof error === "object") {
    const code = (error as { code?: unknown }).code;
    const status = (error as { status?: unknown }).status;
    if (typeof code === "string" && code.length > 0) {
      return typeof status === "number" ? `${code} (${status})` : code;
    }
    if (typeof status === "number") return `HTTP ${status}`;
    const name = (error as { name?: unknown }).name;
    if (typeof name === "string" && name.length > 0) return name;
  }
  return "UNKNOWN";
}
