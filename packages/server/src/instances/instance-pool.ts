/**
 * The instances of one model version: instance_group count x kind (KIND_GPU: count per listed GPU), each
 * on the execution provider it could start. Hands idle instances to the scheduler, one batch each (any
 * idle one, or the one a sequence batcher names: its states live there), and replaces an instance whose
 * worker dies (up to MAX_RESTARTS times each), telling its owner what the dead one held is gone
 * (onInstanceLost). When no instance is left alive or being replaced, it tells its owner (onUnavailable),
 * which fails the queue. Logs where KIND_GPU instances run, and why any of them fell back to CPU.
 */
import type { Logger } from "../core/logger.js";
import { ServerError } from "../core/server-error.js";
import type { InstanceGroupSpec } from "../repository/model-spec.js";
import { DEFAULT_GPU_EXECUTION_PROVIDER } from "./gpu-provider-choice.js";
import { describeFallbacks, describePlacement } from "./instance-placement-log.js";
import {
  type InstanceReadyInfo,
  type InstanceRun,
  type InstanceRunResult,
  type ModelInstance,
  type ModelInstanceOptions,
  type StartedInstance,
  startModelInstance,
} from "./model-instance.js";
import type { GpuExecutionProvider, WorkerInit } from "./worker-protocol.js";

/** A batch as the pool runs it (on any idle instance, or the one named). */
export type PoolRun = InstanceRun;

/** Which instance runs a batch: its index in the pool (instanceInits order). */
export interface PoolRunTarget {
  readonly instance: number;
}

/** An instance that died: what it held in its thread (a sequence model's states) is gone. */
export interface InstanceLoss {
  /** Its index in the pool. */
  readonly index: number;
  /** Its instance name (`<group>_<index>`). */
  readonly name: string;
  /** How it ended (the worker's exit, or why its replacement did not start). */
  readonly reason: string;
  /** A replacement is starting at the same index; false: the index stays without an instance. */
  readonly replacing: boolean;
}

/** The instances of one loaded model version. */
export interface InstancePool {
  /** True when an instance could take a batch now. */
  hasIdle(): boolean;
  /** True when instance `index` is running and could take a batch now. */
  hasIdleInstance(index: number): boolean;
  /**
   * Runs a batch on an idle instance, or on instance `target.instance` only (a batch that must run where
   * its states are: never run again elsewhere); rejects UNAVAILABLE when that one or none is idle.
   */
  run(batch: PoolRun, target?: PoolRunTarget): Promise<InstanceRunResult>;
  /** Ends every worker (in-flight runs are allowed to finish first by the caller); idempotent. */
  close(): Promise<void>;
}

export interface InstancePoolOptions {
  readonly modelName: string;
  readonly version: string;
  /** One per instance, from instanceInits. */
  readonly inits: readonly WorkerInit[];
  readonly logger: Logger;
  /** Called whenever an instance becomes idle (a batch finished or a replacement started). */
  readonly onIdle: () => void;
  /**
   * Batches one instance may hold at once (default 1). With 2, the next batch waits in the instance's
   * thread while the current one runs, so the session starts it without a round trip to the main thread:
   * what Triton's instance threads get by pulling from the queue themselves. Only for models whose
   * batches are final when formed (no dynamic batching: a batch sent early could not grow).
   */
  readonly depth?: number;
  /**
   * Called once when no instance is alive and none is being replaced (every one died past its restarts or
   * failed to restart), with a reason naming the last death; no batch can run on this pool again.
   */
  readonly onUnavailable?: (reason: string) => void;
  /**
   * Called when an instance dies (before its replacement is asked for), and again when it is not replaced
   * after all (its replacement failed to start): whatever its thread kept is lost.
   */
  readonly onInstanceLost?: (loss: InstanceLoss) => void;
  /** Starts one instance (tests: a fake); default startModelInstance. */
  readonly startInstance?: (options: ModelInstanceOptions) => Promise<StartedInstance>;
}

interface Slot {
  readonly init: WorkerInit;
  instance: ModelInstance | undefined;
  /** What the running instance reported (its provider, and why a GPU instance runs on CPU). */
  info: InstanceReadyInfo | undefined;
  /** Batches sent to the instance and not yet answered. */
  running: number;
  restarts: number;
  /** A replacement worker is starting. */
  replacing: boolean;
}

/** What every instance of a model version shares. */
export interface InstanceInitsOptions {
  readonly modelPath: string;
  readonly groups: readonly InstanceGroupSpec[];
  readonly intraOpThreads: number;
  /** The provider KIND_GPU instances ask for (--gpu-execution-provider); default auto. */
  readonly gpuExecutionProvider?: GpuExecutionProvider;
}

/**
 * Per-instance settings for every instance the groups ask for. As Triton counts them, a KIND_GPU group
 * has `count` instances on each GPU it lists (count 2, gpus [0, 1]: four), named alike on each device.
 */
export function instanceInits(options: InstanceInitsOptions): WorkerInit[] {
  const inits: WorkerInit[] = [];
  const provider = options.gpuExecutionProvider ?? DEFAULT_GPU_EXECUTION_PROVIDER;
  for (const group of options.groups) {
    const devices = group.kind === "KIND_GPU" ? (group.gpus.length > 0 ? group.gpus : [0]) : [undefined];
    for (let i = 0; i < group.count; i++) {
      for (const deviceId of devices) {
        inits.push({
          modelPath: options.modelPath,
          instanceName: `${group.name}_${i}`,
          intraOpThreads: options.intraOpThreads,
          interOpThreads: 1,
          ...(deviceId !== undefined ? { gpu: { deviceId, provider } } : {}),
        });
      }
    }
  }
  return inits;
}

const MAX_RESTARTS = 5;

/**
 * Starts the pool. `first` is an instance the loader already started (to read the model's IO for
 * auto-complete); it becomes the first slot. Rejects when any instance fails to start.
 */
export async function createInstancePool(
  options: InstancePoolOptions,
  first?: { instance: ModelInstance; info: InstanceReadyInfo },
): Promise<InstancePool> {
  const { logger } = options;
  const slots: Slot[] = options.inits.map((init) => ({
    init,
    instance: undefined,
    info: undefined,
    running: 0,
    restarts: 0,
    replacing: false,
  }));
  let closed = false;
  let unavailable = false;
  let unavailableReason = "";
  /** Batches waiting to run again after their instance died before starting them (see run). */
  const rerunWaiters: { retry: () => void; fail: (error: ServerError) => void }[] = [];
  const wakeRerunWaiters = () => {
    for (const waiter of rerunWaiters.splice(0)) waiter.retry();
  };

  const describeSlot = (slot: Slot) =>
    `model instance '${slot.init.instanceName}'${slot.init.gpu ? ` (GPU ${slot.init.gpu.deviceId})` : ""} of ` +
    `'${options.modelName}' version ${options.version}`;

  /** Reports the pool unavailable once nothing is alive or starting; `last` says how the last one ended. */
  const checkUnavailable = (last: string) => {
    if (closed || unavailable) return;
    if (slots.some((slot) => slot.instance !== undefined || slot.replacing)) return;
    unavailable = true;
    unavailableReason =
      `all instances of model '${options.modelName}' version ${options.version} died and none is being ` +
      `replaced; the last: ${last}`;
    for (const waiter of rerunWaiters.splice(0)) waiter.fail(new ServerError("INTERNAL", unavailableReason));
    options.onUnavailable?.(unavailableReason);
  };

  const identity = { modelName: options.modelName, version: options.version };

  const startInstance = options.startInstance ?? startModelInstance;
  const start = async (slot: Slot) => {
    const { instance, info } = await startInstance({
      init: slot.init,
      onExit: (reason) => onDeath(slot, reason),
    });
    if (closed) {
      await instance.close();
      return;
    }
    slot.instance = instance;
    slot.info = info;
  };

  const lost = (slot: Slot, reason: string, replacing: boolean) =>
    options.onInstanceLost?.({
      index: slots.indexOf(slot),
      name: slot.init.instanceName,
      reason,
      replacing,
    });

  const onDeath = (slot: Slot, reason: string) => {
    slot.instance = undefined;
    slot.running = 0;
    if (closed) return;
    slot.restarts++;
    if (slot.restarts > MAX_RESTARTS) {
      logger.error(`${describeSlot(slot)} died (${reason}); not replaced after ${MAX_RESTARTS} restarts`);
      lost(slot, reason, false);
      checkUnavailable(
        `model instance '${slot.init.instanceName}' died (${reason}) after ${MAX_RESTARTS} restarts`,
      );
      return;
    }
    logger.warn(`${describeSlot(slot)} died (${reason}); starting a replacement`);
    slot.replacing = true;
    lost(slot, reason, true);
    start(slot).then(
      () => {
        slot.replacing = false;
        for (const line of describeFallbacks(identity, [slot])) logger.warn(line);
        wakeRerunWaiters();
        options.onIdle();
      },
      (error: unknown) => {
        slot.replacing = false;
        logger.error(`failed to replace model instance '${slot.init.instanceName}': ${String(error)}`);
        if (!closed) lost(slot, `its replacement failed to start: ${String(error)}`, false);
        checkUnavailable(
          `model instance '${slot.init.instanceName}' died (${reason}) and its replacement failed to start: ` +
            String(error),
        );
      },
    );
  };

  const firstSlot = slots[0];
  try {
    const rest = first && firstSlot ? slots.slice(1) : slots;
    if (first && firstSlot) {
      firstSlot.instance = first.instance;
      firstSlot.info = first.info;
      first.instance.setExitHandler((reason) => onDeath(firstSlot, reason));
    }
    await Promise.all(rest.map(start));
  } catch (error) {
    closed = true;
    await Promise.all(slots.map((slot) => slot.instance?.close()));
    throw error;
  }
  const placement = describePlacement(identity, slots);
  if (placement !== undefined) logger.info(placement);
  for (const line of describeFallbacks(identity, slots)) logger.warn(line);

  const depth = Math.max(1, options.depth ?? 1);
  /** The live instance with the fewest batches, if it can take one more: an idle one comes first. */
  const leastBusy = (): Slot | undefined => {
    let best: Slot | undefined;
    for (const slot of slots) {
      if (slot.instance === undefined || slot.running >= depth) continue;
      if (best === undefined || slot.running < best.running) best = slot;
    }
    return best;
  };

  /** Instance `index`, if it is running and can take one more batch. */
  const idleAt = (index: number): Slot | undefined => {
    const slot = slots[index];
    return slot?.instance !== undefined && slot.running < depth ? slot : undefined;
  };

  /** Runs `batch` on instance `index` alone: its death fails the batch, which never runs elsewhere. */
  const runOn = async (batch: PoolRun, index: number): Promise<InstanceRunResult> => {
    const slot = idleAt(index);
    if (closed || slot?.instance === undefined) {
      throw new ServerError(
        "UNAVAILABLE",
        `model instance ${index} of '${options.modelName}' version ${options.version} is not idle`,
      );
    }
    const instance = slot.instance;
    const queuedAtMs = slot.running > 0 ? performance.timeOrigin + performance.now() : undefined;
    slot.running++;
    try {
      return await instance.run(queuedAtMs === undefined ? batch : { ...batch, queuedAtMs });
    } finally {
      if (slot.instance === instance) slot.running--;
      if (!closed) queueMicrotask(options.onIdle);
    }
  };

  return {
    hasIdle: () => !closed && leastBusy() !== undefined,
    hasIdleInstance: (index) => !closed && idleAt(index) !== undefined,
    async run(batch, target) {
      if (target !== undefined) return runOn(batch, target.instance);
      for (;;) {
        const slot = leastBusy();
        if (closed || !slot || !slot.instance) {
          throw new ServerError(
            "UNAVAILABLE",
            `no idle instance of '${options.modelName}' version ${options.version}`,
          );
        }
        const instance = slot.instance;
        // A batch sent behind a running one waits in the instance's thread: that wait is queue time.
        const queuedAtMs = slot.running > 0 ? performance.timeOrigin + performance.now() : undefined;
        slot.running++;
        try {
          // A batch sent behind a running one may have to run again elsewhere (below), so it keeps its
          // inputs: copied, not transferred (a transfer would leave this side with emptied buffers).
          return await instance.run(
            queuedAtMs === undefined ? batch : { ...batch, queuedAtMs, transfer: [] },
          );
        } catch (error) {
          // The instance died before it started this batch (the one ahead of it crashed): the batch did
          // nothing wrong, so it runs again once an instance can take it, as it would have without depth.
          if (queuedAtMs === undefined || slot.instance === instance || closed) throw error;
        } finally {
          if (slot.instance === instance) slot.running--;
          if (!closed) queueMicrotask(options.onIdle);
        }
        await new Promise<void>((retry, fail) => {
          if (unavailable) fail(new ServerError("INTERNAL", unavailableReason));
          else if (leastBusy() !== undefined) retry();
          else rerunWaiters.push({ retry, fail });
        });
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all(slots.map((slot) => slot.instance?.close()));
    },
  };
}
