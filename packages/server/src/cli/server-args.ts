/**
 * tbench-server's command line: Triton's flag names where the concept is the same, parsed by commander and
 * validated once by zod into ServerOptions. Every usage problem becomes a CliUsageError with a one-line
 * message (the caller prints it and exits 2).
 */
import { Command, CommanderError, Option } from "commander";
import { z } from "zod";
import { DEFAULT_GPU_EXECUTION_PROVIDER, GPU_EXECUTION_PROVIDERS } from "../instances/gpu-provider-choice.js";
import type { GpuExecutionProvider } from "../instances/worker-protocol.js";
import type { ServerOptions } from "../server.js";
import {
  DEFAULT_GRPC_PORT,
  DEFAULT_HTTP_MAX_INPUT_SIZE,
  DEFAULT_HTTP_PORT,
  DEFAULT_MAX_BYTES_TENSOR_ELEMENTS,
  DEFAULT_METRICS_PORT,
} from "../server.js";

/** A bad command line: print `message` and exit 2. */
export class CliUsageError extends Error {
  override readonly name = "CliUsageError";
}

/** What the command line asks for. */
export interface ServerArgs {
  /** undefined when --help or --version was answered (exit 0). */
  readonly options: ServerOptions | undefined;
  /** --log-verbose level (0: off). */
  readonly logVerbose: number;
}

const BOOLEAN_WORDS: Readonly<Record<string, boolean>> = {
  true: true,
  false: false,
  "1": true,
  "0": false,
  on: true,
  off: false,
  yes: true,
  no: false,
};

const port = z.coerce
  .number({ error: "expected a port number" })
  .int("expected an integer port")
  .min(0, "expected a port from 0 to 65535")
  .max(65535, "expected a port from 0 to 65535");
const flag = z.union([z.boolean(), z.string()]).transform((value, ctx) => {
  if (typeof value === "boolean") return value;
  const parsed = BOOLEAN_WORDS[value.toLowerCase()];
  if (parsed === undefined) {
    ctx.addIssue({ code: "custom", message: "expected true or false" });
    return z.NEVER;
  }
  return parsed;
});

const argsSchema = z.object({
  modelRepository: z.string().min(1, "expected a directory"),
  httpPort: port,
  grpcPort: port,
  grpcAddress: z.string().min(1, "expected an address").optional(),
  metricsPort: port,
  httpAddress: z.string().min(1, "expected an address"),
  modelControlMode: z.enum(["none", "poll", "explicit"], { error: "expected none, poll or explicit" }),
  repositoryPollSecs: z.coerce
    .number({ error: "expected a number of seconds" })
    .positive("expected a positive number of seconds")
    .max(86_400, "expected at most 86400 seconds"),
  loadModel: z.array(z.string().min(1, "expected a model name")),
  strictReadiness: flag,
  httpMaxInputSize: z.coerce
    .number({ error: "expected a size in bytes" })
    .int("expected a whole number of bytes")
    .positive("expected a positive size in bytes"),
  maxBytesTensorElements: z.coerce
    .number({ error: "expected a number of elements" })
    .int("expected a whole number of elements")
    .positive("expected a positive number of elements"),
  disableAutoCompleteConfig: z.boolean(),
  exitOnError: flag,
  logVerbose: z.union([z.literal(true), z.coerce.number().int().min(0)], {
    error: "expected a level (0, 1, ...)",
  }),
  allowHttp: flag,
  allowMetrics: flag,
  allowGrpc: flag,
  gpuExecutionProvider: z.enum(GPU_EXECUTION_PROVIDERS as [GpuExecutionProvider, ...GpuExecutionProvider[]], {
    error: "expected auto, webgpu or cuda",
  }),
});

const FLAG_OF: Readonly<Record<string, string>> = {
  modelRepository: "--model-repository",
  httpPort: "--http-port",
  grpcPort: "--grpc-port",
  grpcAddress: "--grpc-address",
  metricsPort: "--metrics-port",
  httpAddress: "--http-address",
  modelControlMode: "--model-control-mode",
  repositoryPollSecs: "--repository-poll-secs",
  loadModel: "--load-model",
  strictReadiness: "--strict-readiness",
  httpMaxInputSize: "--http-max-input-size",
  maxBytesTensorElements: "--max-bytes-tensor-elements",
  disableAutoCompleteConfig: "--disable-auto-complete-config",
  exitOnError: "--exit-on-error",
  logVerbose: "--log-verbose",
  allowHttp: "--allow-http",
  allowMetrics: "--allow-metrics",
  allowGrpc: "--allow-grpc",
  gpuExecutionProvider: "--gpu-execution-provider",
};

function createProgram(): Command {
  return new Command("tbench-server")
    .description("A Triton-compatible inference server for ONNX models (KServe v2 HTTP API)")
    .version("0.1.0")
    .requiredOption("--model-repository <dir>", "model repository directory")
    .option("--http-port <port>", "HTTP port (0: any free port)", String(DEFAULT_HTTP_PORT))
    .option("--grpc-port <port>", "gRPC port (0: any free port)", String(DEFAULT_GRPC_PORT))
    .option("--grpc-address <address>", "address the gRPC endpoint binds (default: --http-address)")
    .option(
      "--metrics-port <port>",
      "Prometheus metrics port (0: any free port)",
      String(DEFAULT_METRICS_PORT),
    )
    .option("--http-address <address>", "address the HTTP and metrics endpoints bind", "127.0.0.1")
    .option("--model-control-mode <mode>", "none, poll or explicit", "none")
    .option("--repository-poll-secs <seconds>", "poll mode: seconds between repository scans", "15")
    .option(
      "--load-model <name>",
      "model to load at startup in explicit mode (repeatable; * for all)",
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .addOption(
      new Option("--strict-readiness [bool]", "ready only when every startup model is ready").default("true"),
    )
    .option(
      "--http-max-input-size <bytes>",
      "largest request body in bytes",
      String(DEFAULT_HTTP_MAX_INPUT_SIZE),
    )
    .option(
      "--max-bytes-tensor-elements <n>",
      "most elements one BYTES input of a request may have (one string each in the worker)",
      String(DEFAULT_MAX_BYTES_TENSOR_ELEMENTS),
    )
    .option("--disable-auto-complete-config", "do not complete configs from the ONNX models", false)
    .addOption(
      new Option(
        "--exit-on-error [bool]",
        "exit when a startup model fails to load (Triton defaults to true)",
      ).default("false"),
    )
    .addOption(new Option("--log-verbose [level]", "verbose logging level (0: off)").default("0"))
    .addOption(new Option("--allow-http [bool]", "serve the HTTP API").default("true"))
    .addOption(new Option("--allow-metrics [bool]", "serve Prometheus metrics").default("true"))
    .addOption(new Option("--allow-grpc [bool]", "serve the gRPC API").default("true"))
    .option(
      "--gpu-execution-provider <provider>",
      "what KIND_GPU instances run on: auto (CUDA if installed, else WebGPU), webgpu or cuda; CPU when none starts",
      DEFAULT_GPU_EXECUTION_PROVIDER,
    )
    .exitOverride()
    .configureOutput({ writeErr: () => {}, outputError: () => {} });
}

/** Parses `argv` (without node and script); `write` receives --help and --version text. */
export function parseServerArgs(argv: readonly string[], write: (text: string) => void): ServerArgs {
  const program = createProgram();
  program.configureOutput({ writeOut: write, writeErr: () => {}, outputError: () => {} });
  try {
    program.parse([...argv], { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === "commander.helpDisplayed" || error.code === "commander.version") {
        return { options: undefined, logVerbose: 0 };
      }
      throw new CliUsageError(error.message.replace(/^error: /, ""));
    }
    throw error;
  }
  const parsed = argsSchema.safeParse(program.opts());
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = String(issue.path[0] ?? "");
    const given = (program.opts() as Record<string, unknown>)[key];
    throw new CliUsageError(`invalid ${FLAG_OF[key] ?? key} '${String(given)}': ${issue.message}`);
  }
  const a = parsed.data;
  if (!a.allowHttp)
    throw new CliUsageError("--allow-http false is not supported: the HTTP API is the only front end");
  const logVerbose = a.logVerbose === true ? 1 : a.logVerbose;
  return {
    logVerbose,
    options: Object.freeze({
      modelRepository: a.modelRepository,
      httpPort: a.httpPort,
      grpcPort: a.allowGrpc ? a.grpcPort : false,
      ...(a.grpcAddress !== undefined ? { grpcAddress: a.grpcAddress } : {}),
      metricsPort: a.allowMetrics ? a.metricsPort : false,
      httpAddress: a.httpAddress,
      modelControlMode: a.modelControlMode,
      repositoryPollSecs: a.repositoryPollSecs,
      loadModels: a.loadModel,
      strictReadiness: a.strictReadiness,
      httpMaxInputSize: a.httpMaxInputSize,
      maxBytesTensorElements: a.maxBytesTensorElements,
      disableAutoCompleteConfig: a.disableAutoCompleteConfig,
      exitOnError: a.exitOnError,
      gpuExecutionProvider: a.gpuExecutionProvider,
    }),
  };
}
