/**
 * What the HTTP handlers call of the core. With `--http-thread-count` above 1 the same handlers run in
 * front-end worker threads whose core is a proxy to the main thread's (remote-core.ts), so every method may
 * answer later; the handlers await each answer. InferenceCore, whose methods answer at once, fits as is.
 */
import type { InferenceCore } from "../core/types.js";

/** A value now or a promise of it. */
type Later<T> = T | Promise<T>;

/** The core methods the HTTP front end uses. */
export type FrontEndCoreMethod =
  | "serverMetadata"
  | "isLive"
  | "isReady"
  | "isModelReady"
  | "modelMetadata"
  | "modelConfig"
  | "modelStatistics"
  | "repositoryIndex"
  | "loadModel"
  | "unloadModel"
  | "infer";

/** InferenceCore's front-end methods, each allowed to answer with a promise. */
export type FrontEndCore = {
  readonly [M in FrontEndCoreMethod]: (
    ...args: Parameters<InferenceCore[M]>
  ) => Later<Awaited<ReturnType<InferenceCore[M]>>>;
} & {
  /**
   * Streams a request's responses (generate, generate_stream): the main thread's core only; a front-end
   * thread's proxy has none yet, and its generate endpoints answer 501.
   */
  readonly inferStream?: InferenceCore["inferStream"];
};
