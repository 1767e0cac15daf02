export * from "./core/logger.js";
export * from "./core/server-error.js";
export type * from "./core/types.js";
