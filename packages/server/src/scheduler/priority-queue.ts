/**
 * Triton's PriorityQueue (scheduler_utils.cc): one policy queue per priority level (1 is the highest; level
 * 0 when the model has no priority levels), each with its queue policy: max_queue_size, a default timeout
 * (overridable downward per request when allowed), and a timeout action: REJECT drops an expired request,
 * DELAY moves it behind every unexpired request of its level.
 */
import { ServerError } from "../core/server-error.js";
import type { QueuePolicySpec } from "../repository/model-spec.js";

/** What the queue needs to know about an entry. */
export interface QueueEntry {
  /** Rows the entry adds to a batch (at least 1). */
  readonly batchSize: number;
  readonly enqueueNs: number;
  /** Absolute deadline in ns, 0 for none; set by enqueue. */
  timeoutNs: number;
  /** True once the request was cancelled (client gone). */
  isCancelled(): boolean;
  /** For the queue-full message. */
  readonly logPrefix: string;
  /** The request's own timeout in µs (0: none). */
  readonly requestTimeoutUs: number;
}

class PolicyQueue<T extends QueueEntry> {
  readonly queue: T[] = [];
  readonly delayed: T[] = [];
  constructor(readonly policy: QueuePolicySpec) {}
  size(): number {
    return this.queue.length + this.delayed.length;
  }
}

/** Entries the policies removed in one pass. */
export interface PolicyOutcome<T> {
  readonly rejected: T[];
  readonly cancelled: T[];
}

/** The queues of one model version. */
export class PriorityQueue<T extends QueueEntry> {
  private readonly levels = new Map<number, PolicyQueue<T>>();
  private count = 0;

  constructor(
    private readonly defaultPolicy: QueuePolicySpec,
    policies: ReadonlyMap<number, QueuePolicySpec> = new Map(),
  ) {
    for (const [level, policy] of policies) this.levels.set(level, new PolicyQueue(policy));
  }

  /** Number of queued entries (delayed ones included). */
  size(): number {
    return this.count;
  }

  private level(priority: number): PolicyQueue<T> {
    let queue = this.levels.get(priority);
    if (!queue) {
      queue = new PolicyQueue<T>(this.defaultPolicy);
      this.levels.set(priority, queue);
    }
    return queue;
  }

  /** Adds an entry; throws UNAVAILABLE "Exceeds maximum queue size" when its level is full. */
  enqueue(priority: number, entry: T): void {
    const queue = this.level(priority);
    const { policy } = queue;
    if (policy.maxQueueSize !== 0 && queue.size() >= policy.maxQueueSize) {
      throw new ServerError("UNAVAILABLE", `${entry.logPrefix}Exceeds maximum queue size`);
    }
    let timeoutUs = policy.defaultTimeoutUs;
    // Triton lets a request shorten the default timeout, never lengthen it (nor set one where none is).
    if (policy.allowTimeoutOverride && entry.requestTimeoutUs !== 0 && entry.requestTimeoutUs < timeoutUs) {
      timeoutUs = entry.requestTimeoutUs;
    }
    entry.timeoutNs = timeoutUs !== 0 ? entry.enqueueNs + timeoutUs * 1000 : 0;
    queue.queue.push(entry);
    this.count++;
  }

  /** Entries in scheduling order: by level (lowest number first), unexpired then delayed. */
  *ordered(): Generator<T> {
    const keys = [...this.levels.keys()].sort((a, b) => a - b);
    for (const key of keys) {
      const queue = this.levels.get(key)!;
      yield* queue.queue;
      yield* queue.delayed;
    }
  }

  /** Applies cancellation and timeouts at time `nowNs` (Triton: strictly after the deadline). */
  applyPolicies(nowNs: number): PolicyOutcome<T> {
    const rejected: T[] = [];
    const cancelled: T[] = [];
    for (const queue of this.levels.values()) {
      const keep: T[] = [];
      for (const entry of queue.queue) {
        if (entry.isCancelled()) cancelled.push(entry);
        else if (entry.timeoutNs !== 0 && nowNs > entry.timeoutNs) {
          if (queue.policy.timeoutAction === "DELAY") queue.delayed.push(entry);
          else rejected.push(entry);
        } else keep.push(entry);
      }
      queue.queue.splice(0, queue.queue.length, ...keep);
      const delayedKeep = queue.delayed.filter((entry) => {
        if (!entry.isCancelled()) return true;
        cancelled.push(entry);
        return false;
      });
      queue.delayed.splice(0, queue.delayed.length, ...delayedKeep);
    }
    this.count -= rejected.length + cancelled.length;
    return { rejected, cancelled };
  }

  /** The earliest deadline among unexpired entries, 0 when none. */
  closestTimeoutNs(): number {
    let closest = 0;
    for (const queue of this.levels.values()) {
      for (const entry of queue.queue) {
        if (entry.timeoutNs !== 0 && (closest === 0 || entry.timeoutNs < closest)) closest = entry.timeoutNs;
      }
    }
    return closest;
  }

  /** Removes the given entries (a batch that was sent). */
  remove(entries: ReadonlySet<T>): void {
    for (const queue of this.levels.values()) {
      for (const list of [queue.queue, queue.delayed]) {
        const keep = list.filter((entry) => !entries.has(entry));
        this.count -= list.length - keep.length;
        list.splice(0, list.length, ...keep);
      }
    }
  }
}
