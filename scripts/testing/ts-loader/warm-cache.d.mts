/** Transpiles `files` (absolute .ts paths) into the loader's cache and bundles `workerEntries`. */
export function warmCache(files: readonly string[], workerEntries: readonly string[]): Promise<void>;
