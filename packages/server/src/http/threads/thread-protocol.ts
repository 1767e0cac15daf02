/**
 * Messages between the main thread and the front-end threads of `--http-thread-count` (http-threads.ts):
 * a thread calls the main thread's core (`call`, `infer`, `cancel`), sends its log lines, and says when it
 * has started and closed; the main thread answers each call and asks the thread to close. Errors cross as
 * their kind, code and message, so that the thread answers them with the status and body the main thread
 * would (describeError); tensors cross as owned buffers, transferred from TRANSFER_MIN_BYTES up.
 */

import type { FrontEndCoreMethod } from "../front-end-core.js";
import type { HttpFrontEndOptions } from "../http-server.js";
import type { PortableError, PortableRequest } from "./portable-values.js";

/** What a front-end thread is started with: the front end's settings that can cross threads. */
export interface FrontEndThreadInit {
  /** 1 to N-1 (the main thread's front end is 0). */
  readonly thread: number;
  /** The main thread's listening socket, which the thread dups (listening-socket-dup.ts). */
  readonly fd: number;
  readonly options: Omit<HttpFrontEndOptions, "core" | "logger" | "clock" | "listenHandle">;
}

/** The log levels of Logger. */
export type LogLevel = "info" | "warn" | "error" | "verbose";

/** Thread to main. */
export type FromFrontEndThread =
  | {
      readonly type: "call";
      readonly id: number;
      readonly method: Exclude<FrontEndCoreMethod, "infer">;
      readonly args: readonly unknown[];
    }
  | { readonly type: "infer"; readonly id: number; readonly request: PortableRequest }
  | { readonly type: "cancel"; readonly id: number }
  | { readonly type: "log"; readonly level: LogLevel; readonly message: string }
  | { readonly type: "started" }
  | { readonly type: "failed"; readonly message: string }
  | { readonly type: "closed"; readonly served: number };

/** Main to thread. */
export type ToFrontEndThread =
  | { readonly type: "result"; readonly id: number; readonly value: unknown }
  | { readonly type: "failure"; readonly id: number; readonly error: PortableError }
  | { readonly type: "close" };

/**
 * Methods whose answers the handlers send as JSON: they cross as JSON text, so that what the thread
 * stringifies again is what the main thread would have sent (a value's toJSON included).
 */
export const JSON_METHODS: ReadonlySet<FrontEndCoreMethod> = new Set([
  "serverMetadata",
  "modelMetadata",
  "modelConfig",
  "modelStatistics",
  "repositoryIndex",
]);
