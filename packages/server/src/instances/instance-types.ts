/**
 * What the pool holds of a model instance, whichever thread owns its session: the handle, one batch (and
 * what of a sequence batch its thread gets), and what a started instance reports.
 */
import type {
  ExecutionProviderName,
  InstanceRunResult,
  SequenceRun,
  SequenceStateSetup,
  SessionTensorInfo,
  ThreadTensor,
  WorkerInit,
} from "./worker-protocol.js";

/**
 * A sequence batch's rows as the scheduler hands them over, always with the states' setup (one object for
 * the version): the instance's handle sends the setup to its thread with the first such batch only.
 */
export interface InstanceSequenceRun extends SequenceRun {
  readonly setup: SequenceStateSetup;
}

/** One batch for an instance. */
export interface InstanceRun {
  readonly inputs: readonly ThreadTensor[];
  readonly outputNames: readonly string[];
  /** The input buffers to hand over (the caller must own them). */
  readonly transfer: readonly ArrayBuffer[];
  /** Set when the batch goes to an instance still running another: see RunMessage.queuedAtMs. */
  readonly queuedAtMs?: number;
  /** Test hook: the thread running the session exits instead of running (a native crash). */
  readonly crash?: boolean;
  /** A sequence batch: the rows' slots; the session's thread feeds and keeps their states. */
  readonly sequence?: InstanceSequenceRun;
}

/** The rows of `sequence` as its thread gets them: with `setup` only when it has not had it yet. */
export function sequenceRun(
  sequence: InstanceSequenceRun,
  setup: SequenceStateSetup | undefined,
): SequenceRun {
  return {
    rows: sequence.rows,
    ...(sequence.released !== undefined && sequence.released.length > 0
      ? { released: sequence.released }
      : {}),
    ...(setup !== undefined ? { setup } : {}),
  };
}

/** What the session declares and where it runs, reported when the instance is ready. */
export interface InstanceReadyInfo {
  readonly inputs: readonly SessionTensorInfo[];
  readonly outputs: readonly SessionTensorInfo[];
  /** The execution provider the session was created on. */
  readonly provider: ExecutionProviderName;
  /** KIND_GPU on CPU: why no GPU provider could start (each tried provider's reason). */
  readonly fallback?: string;
}

/** One running model instance. */
export interface ModelInstance {
  /** Instance name as Triton names them: `<group>_<index>`. */
  readonly name: string;
  /** Runs one batch. */
  run(batch: InstanceRun): Promise<InstanceRunResult>;
  /** Releases the session (and ends its worker, if it has its own); idempotent. */
  close(): Promise<void>;
  /** Replaces the handler called when the instance ends without close(). */
  setExitHandler(handler: (reason: string) => void): void;
}

export interface ModelInstanceOptions {
  readonly init: WorkerInit;
  /** Called once when the instance ends without close() having been called. */
  readonly onExit?: (reason: string) => void;
}

/** A started instance and what it reported. */
export interface StartedInstance {
  readonly instance: ModelInstance;
  readonly info: InstanceReadyInfo;
}
