/**
 * What every scheduler takes and does (Triton's Scheduler: Enqueue, Stop). A loaded version is served by
 * exactly one: the model scheduler over its instances (model-scheduler.ts) or an ensemble's
 * (ensemble/ensemble-scheduler.ts). The core validates a request against the version's config first
 * (lifecycle/request-validation.ts), so a scheduler only ever sees a ValidatedRequest.
 */
import type { ServerError } from "../core/server-error.js";
import type { InferenceRequest, InferenceResponse, ResponseSink, Tensor } from "../core/types.js";
import type { InstanceLoss } from "../instances/instance-pool.js";
import type { TensorSpec } from "../repository/model-spec.js";
import type { ModelStatsCollector } from "../stats/model-stats.js";

/** One validated input. */
export interface ValidatedInput {
  readonly spec: TensorSpec;
  readonly tensor: Tensor;
  /** Shape without the batch dimension, after reshape: what the model sees per batch row. */
  readonly shape: readonly number[];
}

/** A request that passed validation. */
export interface ValidatedRequest {
  readonly request: InferenceRequest;
  /** Triton's batch size: the first dimension when max_batch_size > 0, else 0. */
  readonly batchSize: number;
  /** In config input order. */
  readonly inputs: readonly ValidatedInput[];
  /** Requested outputs (all of the config's when the request names none), in config order. */
  readonly outputs: readonly TensorSpec[];
}

/** A second collector of one request's success figures (a subset of ModelStatsCollector). */
export type SecondaryStats = Pick<ModelStatsCollector, "requestSucceeded">;

/** Takes the requests of one loaded version and runs them. */
export interface Scheduler {
  /**
   * Queues a validated request; resolves with its response. `startNs`: when the core received it.
   * `secondary`: also told of the request's success, with the same figures (Triton's secondary stats
   * aggregator: an ensemble sums its member requests' compute times this way).
   */
  submit(request: ValidatedRequest, startNs: number, secondary?: SecondaryStats): Promise<InferenceResponse>;
  /**
   * A scheduler that answers many times per request (a decoupled model's) streams them to `sink`; without
   * it, a streamed request gets submit's one response, final.
   */
  submitStream?(request: ValidatedRequest, startNs: number, sink: ResponseSink): void;
  /** Graceful: stops accepting, answers every accepted request, then ends what it owns. Idempotent. */
  close(): Promise<void>;
  /** Now: fails every request still queued (UNAVAILABLE), ends what it owns. Idempotent. */
  destroy(): Promise<void>;
}

/**
 * A scheduler that runs batches on a version's instance pool: told when an instance frees up, when one
 * dies, and when all died.
 */
export interface InstanceScheduler extends Scheduler {
  /** An instance became idle. */
  instanceIdle(): void;
  /**
   * An instance died (and is being replaced, or not): what its thread kept for the scheduler is gone. Only
   * schedulers that keep something there listen (the sequence batcher's states).
   */
  instanceLost?(loss: InstanceLoss): void;
  /**
   * No instance can run a batch again (every one died): fails every queued request and every later one with
   * `error`. Batches already running are answered as their instances answer them.
   */
  abandon(error: ServerError): void;
}
