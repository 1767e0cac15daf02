/**
 * How a test starts a TypeScript entry (a CLI's main.ts, a generator) in a child process from source: its
 * bundle where scripts/run-tests.ts made one (TBENCH_SOURCE_BUNDLES), else under the loader the suite runs
 * with (scripts/testing/ts-loader names itself in TBENCH_TS_LOADER); a test started some other way falls back
 * to tsx.
 */
export function sourceNodeArgs(entry: string): string[] {
  // scripts/run-tests.ts bundles the usual entries, so that their processes need no loader hooks.
  const bundled = (JSON.parse(process.env["TBENCH_SOURCE_BUNDLES"] ?? "{}") as Record<string, string>)[entry];
  if (bundled !== undefined) return ["--conditions=source", "--enable-source-maps", bundled];
  return ["--conditions=source", "--import", process.env["TBENCH_TS_LOADER"] ?? "tsx", entry];
}

/** The module a worker thread imports to register the same loader (it exports `register()`, as tsx's does). */
export function sourceLoaderApi(): string {
  return process.env["TBENCH_TS_LOADER_API"] ?? "tsx/esm/api";
}
