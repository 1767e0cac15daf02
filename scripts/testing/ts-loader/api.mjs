/**
 * The test loader's entry points. `register()` registers ./hooks.mjs in this thread and names this module in
 * TBENCH_TS_LOADER_API (and register.mjs in TBENCH_TS_LOADER), so that worker threads and child processes
 * started from source use the same loader instead of tsx. A worker thread asks `bundledEntry()` first: a
 * body that bundles runs without hooks (worker-bundles.mjs).
 */
import { register as registerHooks } from "node:module";

export { bundledEntry } from "./worker-bundles.mjs";

export const LOADER_URL = new URL("./register.mjs", import.meta.url).href;
const API_URL = import.meta.url;

/** The variables that name this loader to worker threads and child processes started from source. */
export function loaderEnvironment() {
  return { TBENCH_TS_LOADER: LOADER_URL, TBENCH_TS_LOADER_API: API_URL };
}

export function register() {
  registerHooks(new URL("./hooks.mjs", import.meta.url));
  process.setSourceMapsEnabled(true);
  Object.assign(process.env, loaderEnvironment());
}
