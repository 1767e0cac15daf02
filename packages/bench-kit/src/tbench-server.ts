// The one way a benchmark starts tbench-server: its command line in a child process (startChild), on free
// ports of 127.0.0.1, its addresses read from its startup lines ("Started HTTPService at ..."). From the
// build by default, as users run it (packages/server/bin; the benchmarks' npm scripts run `tsc -b` first,
// so dist/ is the code under test), or from the source through tsx, for programs that do not build first
// or that start another checkout's server.
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "./bench-kit.js";
import { type Child, startChild } from "./child-process.js";

/** Options of {@link startTbenchServer}. */
export interface TbenchServerOptions {
  /**
   * "dist" (default): packages/server/bin/tbench-server.mjs, which runs the build; "source":
   * packages/server/src/cli/main.ts through tsx.
   */
  readonly from?: "dist" | "source";
  /** The checkout whose server runs. Default: this repository. */
  readonly root?: string;
  /** --model-repository. Default: this repository's examples/models. */
  readonly repository?: string;
  /** Explicit model control with these models loaded. Left out: the server's default mode, or args'. */
  readonly models?: readonly string[];
  /** Starts the gRPC front end on a free port (default: --allow-grpc false). */
  readonly grpc?: boolean;
  /** Starts the metrics endpoint on a free port (default: --allow-metrics false). */
  readonly metrics?: boolean;
  /** More command-line arguments, after those the options above make. */
  readonly args?: readonly string[];
  /** The server's environment. Default: this process's. */
  readonly env?: NodeJS.ProcessEnv;
  /** Default 90 s. */
  readonly startTimeoutMs?: number;
  /** Called once the child is spawned, before it wrote anything: to read its output yourself. */
  readonly onSpawn?: (child: ChildProcess) => void;
}

/** Where a started tbench-server listens. */
export interface TbenchServerAddresses {
  /** `http://127.0.0.1:port` (https when it serves TLS). */
  readonly httpUrl: string;
  /** `127.0.0.1:port` of the gRPC front end, when `grpc` was asked for. */
  readonly grpcAddress: string | undefined;
  /** `http://127.0.0.1:port/metrics`, when `metrics` was asked for. */
  readonly metricsUrl: string | undefined;
}

/** A tbench-server in a child process: close() is its graceful shutdown (SIGTERM), destroy() SIGKILL. */
export type TbenchServer = Child & TbenchServerAddresses;

/** Node's arguments that run the tbench-server command of `root` (default: this repository). */
export function tbenchServerCommand(from: "dist" | "source" = "dist", root = ROOT): string[] {
  return from === "source"
    ? ["--conditions=source", "--import", "tsx", join(root, "packages/server/src/cli/main.ts")]
    : [join(root, "packages/server/bin/tbench-server.mjs")];
}

/** The addresses in a tbench-server's startup lines, once every front end asked for has started. */
export function parseStartupLines(
  output: string,
  wanted: { grpc: boolean; metrics: boolean },
): TbenchServerAddresses | undefined {
  const http = /Started HTTPService at (\S+)( \(HTTPS\))?/.exec(output);
  const grpc = /Started GRPCInferenceService at (\S+)/.exec(output)?.[1];
  const metrics = /Started Metrics Service at (\S+)/.exec(output)?.[1];
  if (http === null || (wanted.grpc && grpc === undefined) || (wanted.metrics && metrics === undefined))
    return undefined;
  return {
    httpUrl: `${http[2] === undefined ? "http" : "https"}://${http[1]}`,
    grpcAddress: wanted.grpc ? grpc : undefined,
    metricsUrl: wanted.metrics ? `http://${metrics}/metrics` : undefined,
  };
}

/**
 * Starts `tbench-server --model-repository R [--model-control-mode explicit --load-model M ...]
 * --http-port 0 ...` and resolves once every front end asked for listens. The child is killed when this
 * process exits; await close() (or destroy()) to stop it before.
 */
export function startTbenchServer(options: TbenchServerOptions = {}): Promise<TbenchServer> {
  const grpc = options.grpc === true;
  const metrics = options.metrics === true;
  const models = options.models;
  return startChild({
    name: "tbench-server",
    args: [
      ...tbenchServerCommand(options.from, options.root),
      ...["--model-repository", options.repository ?? join(ROOT, "examples/models")],
      ...(models === undefined ? [] : ["--model-control-mode", "explicit"]),
      ...(models ?? []).flatMap((model) => ["--load-model", model]),
      ...["--http-port", "0"],
      ...(grpc ? ["--grpc-port", "0"] : ["--allow-grpc", "false"]),
      ...(metrics ? ["--metrics-port", "0"] : ["--allow-metrics", "false"]),
      ...(options.args ?? []),
    ],
    ready: (output) => parseStartupLines(output, { grpc, metrics }),
    ...(options.env === undefined ? {} : { env: options.env }),
    ...(options.startTimeoutMs === undefined ? {} : { startTimeoutMs: options.startTimeoutMs }),
    ...(options.onSpawn === undefined ? {} : { onSpawn: options.onSpawn }),
  });
}
