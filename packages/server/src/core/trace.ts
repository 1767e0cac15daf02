/**
 * Tracing by environment variable, as grpc-js does with GRPC_TRACE: `TBENCH_TRACE=batcher,http` turns on
 * one line per event for the named components; silent by default.
 */

/** Writes one trace line for a component. */
export type TraceFn = (message: string) => void;

/** The components named in `TBENCH_TRACE` (comma-separated, case-insensitive; `all` enables every one). */
export function tracedComponents(env: NodeJS.ProcessEnv = process.env): ReadonlySet<string> {
  const raw = env["TBENCH_TRACE"] ?? "";
  return new Set(
    raw
      .split(",")
      .map((name) => name.trim().toLowerCase())
      .filter((name) => name.length > 0),
  );
}

/**
 * A trace function for `component`, or `undefined` when it is not enabled (callers skip building the
 * message). Lines go to `write` (default stderr) as `T <component> <message>`.
 */
export function createTrace(
  component: string,
  options: { env?: NodeJS.ProcessEnv; write?: (line: string) => void } = {},
): TraceFn | undefined {
  const enabled = tracedComponents(options.env);
  if (!enabled.has(component) && !enabled.has("all")) return undefined;
  const write = options.write ?? ((line: string) => process.stderr.write(line + "\n"));
  return (message) => write(`T ${component} ${message}`);
}
