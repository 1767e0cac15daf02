/**
 * How a test starts a TypeScript entry (a CLI's main.ts, a generator) in a child process from source: under
 * the loader its own process runs with. scripts/run-tests.ts runs the suite under scripts/testing/ts-loader,
 * which names itself in TBENCH_TS_LOADER; a test started some other way falls back to tsx.
 */
export function sourceNodeArgs(entry: string): string[] {
  return ["--conditions=source", "--import", process.env["TBENCH_TS_LOADER"] ?? "tsx", entry];
}

/** The module a worker thread imports to register the same loader (it exports `register()`, as tsx's does). */
export function sourceLoaderApi(): string {
  return process.env["TBENCH_TS_LOADER_API"] ?? "tsx/esm/api";
}
