// Test helper: a sender module for load workers whose requests complete after a microtask (no network),
// loaded by worker threads through `createSender(spec)` like the real sender-factory module.
import type { RequestSender } from "../load/request-sender.js";

/** Spec of the instant sender: requests whose index is a multiple of `failEvery` fail with `UNAVAILABLE`. */
export interface InstantSenderSpec {
  failEvery: number;
}

/** Creates a sender that completes at once (failing every `failEvery`-th request). */
export async function createSender(spec: InstantSenderSpec): Promise<RequestSender> {
  return {
    async send(index) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (spec.failEvery > 0 && index % spec.failEvery === spec.failEvery - 1) {
        throw Object.assign(new Error("injected"), { code: "UNAVAILABLE", status: 503 });
      }
    },
    async close() {},
  };
}
