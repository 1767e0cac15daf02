/**
 * Messages between the main thread and the threads that own onnxruntime-node sessions: one model-instance
 * worker per CPU or CUDA instance, and the one WebGPU executor thread that owns every WebGPU session of the
 * process. Tensor data of TRANSFER_MIN_BYTES or more crosses by transfer: the sender gives up the
 * ArrayBuffers it lists in the transfer list, so nothing big is copied; smaller data is copied. A model-
 * instance worker's small numeric batches and results skip the object graph: they are written into a slot
 * of the instance's SharedArrayBuffer and what crosses is the slot's number, in the instance's queue
 * (batch-slots.ts, instance-queue.ts); replies that fit come back as the slot's number by message.
 */
import type { Datatype, OrtTensorType } from "@tbench/proto";
import type { BytesData, TensorData } from "../core/types.js";

/**
 * A tensor as it crosses the thread boundary: numeric data in an owned TypedArray, strings (BYTES) as
 * BytesData whose wire buffer is owned, so both go by transfer. The worker alone makes strings of them.
 */
export interface ThreadTensor {
  readonly name: string;
  readonly ortType: OrtTensorType;
  readonly dims: readonly number[];
  readonly data: ArrayBufferView | BytesData;
}

/** What one run gives back: the outputs and the worker-side durations (feed creation, run, extraction). */
export interface InstanceRunResult {
  readonly outputs: readonly ThreadTensor[];
  readonly inputNs: number;
  readonly inferNs: number;
  readonly outputNs: number;
  /**
   * How long the batch waited in the session's thread behind an earlier batch, in ns: set only for a batch
   * sent while its instance was still running another (an instance that holds two batches at once).
   */
  readonly waitNs?: number;
  /**
   * A sequence batch whose model has a state with variable dims: each state output's dims without the batch
   * dimension, in setup order (the next request's state has that shape; rows of a batch must agree on it).
   */
  readonly stateDims?: readonly (readonly number[])[];
}

/** One implicit state of a sequence model, as the thread that keeps it needs it. */
export interface SequenceStateInit {
  readonly inputName: string;
  readonly outputName: string;
  readonly datatype: Datatype;
  /** Config dims without the batch dimension (-1: variable; the state output's shape decides). */
  readonly dims: readonly number[];
  /** The shape a sequence's first request gets. */
  readonly initialDims: readonly number[];
  /** initial_state's bytes from its file (initialDims' elements); zeros when undefined. */
  readonly initial?: TensorData;
}

/**
 * What the thread that owns a sequence model's session needs to keep its states: sent once per session,
 * with the first sequence batch it runs (the handle remembers; a replacement is a new handle).
 */
export interface SequenceStateSetup {
  /** Slots of the instance's batcher: the store holds at most this many sequences' states. */
  readonly slots: number;
  /** Whether tensors have the batch dimension (max_batch_size > 0). */
  readonly batching: boolean;
  readonly states: readonly SequenceStateInit[];
}

/** A live row of a sequence batch. */
export interface SequenceRow {
  /** The batcher's slot the row's sequence holds: its state is the slot's. */
  readonly slot: number;
  /** START: the state starts from its initial value (whatever the slot held is dropped). */
  readonly start: boolean;
  /** END: the slot's state is dropped with this batch. */
  readonly end: boolean;
}

/** What a sequence batch tells the thread about its rows, beside the model inputs and controls. */
export interface SequenceRun {
  /** Per batch row: its slot, or null for a padding row (initial state in, its outputs dropped). */
  readonly rows: readonly (SequenceRow | null)[];
  /** Slots freed without an END since the instance's last batch (idle timeout, cancel): states dropped. */
  readonly released?: readonly number[];
  /** The states' setup: only with the session's first sequence batch. */
  readonly setup?: SequenceStateSetup;
}

/** The onnxruntime execution providers an instance can run on. */
export type ExecutionProviderName = "cpu" | "cuda" | "webgpu";

/**
 * Which provider KIND_GPU instances ask for (--gpu-execution-provider): `auto` tries CUDA when its
 * binaries are installed, then WebGPU; each choice falls back to CPU, saying why.
 */
export type GpuExecutionProvider = "auto" | "webgpu" | "cuda";

/** What an instance is started with. */
export interface WorkerInit {
  readonly modelPath: string;
  readonly instanceName: string;
  readonly intraOpThreads: number;
  readonly interOpThreads: number;
  /** KIND_GPU: the group's device and the provider choice; CPU when undefined. */
  readonly gpu?: { readonly deviceId: number; readonly provider: GpuExecutionProvider };
  /** Test hook: the thread exits while creating its session (a native crash at load). */
  readonly crashOnLoad?: boolean;
}

/** What a session is created from: the instance's settings and the one provider to use (no fallback). */
export interface SessionInit extends WorkerInit {
  readonly provider: ExecutionProviderName;
}

/** One batch, as it crosses to the thread that owns the session. */
export interface RunMessage {
  readonly type: "run";
  readonly id: number;
  readonly inputs: readonly ThreadTensor[];
  readonly outputNames: readonly string[];
  /**
   * When the main thread sent a batch that will wait behind another (`performance.timeOrigin + now()`, ms):
   * the thread reports the wait, which is queue time, not compute time.
   */
  readonly queuedAtMs?: number;
  /** Test hook: exit the thread instead of running (simulates a native crash). */
  readonly crash?: boolean;
  /** A sequence batch: the thread feeds the states it keeps and keeps the state outputs (never sent back). */
  readonly sequence?: SequenceRun;
}

/**
 * What a model-instance worker is started with: its session, the slots of its small batches and the queue
 * that says what to do next (instance-queue.ts).
 */
export interface InstanceWorkerData extends SessionInit {
  readonly batchSlots: SharedArrayBuffer;
  readonly queue: SharedArrayBuffer;
}

/**
 * Main -> model-instance worker, by message: each one announced by a MESSAGE entry in the instance's queue.
 * A small numeric batch is not a message: its slot's number is the queue's entry (batch-slots.ts).
 */
export type ToWorker = RunMessage | { readonly type: "close" };

/** An input or output the session declares. */
export interface SessionTensorInfo {
  readonly name: string;
  readonly ortType: string | undefined;
  readonly dims: readonly number[];
}

/** A session's inputs and outputs, as reported once it is created. */
export interface SessionIo {
  readonly inputs: readonly SessionTensorInfo[];
  readonly outputs: readonly SessionTensorInfo[];
}

/** A finished run, or why it failed. */
export type RunReply =
  | ({ readonly type: "result"; readonly id: number } & InstanceRunResult)
  | { readonly type: "run-error"; readonly id: number; readonly message: string };

/** Model-instance worker -> main. A number: the result of the batch in that slot is written there. */
export type FromWorker =
  | ({ readonly type: "ready" } & SessionIo)
  | { readonly type: "load-error"; readonly message: string }
  | RunReply
  | number;

/** Main -> WebGPU executor thread. Every message is handled after the previous one finished. */
export type ToExecutor =
  | { readonly type: "open"; readonly sessionId: number; readonly init: SessionInit }
  | (RunMessage & { readonly sessionId: number })
  | { readonly type: "release"; readonly sessionId: number }
  | { readonly type: "shutdown" };

/** WebGPU executor thread -> main. */
export type FromExecutor =
  | ({ readonly type: "opened"; readonly sessionId: number } & SessionIo)
  | { readonly type: "open-error"; readonly sessionId: number; readonly message: string }
  | { readonly type: "released"; readonly sessionId: number }
  | RunReply;
