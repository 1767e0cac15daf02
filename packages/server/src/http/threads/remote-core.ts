/**
 * A front-end thread's core: every method posts a call to the main thread's InferenceCore and resolves
 * with its answer (thread-protocol.ts). An infer request's cancellation crosses as a `cancel` message.
 */
import type { InferenceRequest, InferenceResponse } from "../../core/types.js";
import type { FrontEndCore, FrontEndCoreMethod } from "../front-end-core.js";
import { fromPortableError, portableRequest } from "./portable-values.js";
import { type FromFrontEndThread, JSON_METHODS, type ToFrontEndThread } from "./thread-protocol.js";

/** Posts a message to the main thread. */
export type PostToMain = (message: FromFrontEndThread, transfer?: ArrayBuffer[]) => void;

/** The proxy and the entry for the main thread's answers. */
export interface RemoteCore {
  readonly core: FrontEndCore;
  /** Settles the call an answer is for. */
  receive(message: Extract<ToFrontEndThread, { type: "result" | "failure" }>): void;
}

interface Pending {
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly json: boolean;
}

/** Creates the proxy core of a front-end thread. */
export function createRemoteCore(post: PostToMain): RemoteCore {
  const pending = new Map<number, Pending>();
  let nextId = 0;

  const call = (method: Exclude<FrontEndCoreMethod, "infer">, args: readonly unknown[]): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = ++nextId;
      pending.set(id, { resolve, reject, json: JSON_METHODS.has(method) });
      post({ type: "call", id, method, args });
    });

  const infer = (request: InferenceRequest): Promise<InferenceResponse> =>
    new Promise((resolve, reject) => {
      const id = ++nextId;
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject, json: false });
      const transfer: ArrayBuffer[] = [];
      post({ type: "infer", id, request: portableRequest(request, transfer) }, transfer);
      const signal = request.signal;
      if (signal === undefined) return;
      const cancel = () => {
        if (pending.has(id)) post({ type: "cancel", id });
      };
      if (signal.aborted) cancel();
      else signal.addEventListener("abort", cancel, { once: true });
    });

  // Each method forwards its arguments as they are (all of them structured-cloneable).
  const forward =
    (method: Exclude<FrontEndCoreMethod, "infer">) =>
    (...args: unknown[]) =>
      call(method, args);
  const core = {
    serverMetadata: forward("serverMetadata"),
    isLive: forward("isLive"),
    isReady: forward("isReady"),
    isModelReady: forward("isModelReady"),
    modelMetadata: forward("modelMetadata"),
    modelConfig: forward("modelConfig"),
    modelStatistics: forward("modelStatistics"),
    repositoryIndex: forward("repositoryIndex"),
    loadModel: forward("loadModel"),
    unloadModel: forward("unloadModel"),
    infer,
  } as FrontEndCore;

  return {
    core,
    receive(message) {
      const call = pending.get(message.id);
      if (call === undefined) return;
      pending.delete(message.id);
      if (message.type === "failure") call.reject(fromPortableError(message.error));
      else call.resolve(call.json ? JSON.parse(message.value as string) : message.value);
    },
  };
}
