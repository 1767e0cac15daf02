/**
 * tbench-server on 127.0.0.1:0 with the repository's bundled models (examples/models), the named ones
 * loaded in explicit model control, HTTP only, silent: what a client test starts when it needs a real
 * server and nothing special about it. `extra` adds or overrides server options.
 */
import { type RunningServer, type ServerOptions, silentLogger, startServer } from "@tbench/server";

const REPOSITORY = new URL("../../../../examples/models", import.meta.url).pathname;

/** Starts the server; the caller closes it. */
export function startBundledServer(
  models: readonly string[],
  extra: Partial<ServerOptions> = {},
): Promise<RunningServer> {
  return startServer({
    modelRepository: REPOSITORY,
    httpPort: 0,
    httpAddress: "127.0.0.1",
    metricsPort: false,
    grpcPort: false,
    modelControlMode: "explicit",
    loadModels: [...models],
    logger: silentLogger,
    ...extra,
  });
}
