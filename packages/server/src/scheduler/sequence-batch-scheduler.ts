/**
 * Triton's sequence batcher (sequence_batch_scheduler.cc) for a stateful model: every sequence (a
 * correlation id from START to END) holds one slot of one batcher (a batcher per instance, max(1,
 * max_batch_size) slots each, or oldest's max_candidate_sequences) for its whole life, so its requests run
 * one at a time, in order, and its implicit state stays with the slot. A START that finds no free slot
 * waits in a backlog, the oldest backlog taking the next slot released.
 *  - direct: a batch is the slots, row = slot index, up to the highest slot with a request; a slot below
 *    it without one (or whose request's shapes differ) is a padding row that is not READY. It waits for
 *    `minimum_slot_utilization` of the slots up to `max_queue_delay_microseconds` when both are set.
 *  - oldest: the next request of each candidate sequence (one in flight per sequence) goes through
 *    Triton's dynamic batching decision (preferred sizes, queue delay); no padding rows.
 * The model gets the control inputs (START, END, READY, CORRID) and the states as inputs of its own; a
 * state output becomes the sequence's state for its next request. The states live in the thread of the
 * batcher's instance (batcher b runs on instance b only; instances/sequence-state-store.ts): a batch
 * names each row's slot, START and END, and the main thread never holds or copies a state. A sequence idle
 * for `max_sequence_idle_microseconds` loses its slot (its next request needs START); the thread drops
 * its state with the instance's next batch. When an instance dies, the sequences whose states it held
 * fail their next request (INTERNAL, naming the instance) until they START again, and their slots go to
 * the backlog; an instance not replaced takes no new sequence. Errors use Triton's words.
 */
import type { Clock, TimerHandle } from "../core/clock.js";
import { markFailedAfterIssue } from "../core/failed-after-issue.js";
import { logRequest } from "../core/log-request.js";
import type { Logger } from "../core/logger.js";
import { ServerError } from "../core/server-error.js";
import type { InferenceResponse, Tensor, TensorData } from "../core/types.js";
import type { InstanceLoss, InstancePool } from "../instances/instance-pool.js";
import type { SequenceRow } from "../instances/worker-protocol.js";
import type { ModelSpec } from "../repository/model-spec.js";
import type { SequenceBatchingSpec } from "../repository/sequence-batching.js";
import type { ExecutionTimes, FailureReason, ModelStatsCollector } from "../stats/model-stats.js";
import { assembleBatch, splitOutputs } from "./batch-assembly.js";
import { classify } from "./classification.js";
import { decideBatch } from "./dynamic-batcher.js";
import type { InstanceScheduler } from "./scheduler.js";
import {
  type Backlog,
  type Batcher,
  createBatchers,
  keyOf,
  type LostSequence,
  lostStateError,
  PADDING,
  type Place,
  paddingOf,
  type Request,
  type Slot,
  shapeKeyOf,
} from "./sequence-slots.js";
import { sequenceStateSetup, stateShapes } from "./sequence-state-setup.js";
import { controlTensors } from "./sequence-tensors.js";

export interface SequenceBatchSchedulerOptions {
  readonly spec: ModelSpec & { readonly sequenceBatching: SequenceBatchingSpec };
  readonly version: string;
  readonly pool: Pick<InstancePool, "hasIdleInstance" | "run" | "close">;
  /** How many instances serve the version: one batcher each. */
  readonly instanceCount: number;
  readonly clock: Clock;
  readonly stats: ModelStatsCollector;
  readonly logger: Logger;
  /** The bytes of each state whose initial_state is a file, by state input name (read at load). */
  readonly initialStates?: ReadonlyMap<string, TensorData>;
  /** Labels per output name (classification). */
  readonly labels?: ReadonlyMap<string, readonly string[]>;
  /**
   * Most requests queued at once, in slots and backlogs together (--max-pending-requests; 0 or undefined:
   * no limit): a client opening sequences without end cannot grow the backlog without bound.
   */
  readonly maxPendingRequests?: number | undefined;
  /** Test hook: a batch with a request whose `parameters[crashParameter] === true` kills its instance. */
  readonly crashParameter?: string | undefined;
}

export function createSequenceBatchScheduler(options: SequenceBatchSchedulerOptions): InstanceScheduler {
  const { spec, version, pool, clock, stats, logger } = options;
  const sequence = spec.sequenceBatching;
  const strategy = sequence.strategy;
  const batching = spec.maxBatchSize > 0;
  const batchers = createBatchers(options.instanceCount, sequence.slotsPerInstance);
  const setup = sequenceStateSetup(sequence, batching, options.initialStates);
  const shapes = stateShapes(sequence);
  const places = new Map<string, Place>();
  /** When each slot-holding sequence's last request arrived (the idle reaper's clock), and its id. */
  const lastArrivalNs = new Map<string, { slot: Slot; ns: number; id: bigint | string }>();
  const lostSequences = new Map<string, LostSequence>();
  const backlogs: Backlog[] = [];
  let queued = 0;
  let inFlight = 0;
  let stopping = false;
  let abandoned: ServerError | undefined;
  let closing: Promise<void> | undefined;
  let timer: TimerHandle | undefined;
  let timerAtNs = 0;
  let passScheduled = false;
  const drainWaiters: (() => void)[] = [];
  stats.setPendingCounter(() => queued);

  const fail = (entry: Request, error: unknown, reason: FailureReason) => {
    queued--;
    stats.requestFailed(clock.nowNs() - entry.startNs, reason, clock.epochMs());
    markFailedAfterIssue(error);
    entry.reject(error);
  };

  const checkDrained = () => {
    if (queued === 0 && inFlight === 0) for (const waiter of drainWaiters.splice(0)) waiter();
  };

  /** The lowest free slot index over every batcher (Triton's ready-slot queue), if any. */
  const freeSlot = (): Slot | undefined => {
    for (let i = 0; i < sequence.slotsPerInstance; i++) {
      for (const batcher of batchers) {
        const slot = batcher.slots[i]!;
        if (!slot.held && !batcher.retired) return slot;
      }
    }
    return undefined;
  };

  /** The backlog `next` takes the free `slot`. */
  const assign = (slot: Slot, next: Backlog) => {
    slot.held = true;
    slot.queue.push(...next.entries);
    const place = places.get(next.key);
    if (place !== undefined && "backlog" in place && place.backlog === next) {
      places.set(next.key, { slot });
      lastArrivalNs.set(next.key, { slot, ns: clock.nowNs(), id: next.entries[0]!.flags.id });
    }
  };

  /**
   * The slot's sequence ended (or was reaped): the oldest backlog takes the slot, else it is free. A state
   * its instance still keeps (no END ran) is dropped with the batcher's next batch.
   */
  const releaseSlot = (slot: Slot) => {
    if (slot.stateful) slot.batcher.released.push(slot.index);
    slot.stateful = false;
    slot.stateKey = undefined;
    slot.held = false;
    if (slot.batcher.retired) return;
    const next = backlogs.shift();
    if (next !== undefined) assign(slot, next);
  };

  /** Fails a cancelled request at the front of a slot, and with it the rest of its sequence. */
  const cancelSequence = (slot: Slot) => {
    for (const entry of slot.queue.splice(0)) {
      if (entry.kind === "request") {
        fail(entry, new ServerError("CANCELLED", `${entry.logPrefix}request was cancelled`), "CANCELED");
      }
    }
    for (const [key, { slot: held }] of lastArrivalNs) if (held === slot) forget(key);
    releaseSlot(slot);
  };

  const forget = (key: string) => {
    places.delete(key);
    lastArrivalNs.delete(key);
  };

  /** Takes release markers and cancelled requests off the front of the slot's queue. */
  const settleFront = (slot: Slot) => {
    for (;;) {
      const front = slot.queue[0];
      if (front === undefined) return;
      if (front.kind === "release") {
        slot.queue.shift();
        releaseSlot(slot);
        continue;
      }
      if (front.isCancelled()) {
        cancelSequence(slot);
        continue;
      }
      return;
    }
  };

  /**
   * Fails every request of a backlog whose timeout passed (Triton's backlog timeout); returns when the
   * next one expires.
   */
  const expireBacklogs = (now: number): number => {
    let next = Number.POSITIVE_INFINITY;
    for (let i = backlogs.length - 1; i >= 0; i--) {
      const backlog = backlogs[i]!;
      if (backlog.deadlineNs > now) {
        next = Math.min(next, backlog.deadlineNs);
        continue;
      }
      backlogs.splice(i, 1);
      const place = places.get(backlog.key);
      if (place !== undefined && "backlog" in place && place.backlog === backlog) forget(backlog.key);
      for (const entry of backlog.entries) {
        fail(
          entry,
          new ServerError("UNAVAILABLE", "timeout of the corresponding sequence has been expired"),
          "REJECTED",
        );
      }
    }
    return next;
  };

  /**
   * The idle reaper: a slot-holding sequence idle past the limit ends, its slot released after its queue.
   * Returns when the next one will be idle that long.
   */
  const reap = (now: number): number => {
    const limitNs = sequence.maxSequenceIdleUs * 1000;
    let next = Number.POSITIVE_INFINITY;
    for (const [key, { slot, ns }] of lastArrivalNs) {
      if (now - ns < limitNs) {
        next = Math.min(next, ns + limitNs);
        continue;
      }
      forget(key);
      slot.queue.push({ kind: "release" });
    }
    for (const [key, lost] of lostSequences) if (lost.untilNs <= now) lostSequences.delete(key);
    return next;
  };

  const armTimer = (atNs: number) => {
    if (!Number.isFinite(atNs)) return;
    if (timer !== undefined && timerAtNs <= atNs) return;
    timer?.cancel();
    timerAtNs = atNs;
    timer = clock.setTimer(
      () => {
        timer = undefined;
        schedulePass();
      },
      Math.max(1, Math.ceil((atNs - clock.nowNs()) / 1000)),
    );
  };

  const respond = (entry: Request, outputs: Tensor[], queueNs: number, times: ExecutionTimes) => {
    const request = entry.validated.request;
    const wanted = new Set(entry.validated.outputs.map((o) => o.name));
    const own = outputs
      .filter((tensor) => wanted.has(tensor.name))
      .map((tensor) => {
        const k = request.outputs?.find((o) => o.name === tensor.name)?.classification ?? 0;
        return k > 0 ? classify(tensor, k, batching, options.labels?.get(tensor.name)) : tensor;
      });
    queued--;
    const durationNs = clock.nowNs() - entry.startNs;
    const epochMs = clock.epochMs();
    stats.requestSucceeded(durationNs, queueNs, times, epochMs);
    entry.secondary?.requestSucceeded(durationNs, queueNs, times, epochMs);
    entry.resolve({
      model: spec.name,
      version,
      ...(request.id !== undefined && request.id !== "" ? { id: request.id } : {}),
      outputs: own,
    });
  };

  /**
   * Runs one batch of `rows` (undefined: a padding row) on `batcher`'s instance, where the rows' states
   * are: the batch carries each row's slot, START and END, and the thread feeds and keeps the states.
   */
  const dispatch = (
    batcher: Batcher,
    rows: readonly (Request | undefined)[],
    slots: readonly (Slot | undefined)[],
  ) => {
    const dispatchNs = clock.nowNs();
    const representative = rows.find((r) => r !== undefined)!.validated;
    const validated = rows.map((r) => r?.validated ?? paddingOf(representative));
    const flags = rows.map((r) => r?.flags ?? PADDING);
    const t0 = performance.now();
    let inputs: ReturnType<typeof assembleBatch>;
    try {
      inputs = assembleBatch(spec, validated);
    } catch (error) {
      for (const r of rows) if (r) fail(r, error, "BACKEND");
      return;
    }
    const sequenceRows = rows.map((r, i): SequenceRow | null => {
      const slot = slots[i];
      return r === undefined || slot === undefined
        ? null
        : { slot: slot.index, start: r.flags.start, end: r.flags.end };
    });
    // The state outputs are the thread's to keep: only what the requests asked for comes back.
    const outputNames = [...new Set(validated.flatMap((v) => v.outputs.map((o) => o.name)))];
    const hook = options.crashParameter;
    const crash = hook !== undefined && rows.some((r) => r?.validated.request.parameters?.[hook] === true);
    const assembleNs = (performance.now() - t0) * 1e6;
    batcher.running = true;
    inFlight++;
    for (const slot of slots) if (slot) slot.inFlight = true;
    const released = batcher.released.splice(0);
    pool
      .run(
        {
          inputs: [...inputs.inputs, ...controlTensors(sequence.controls, flags, batching)],
          outputNames,
          transfer: inputs.transfer,
          sequence: { setup, rows: sequenceRows, ...(released.length > 0 ? { released } : {}) },
          ...(crash ? { crash: true } : {}),
        },
        { instance: batcher.index },
      )
      .then(
        (result) => {
          const t1 = performance.now();
          let perRow: Tensor[][];
          try {
            perRow = splitOutputs(spec, validated, result.outputs);
            // States with variable dims: the next request of each sequence has the shape the model gave.
            const dims = result.stateDims;
            if (shapes !== undefined && dims !== undefined) {
              const key = shapes.keyOf(dims);
              rows.forEach((r, i) => {
                const slot = slots[i];
                if (r !== undefined && slot !== undefined && !r.flags.end && slot.stateful)
                  slot.stateKey = key;
              });
            }
          } catch (error) {
            for (const r of rows) if (r) fail(r, error, "BACKEND");
            return;
          }
          const times: ExecutionTimes = {
            computeInputNs: assembleNs + result.inputNs,
            computeInferNs: result.inferNs,
            computeOutputNs: result.outputNs + (performance.now() - t1) * 1e6,
          };
          const real = rows.filter((r) => r !== undefined).length;
          stats.executed(batching ? rows.length : 1, times, batching ? real : 1);
          rows.forEach((r, i) => {
            if (r === undefined) return;
            try {
              respond(r, perRow[i]!, dispatchNs - r.enqueueNs + (result.waitNs ?? 0), times);
            } catch (error) {
              fail(r, error, "BACKEND");
            }
          });
        },
        (error: unknown) => {
          for (const r of rows) if (r) fail(r, error, "BACKEND");
        },
      )
      .finally(() => {
        batcher.running = false;
        inFlight--;
        for (const slot of slots) if (slot) slot.inFlight = false;
        schedulePass();
        checkDrained();
      });
  };

  /**
   * Takes the front request of `slot` into a batch: its state is in the instance from now (a START
   * resets it there); its END drops the state with the batch and releases the slot.
   */
  const take = (slot: Slot): Request => {
    const entry = slot.queue.shift() as Request;
    if (entry.flags.start) slot.stateKey = undefined;
    slot.stateful = !entry.flags.end;
    if (entry.flags.end) releaseSlot(slot);
    return entry;
  };

  /** The shape key of the states the front request of `slot` gets ("" when states have fixed dims). */
  const stateKeyOf = (slot: Slot): string => {
    if (shapes === undefined) return "";
    const front = slot.queue[0] as Request;
    return front.flags.start ? shapes.initialKey : (slot.stateKey ?? shapes.initialKey);
  };

  /** Direct: the batch is the slots up to the highest one with a request. Returns when to look again. */
  const passDirect = (batcher: Batcher, now: number): number => {
    const ready = batcher.slots.filter((slot) => slot.queue[0]?.kind === "request");
    if (ready.length === 0) return Number.POSITIVE_INFINITY;
    const delayNs = strategy.kind === "direct" ? strategy.maxQueueDelayUs * 1000 : 0;
    const utilization = strategy.kind === "direct" ? strategy.minimumSlotUtilization : 0;
    if (delayNs > 0 && utilization > 0) {
      const oldest = Math.min(...ready.map((slot) => (slot.queue[0] as Request).enqueueNs));
      const share = ready.length / Math.max(1, spec.maxBatchSize);
      if (share < utilization && now - oldest < delayNs) return oldest + delayNs;
    }
    // Rows of one batch agree on their input and state shapes; a slot that does not waits as padding.
    const rowKey = (slot: Slot) => `${(slot.queue[0] as Request).shapeKey}|${stateKeyOf(slot)}`;
    const key = rowKey(ready[0]!);
    const highest = ready.at(-1)!.index;
    const rows: (Request | undefined)[] = [];
    const slots: (Slot | undefined)[] = [];
    for (let i = 0; i <= highest; i++) {
      const slot = batcher.slots[i]!;
      const fits = slot.queue[0]?.kind === "request" && rowKey(slot) === key;
      rows.push(fits ? take(slot) : undefined);
      slots.push(fits ? slot : undefined);
    }
    dispatch(batcher, rows, slots);
    return Number.POSITIVE_INFINITY;
  };

  /** Oldest: the next request of each candidate sequence not in flight, batched as the dynamic batcher does. */
  const passOldest = (batcher: Batcher, now: number): number => {
    if (strategy.kind !== "oldest") return Number.POSITIVE_INFINITY;
    const waiting = batcher.slots
      .filter((slot) => !slot.inFlight && slot.queue[0]?.kind === "request")
      .sort((a, b) => (a.queue[0] as Request).enqueueNs - (b.queue[0] as Request).enqueueNs);
    if (waiting.length === 0) return Number.POSITIVE_INFINITY;
    // Rows of one batch agree on their states' shapes (the requests' own shapes the batcher checks).
    const stateKey = stateKeyOf(waiting[0]!);
    const candidates = waiting.filter((slot) => stateKeyOf(slot) === stateKey);
    const bySlot = new Map(candidates.map((slot) => [slot.queue[0] as Request, slot]));
    const decision = decideBatch(
      candidates.map((slot) => slot.queue[0] as Request),
      {
        maxBatchSize: Math.max(1, spec.maxBatchSize),
        preferredBatchSizes: strategy.preferredBatchSizes,
        maxQueueDelayUs: strategy.maxQueueDelayUs,
      },
      now,
    );
    if (decision.kind === "empty") return Number.POSITIVE_INFINITY;
    if (decision.kind === "wait") return now + decision.waitUs * 1000;
    const slots = decision.entries.map((entry) => bySlot.get(entry)!);
    const rows = slots.map((slot) => take(slot));
    dispatch(batcher, rows, slots);
    return Number.POSITIVE_INFINITY;
  };

  const pass = () => {
    passScheduled = false;
    const now = clock.nowNs();
    let wake = Math.min(expireBacklogs(now), reap(now));
    for (const batcher of batchers) {
      for (const slot of batcher.slots) settleFront(slot);
      if (batcher.running || batcher.retired || !pool.hasIdleInstance(batcher.index)) continue;
      wake = Math.min(wake, strategy.kind === "direct" ? passDirect(batcher, now) : passOldest(batcher, now));
    }
    armTimer(wake);
    checkDrained();
  };

  function schedulePass(): void {
    if (passScheduled) return;
    passScheduled = true;
    queueMicrotask(pass);
  }

  const refuse = (startNs: number, error: ServerError, reason: FailureReason = "OTHER"): Promise<never> => {
    stats.requestFailed(clock.nowNs() - startNs, reason, clock.epochMs());
    return Promise.reject(error);
  };

  /** The sequence holding `slot`, if it is still live (its END not yet submitted, not reaped). */
  const holderOf = (slot: Slot) => {
    for (const [key, held] of lastArrivalNs) if (held.slot === slot) return { key, id: held.id };
    return undefined;
  };

  /**
   * Requests that held a slot of an instance that will not come back wait for another batcher's slot, at
   * the front of the backlog (they were admitted first).
   */
  const requeue = (slot: Slot, requests: Request[]) => {
    const holder = holderOf(slot);
    const key = holder?.key ?? keyOf(requests[0]!.flags.id);
    const deadlines = requests
      .filter((entry) => entry.requestTimeoutUs > 0)
      .map((entry) => entry.enqueueNs + entry.requestTimeoutUs * 1000);
    const backlog: Backlog = {
      key,
      entries: requests,
      deadlineNs: Math.min(Number.POSITIVE_INFINITY, ...deadlines),
    };
    backlogs.unshift(backlog);
    if (holder !== undefined) {
      lastArrivalNs.delete(key);
      places.set(key, { backlog });
    }
  };

  /**
   * Instance `loss.index` died: the states its thread kept are gone. A sequence whose state was there
   * (a request of it ran or was running) fails its queued requests and its next ones with the loss, until
   * it STARTs again (a START already queued goes on, with a new state); its slot goes to the backlog. A
   * sequence that holds a slot but never ran keeps its place. An instance that is not replaced retires its
   * batcher: its sequences wait for another batcher's slots.
   */
  const instanceLost = (loss: InstanceLoss) => {
    const batcher = batchers[loss.index];
    if (batcher === undefined || abandoned) return;
    batcher.released = [];
    if (!loss.replacing) batcher.retired = true;
    const untilNs = clock.nowNs() + sequence.maxSequenceIdleUs * 1000;
    for (const slot of batcher.slots) {
      if (!slot.held) continue;
      let kept = slot.queue.splice(0);
      if (slot.stateful) {
        const restart = kept.findIndex((entry) => entry.kind === "request" && entry.flags.start);
        const gone = restart < 0 ? kept : kept.slice(0, restart);
        kept = restart < 0 ? [] : kept.slice(restart);
        for (const entry of gone) {
          if (entry.kind !== "request") continue;
          fail(entry, lostStateError(entry.flags.id, spec.name, loss), "BACKEND");
        }
        const holder = holderOf(slot);
        if (restart < 0 && holder !== undefined) {
          forget(holder.key);
          lostSequences.set(holder.key, { loss, untilNs });
        }
        slot.stateful = false;
        slot.stateKey = undefined;
      }
      const requests = kept.filter((entry): entry is Request => entry.kind === "request");
      if (batcher.retired) {
        slot.held = false;
        if (requests.length > 0) requeue(slot, requests);
      } else if (requests.length === 0) {
        for (const [key, held] of lastArrivalNs) if (held.slot === slot) forget(key);
        releaseSlot(slot);
      } else {
        slot.queue.push(...kept);
      }
    }
    // Requeued sequences take any free slot of the other batchers now.
    for (let slot = freeSlot(); slot !== undefined && backlogs.length > 0; slot = freeSlot()) {
      assign(slot, backlogs.shift()!);
    }
    schedulePass();
  };

  const abandon = (error: ServerError) => {
    if (abandoned) return;
    abandoned = error;
    for (const batcher of batchers) {
      for (const slot of batcher.slots) {
        for (const entry of slot.queue.splice(0)) if (entry.kind === "request") fail(entry, error, "BACKEND");
        slot.held = false;
      }
    }
    for (const backlog of backlogs.splice(0))
      for (const entry of backlog.entries) fail(entry, error, "BACKEND");
    places.clear();
    lastArrivalNs.clear();
    lostSequences.clear();
    timer?.cancel();
    timer = undefined;
    checkDrained();
  };

  const drain = () => {
    stopping = true;
    return new Promise<void>((resolve) => {
      drainWaiters.push(resolve);
      schedulePass();
    });
  };

  return {
    submit(validated, startNs, secondary) {
      const request = validated.request;
      const model = spec.name;
      if (abandoned) return refuse(startNs, new ServerError(abandoned.status, abandoned.message));
      if (batching && validated.batchSize !== 1) {
        return refuse(
          startNs,
          new ServerError(
            "INVALID_ARG",
            `inference request to model '${model}' must specify batch-size 1 due to requirements of sequence batcher`,
          ),
        );
      }
      const flags = request.sequence;
      const id = flags?.id ?? 0n;
      if (id === 0n || id === "") {
        return refuse(
          startNs,
          new ServerError(
            "INVALID_ARG",
            `inference request to model '${model}' must specify a non-zero or non-empty correlation ID`,
          ),
        );
      }
      const start = flags?.start === true;
      const end = flags?.end === true;
      if (stopping && start) {
        return refuse(
          startNs,
          new ServerError(
            "UNAVAILABLE",
            "Server is stopping, scheduler for model has stopped accepting new inference requests",
          ),
        );
      }
      const cap = options.maxPendingRequests ?? 0;
      if (cap > 0 && queued >= cap) {
        stats.requestFailed(clock.nowNs() - startNs, "REJECTED", clock.epochMs());
        return Promise.reject(
          new ServerError(
            "UNAVAILABLE",
            `${logRequest(request)}Exceeds the server's limit of ${cap} pending requests for model '${model}' (--max-pending-requests)`,
          ),
        );
      }
      const key = keyOf(id);
      const lost = lostSequences.get(key);
      if (lost !== undefined && !start && lost.untilNs > clock.nowNs()) {
        // Its END ends it: later requests without START get Triton's usual answer.
        if (end) lostSequences.delete(key);
        return refuse(startNs, lostStateError(id, model, lost.loss), "BACKEND");
      }
      lostSequences.delete(key);
      let place = places.get(key);
      if (place === undefined && !start) {
        return refuse(
          startNs,
          new ServerError(
            "INVALID_ARG",
            `inference request for sequence ${String(id)} to model '${model}' must specify the START flag on the first request of the sequence`,
          ),
        );
      }
      if (place !== undefined && start) {
        logger.warn(
          `sequence ${String(id)} for model '${model}' has a conflict. The previous sequence did not end before this sequence start. Previous sequence will be terminated early.`,
        );
      }
      return new Promise<InferenceResponse>((resolve, reject) => {
        const now = clock.nowNs();
        const entry: Request = {
          kind: "request",
          validated,
          startNs,
          secondary,
          flags: { ready: true, start, end, id },
          resolve,
          reject,
          batchSize: 1,
          enqueueNs: now,
          timeoutNs: 0,
          isCancelled: () => request.signal?.aborted === true,
          logPrefix: logRequest(request),
          requestTimeoutUs: request.timeoutUs ?? 0,
          shapeKey: shapeKeyOf(validated),
        };
        if (place === undefined) {
          const slot = freeSlot();
          if (slot !== undefined) {
            slot.held = true;
            place = { slot };
          } else {
            const backlog: Backlog = { key, entries: [], deadlineNs: Number.POSITIVE_INFINITY };
            backlogs.push(backlog);
            place = { backlog };
          }
          places.set(key, place);
        }
        if ("slot" in place) {
          place.slot.queue.push(entry);
          lastArrivalNs.set(key, { slot: place.slot, ns: now, id });
        } else {
          place.backlog.entries.push(entry);
          if (entry.requestTimeoutUs > 0) {
            const deadline = now + entry.requestTimeoutUs * 1000;
            place.backlog.deadlineNs = Math.min(place.backlog.deadlineNs, deadline);
          }
        }
        queued++;
        // END drops the id at once: a later request without START is refused even before the END runs.
        if (end) forget(key);
        request.signal?.addEventListener("abort", schedulePass, { once: true });
        schedulePass();
      });
    },
    instanceIdle: schedulePass,
    instanceLost,
    abandon,
    close() {
      closing ??= drain().then(() => {
        timer?.cancel();
        timer = undefined;
        return pool.close();
      });
      return closing;
    },
    destroy() {
      abandon(new ServerError("UNAVAILABLE", "Server is stopping"));
      return pool.close();
    },
  };
}
