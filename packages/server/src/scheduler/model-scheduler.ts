/**
 * The scheduler of one model version: queues validated requests by priority under their queue policies,
 * forms batches with the dynamic batcher (or one request per run without dynamic_batching), gives each
 * batch to any idle instance, and answers every request (in arrival order with preserve_ordering).
 */
import type { Clock, TimerHandle } from "../core/clock.js";
import { markFailedAfterIssue } from "../core/failed-after-issue.js";
import { logRequest } from "../core/log-request.js";
import { ServerError } from "../core/server-error.js";
import type { TraceFn } from "../core/trace.js";
import type { InferenceResponse, Tensor } from "../core/types.js";
import type { InstancePool } from "../instances/instance-pool.js";
import { type ModelSpec, queuePolicySpec } from "../repository/model-spec.js";
import type { ExecutionTimes, FailureReason, ModelStatsCollector } from "../stats/model-stats.js";
import { assembleBatch, splitOutputs } from "./batch-assembly.js";
import { classify } from "./classification.js";
import { type BatchableEntry, type BatcherSettings, decideBatch } from "./dynamic-batcher.js";
import { PriorityQueue } from "./priority-queue.js";
import type { InstanceScheduler, SecondaryStats, ValidatedRequest } from "./scheduler.js";

/** One version's scheduler over its instances; it owns the pool it is given (close and destroy end it). */
export interface ModelScheduler extends InstanceScheduler {
  /** Stops accepting requests and resolves once every accepted one is answered (the pool stays open). */
  drain(): Promise<void>;
}

export interface ModelSchedulerOptions {
  readonly spec: ModelSpec;
  readonly version: string;
  readonly pool: Pick<InstancePool, "hasIdle" | "run" | "close">;
  readonly clock: Clock;
  readonly stats: ModelStatsCollector;
  /** Labels per output name (classification). */
  readonly labels?: ReadonlyMap<string, readonly string[]>;
  readonly trace?: TraceFn | undefined;
  /** Test hook: a request whose parameters hold this key set to true makes the instance's worker exit. */
  readonly crashParameter?: string | undefined;
  /**
   * Most requests queued for this version at once, on every priority level together (--max-pending-requests;
   * 0 or undefined: no limit). Bounds the queue when the config sets no max_queue_size: past it a request is
   * refused at once with UNAVAILABLE (503) instead of the queue growing without limit.
   */
  readonly maxPendingRequests?: number | undefined;
}

interface Pending extends BatchableEntry {
  readonly validated: ValidatedRequest;
  readonly startNs: number;
  readonly secondary: SecondaryStats | undefined;
  readonly seq: number;
  readonly resolve: (response: InferenceResponse) => void;
  readonly reject: (error: unknown) => void;
}

/** The batcher settings a spec implies (no dynamic_batching: one request per run, no delay). */
export function batcherSettings(spec: ModelSpec): BatcherSettings {
  const db = spec.dynamicBatching;
  if (!db) return { maxBatchSize: 1, preferredBatchSizes: [], maxQueueDelayUs: 0 };
  return {
    maxBatchSize: Math.max(1, spec.maxBatchSize),
    preferredBatchSizes: db.preferredBatchSizes,
    maxQueueDelayUs: db.maxQueueDelayUs,
  };
}

/**
 * The key of the input shapes that must agree within a batch (every variable-size input: a config with
 * allow_ragged_batch does not load, so no input is exempt).
 */
function shapeKey(spec: ModelSpec, request: ValidatedRequest): string {
  let key = "";
  for (const input of request.inputs) {
    if (!input.spec.dims.includes(-1)) continue;
    const shape = spec.maxBatchSize > 0 ? input.tensor.shape.slice(1) : input.tensor.shape;
    key += `${input.spec.name}:${shape.join("x")};`;
  }
  return key;
}

/** Creates the scheduler for one loaded version. */
export function createModelScheduler(options: ModelSchedulerOptions): ModelScheduler {
  const { spec, clock, stats, pool, trace, version } = options;
  const db = spec.dynamicBatching;
  const settings = batcherSettings(spec);
  const queue = new PriorityQueue<Pending>(
    db?.defaultQueuePolicy ?? queuePolicySpec(undefined),
    db?.priorityQueuePolicy,
  );
  // Pending = queued: a request stops counting once its batch goes to an instance (or it leaves the queue).
  stats.setPendingCounter(() => queue.size());
  const preserveOrdering = db?.preserveOrdering === true;
  let timer: TimerHandle | undefined;
  let passScheduled = false;
  let stopping = false;
  let closing: Promise<void> | undefined;
  let abandoned: ServerError | undefined;
  let inFlight = 0;
  let nextSeq = 0;
  let nextToDeliver = 0;
  const ready = new Map<number, () => void>();
  const drainWaiters: (() => void)[] = [];

  const deliver = (entry: Pending, settle: () => void) => {
    if (!preserveOrdering) {
      settle();
      return;
    }
    ready.set(entry.seq, settle);
    for (let next = ready.get(nextToDeliver); next; next = ready.get(nextToDeliver)) {
      ready.delete(nextToDeliver);
      nextToDeliver++;
      next();
    }
  };

  const checkDrained = () => {
    if (queue.size() === 0 && inFlight === 0 && ready.size === 0) {
      for (const waiter of drainWaiters.splice(0)) waiter();
    }
  };

  const fail = (entry: Pending, error: unknown, reason: FailureReason) => {
    const now = clock.nowNs();
    stats.requestFailed(now - entry.startNs, reason, clock.epochMs());
    markFailedAfterIssue(error);
    deliver(entry, () => entry.reject(error));
  };

  const priorityOf = (request: ValidatedRequest): number => {
    if (!db || db.priorityLevels === 0) return 0;
    const p = request.request.priority ?? 0;
    return p === 0 || p > db.priorityLevels ? db.defaultPriorityLevel : p;
  };

  const respond = (entry: Pending, outputs: Tensor[], queueNs: number, times: ExecutionTimes) => {
    const request = entry.validated.request;
    const finalOutputs = request.outputs?.some((o) => (o.classification ?? 0) > 0)
      ? outputs.map((tensor) => {
          const k = request.outputs?.find((o) => o.name === tensor.name)?.classification ?? 0;
          return k > 0
            ? classify(tensor, k, spec.maxBatchSize > 0, options.labels?.get(tensor.name))
            : tensor;
        })
      : outputs;
    const response: InferenceResponse = {
      model: spec.name,
      version,
      ...(request.id !== undefined && request.id !== "" ? { id: request.id } : {}),
      outputs: finalOutputs,
    };
    const durationNs = clock.nowNs() - entry.startNs;
    const epochMs = clock.epochMs();
    stats.requestSucceeded(durationNs, queueNs, times, epochMs);
    entry.secondary?.requestSucceeded(durationNs, queueNs, times, epochMs);
    deliver(entry, () => entry.resolve(response));
  };

  const dispatch = (entries: readonly Pending[]) => {
    const dispatchNs = clock.nowNs();
    const requests = entries.map((e) => e.validated);
    const t0 = performance.now();
    let assembled: ReturnType<typeof assembleBatch>;
    try {
      assembled = assembleBatch(spec, requests);
    } catch (error) {
      for (const entry of entries) fail(entry, error, "BACKEND");
      return;
    }
    const assembleNs = (performance.now() - t0) * 1e6;
    const hook = options.crashParameter;
    const crash = hook !== undefined && requests.some((r) => r.request.parameters?.[hook] === true);
    const rows = requests.reduce((sum, r) => sum + Math.max(1, r.batchSize), 0);
    inFlight++;
    pool
      .run({
        inputs: assembled.inputs,
        outputNames: requests[0]!.outputs.map((o) => o.name),
        transfer: assembled.transfer,
        ...(crash ? { crash: true } : {}),
      })
      .then(
        (result) => {
          const t1 = performance.now();
          let perRequest: Tensor[][];
          try {
            perRequest = splitOutputs(spec, requests, result.outputs);
          } catch (error) {
            for (const entry of entries) fail(entry, error, "BACKEND");
            return;
          }
          const times: ExecutionTimes = {
            computeInputNs: assembleNs + result.inputNs,
            computeInferNs: result.inferNs,
            computeOutputNs: result.outputNs + (performance.now() - t1) * 1e6,
          };
          stats.executed(rows, times);
          entries.forEach((entry, i) => {
            try {
              respond(entry, perRequest[i]!, dispatchNs - entry.enqueueNs + (result.waitNs ?? 0), times);
            } catch (error) {
              fail(entry, error, "BACKEND");
            }
          });
        },
        (error: unknown) => {
          for (const entry of entries) fail(entry, error, "BACKEND");
        },
      )
      .finally(() => {
        inFlight--;
        schedulePass();
        checkDrained();
      });
  };

  const pass = () => {
    passScheduled = false;
    for (;;) {
      const now = clock.nowNs();
      const { rejected, cancelled } = queue.applyPolicies(now);
      for (const entry of rejected) {
        fail(entry, new ServerError("UNAVAILABLE", "Request timeout expired"), "REJECTED");
      }
      for (const entry of cancelled) {
        fail(entry, new ServerError("CANCELLED", `${entry.logPrefix}request was cancelled`), "CANCELED");
      }
      if (queue.size() === 0) {
        timer?.cancel();
        timer = undefined;
        break;
      }
      if (!pool.hasIdle()) break;
      const decision = decideBatch(queue.ordered(), settings, now, queue.closestTimeoutNs());
      if (decision.kind === "empty") break;
      if (decision.kind === "wait") {
        trace?.(`${spec.name}:${version} t=${now / 1000}us wait ${decision.waitUs}us: ${decision.reason}`);
        timer?.cancel();
        timer = clock.setTimer(() => {
          timer = undefined;
          schedulePass();
        }, decision.waitUs);
        break;
      }
      trace?.(
        `${spec.name}:${version} t=${now / 1000}us send batch ${decision.batchSize} ` +
          `(${decision.entries.length} requests): ${decision.reason}`,
      );
      timer?.cancel();
      timer = undefined;
      queue.remove(new Set(decision.entries));
      dispatch(decision.entries);
    }
    checkDrained();
  };

  function schedulePass(): void {
    if (passScheduled) return;
    passScheduled = true;
    // Coalesces the arrivals of one tick: requests that arrive together are batched together.
    queueMicrotask(pass);
  }

  function abandon(error: ServerError): void {
    if (abandoned) return;
    abandoned = error;
    timer?.cancel();
    timer = undefined;
    const queued = [...queue.ordered()];
    queue.remove(new Set(queued));
    for (const entry of queued) fail(entry, error, "BACKEND");
    checkDrained();
  }

  function drain(): Promise<void> {
    stopping = true;
    return new Promise<void>((resolve) => {
      drainWaiters.push(resolve);
      schedulePass();
    });
  }

  return {
    submit(validated, startNs, secondary) {
      const request = validated.request;
      if (abandoned) {
        stats.requestFailed(clock.nowNs() - startNs, "BACKEND", clock.epochMs());
        // A refusal at submission: a fresh error, not the one the queued requests failed with after issue.
        return Promise.reject(new ServerError(abandoned.status, abandoned.message));
      }
      if (stopping) {
        return Promise.reject(
          new ServerError(
            "UNAVAILABLE",
            `${logRequest(request)}Server is stopping, scheduler for model has stopped accepting new inference requests`,
          ),
        );
      }
      const cap = options.maxPendingRequests ?? 0;
      if (cap > 0 && queue.size() >= cap) {
        // Refused before it is queued, as a full max_queue_size is: the answer never waits behind admitted work.
        stats.requestFailed(clock.nowNs() - startNs, "REJECTED", clock.epochMs());
        return Promise.reject(
          new ServerError(
            "UNAVAILABLE",
            `${logRequest(request)}Exceeds the server's limit of ${cap} pending requests for model '${spec.name}' (--max-pending-requests)`,
          ),
        );
      }
      return new Promise<InferenceResponse>((resolve, reject) => {
        const entry: Pending = {
          validated,
          startNs,
          secondary,
          // Taken only once the queue accepts the entry: preserve_ordering delivers seq by seq, no gaps.
          seq: nextSeq,
          resolve,
          reject,
          batchSize: validated.batchSize,
          enqueueNs: clock.nowNs(),
          timeoutNs: 0,
          isCancelled: () => request.signal?.aborted === true,
          logPrefix: logRequest(request),
          requestTimeoutUs: request.timeoutUs ?? 0,
          shapeKey: shapeKey(spec, validated),
        };
        try {
          queue.enqueue(priorityOf(validated), entry);
        } catch (error) {
          stats.requestFailed(clock.nowNs() - startNs, "REJECTED", clock.epochMs());
          reject(error);
          return;
        }
        nextSeq++;
        request.signal?.addEventListener("abort", schedulePass, { once: true });
        schedulePass();
      });
    },
    instanceIdle: schedulePass,
    abandon,
    drain,
    close() {
      closing ??= drain().then(() => options.pool.close());
      return closing;
    },
    destroy() {
      abandon(new ServerError("UNAVAILABLE", "Server is stopping"));
      return options.pool.close();
    },
  };
}
