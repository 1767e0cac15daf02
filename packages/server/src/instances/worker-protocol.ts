/**
 * Messages between the main thread and a model-instance worker. Tensor data crosses by transfer: the
 * sender gives up the ArrayBuffers it lists in the transfer list, so nothing big is copied.
 */
import type { OrtTensorType } from "@tbench/proto";
import type { BytesData } from "../core/types.js";

/**
 * A tensor as it crosses the thread boundary: numeric data in an owned TypedArray, strings (BYTES) as
 * BytesData whose wire buffer is owned, so both go by transfer. The worker alone makes strings of them.
 */
export interface WireTensor {
  readonly name: string;
  readonly ortType: OrtTensorType;
  readonly dims: readonly number[];
  readonly data: ArrayBufferView | BytesData;
}

/** What one run gives back: the outputs and the worker-side durations (feed creation, run, extraction). */
export interface InstanceRunResult {
  readonly outputs: readonly WireTensor[];
  readonly inputNs: number;
  readonly inferNs: number;
  readonly outputNs: number;
}

/** What a worker is started with (workerData). */
export interface WorkerInit {
  readonly modelPath: string;
  readonly instanceName: string;
  readonly intraOpThreads: number;
  readonly interOpThreads: number;
  /** Ask for the CUDA execution provider on this device (KIND_GPU); CPU when undefined. */
  readonly cudaDeviceId?: number;
}

/** Main -> worker. */
export type ToWorker =
  | {
      readonly type: "run";
      readonly id: number;
      readonly inputs: readonly WireTensor[];
      readonly outputNames: readonly string[];
      /** Test hook: exit the worker thread instead of running (simulates a native crash). */
      readonly crash?: boolean;
    }
  | { readonly type: "close" };

/** An input or output the session declares. */
export interface WireTensorInfo {
  readonly name: string;
  readonly ortType: string | undefined;
  readonly dims: readonly number[];
}

/** Worker -> main. */
export type FromWorker =
  | {
      readonly type: "ready";
      readonly inputs: readonly WireTensorInfo[];
      readonly outputs: readonly WireTensorInfo[];
      /** Set when CUDA was asked for but the session runs on CPU; says why. */
      readonly cudaFallback?: string;
    }
  | { readonly type: "load-error"; readonly message: string }
  | ({ readonly type: "result"; readonly id: number } & InstanceRunResult)
  | { readonly type: "run-error"; readonly id: number; readonly message: string };
