// Test helper: a queue policy with Triton's defaults (REJECT, no timeout, no override, unlimited size).
import type { QueuePolicySpec } from "../repository/model-spec.js";

/** Triton's default queue policy with the given fields changed. */
export const queuePolicy = (p: Partial<QueuePolicySpec> = {}): QueuePolicySpec => ({
  timeoutAction: "REJECT",
  defaultTimeoutUs: 0,
  allowTimeoutOverride: false,
  maxQueueSize: 0,
  ...p,
});
