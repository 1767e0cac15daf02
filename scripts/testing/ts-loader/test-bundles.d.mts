/** Where test bundles are kept, relative to the repository root. */
export const TEST_BUNDLE_DIR: string;
/**
 * The module to run for each of `files` (relative to `root`), by file: its bundle, or a shim that loads it
 * under the hooks where it does not bundle.
 */
export function testEntries(root: string, files: readonly string[]): Promise<Map<string, string>>;
/** The variables that name the loader to worker threads and child processes started from source. */
export function loaderEnvironment(): Record<"TBENCH_TS_LOADER" | "TBENCH_TS_LOADER_API", string>;
/** The file (relative to the repository) whose bundle or shim is at `path` (relative too), else `path`. */
export function bundledFile(path: string): string;
