/**
 * The main thread's side of a front-end thread (http-threads.ts): serves the thread's core calls from the
 * one InferenceCore (one scheduler, one set of statistics and metrics) and writes its log lines to the one
 * logger. An infer request gets a Cancellation here that the thread's `cancel` message aborts.
 */
import { Cancellation } from "../../core/cancel-signal.js";
import type { Logger } from "../../core/logger.js";
import type { InferenceCore } from "../../core/types.js";
import { portableResponse, toPortableError } from "./portable-values.js";
import { type FromFrontEndThread, JSON_METHODS, type ToFrontEndThread } from "./thread-protocol.js";

/** Posts a message to the front-end thread. */
export type PostToThread = (message: ToFrontEndThread, transfer?: ArrayBuffer[]) => void;

/** Serves one front-end thread. */
export interface CoreBridge {
  /** Handles a core call, a cancellation or a log line; false for any other message. */
  receive(message: FromFrontEndThread): boolean;
  /** The thread is gone: cancels its requests still in the core and drops their answers. */
  abandon(): void;
}

/** Options of createCoreBridge. */
export interface CoreBridgeOptions {
  readonly core: InferenceCore;
  readonly logger: Logger;
  readonly post: PostToThread;
}

/** Creates the bridge between one front-end thread and the core. */
export function createCoreBridge(options: CoreBridgeOptions): CoreBridge {
  const { core, logger, post } = options;
  /** Infer requests in the core, by the thread's call id. */
  const inFlight = new Map<number, Cancellation>();
  let abandoned = false;

  const fail = (id: number, error: unknown) => {
    if (!abandoned) post({ type: "failure", id, error: toPortableError(error) });
  };

  const infer = (id: number, request: Extract<FromFrontEndThread, { type: "infer" }>["request"]) => {
    const signal = new Cancellation();
    inFlight.set(id, signal);
    core.infer({ ...request, signal }).then(
      (response) => {
        inFlight.delete(id);
        if (abandoned) return;
        const transfer: ArrayBuffer[] = [];
        post({ type: "result", id, value: portableResponse(response, transfer) }, transfer);
      },
      (error: unknown) => {
        inFlight.delete(id);
        fail(id, error);
      },
    );
  };

  const call = async (message: Extract<FromFrontEndThread, { type: "call" }>) => {
    try {
      const method = core[message.method] as (...args: readonly unknown[]) => unknown;
      const value = await method.apply(core, [...message.args]);
      if (!abandoned)
        post({
          type: "result",
          id: message.id,
          value: JSON_METHODS.has(message.method) ? JSON.stringify(value) : value,
        });
    } catch (error) {
      fail(message.id, error);
    }
  };

  return {
    receive(message) {
      switch (message.type) {
        case "call":
          void call(message);
          return true;
        case "infer":
          infer(message.id, message.request);
          return true;
        case "cancel":
          inFlight.get(message.id)?.abort();
          return true;
        case "log":
          logger[message.level](message.message);
          return true;
        default:
          return false;
      }
    },
    abandon() {
      abandoned = true;
      for (const signal of inFlight.values()) signal.abort();
      inFlight.clear();
    },
  };
}
