import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_GRPC_MAX_MESSAGE_BYTES, grpcChannelOptions } from "../grpc/grpc-server-settings.js";
import { CliUsageError, parseServerArgs } from "./server-args.js";

const parse = (...argv: string[]) => parseServerArgs(argv, () => {});

test("defaults are Triton's ports, loopback, none mode, 64 MiB, 2^20 BYTES elements, GPU provider auto", () => {
  const { options, logVerbose } = parse("--model-repository", "models");
  assert.deepEqual(options, {
    modelRepository: "models",
    httpPort: 8000,
    grpcPort: 8001,
    metricsPort: 8002,
    httpAddress: "127.0.0.1",
    modelControlMode: "none",
    repositoryPollSecs: 15,
    loadModels: [],
    strictReadiness: true,
    httpMaxInputSize: 64 * 1024 * 1024,
    httpHeaderTimeoutMs: 30_000,
    httpRequestTimeoutMs: 120_000,
    httpSendTimeoutMs: 30_000,
    httpMaxConnections: 0,
    maxPendingRequests: 4096,
    maxBytesTensorElements: 1_048_576,
    disableAutoCompleteConfig: false,
    exitOnError: false,
    gpuExecutionProvider: "auto",
  });
  assert.equal(logVerbose, 0);
});

test("every flag, repeatable --load-model, boolean flags with and without values", () => {
  const { options, logVerbose } = parse(
    "--model-repository=/m",
    "--http-port",
    "0",
    "--grpc-port=9001",
    "--grpc-address",
    "127.0.0.2",
    "--metrics-port",
    "9002",
    "--http-address",
    "0.0.0.0",
    "--model-control-mode",
    "explicit",
    "--repository-poll-secs=0.5",
    "--load-model",
    "simple",
    "--load-model=heavy",
    "--strict-readiness=false",
    "--http-max-input-size",
    "1024",
    "--http-header-timeout-ms=200",
    "--http-request-timeout-ms",
    "0",
    "--http-send-timeout-ms=5000",
    "--http-max-connections=100",
    "--max-pending-requests",
    "0",
    "--max-bytes-tensor-elements=64",
    "--disable-auto-complete-config",
    "--exit-on-error",
    "--log-verbose",
    "1",
    "--allow-metrics",
    "false",
    "--gpu-execution-provider",
    "webgpu",
  );
  assert.deepEqual(options, {
    modelRepository: "/m",
    httpPort: 0,
    grpcPort: 9001,
    grpcAddress: "127.0.0.2",
    metricsPort: false,
    httpAddress: "0.0.0.0",
    modelControlMode: "explicit",
    repositoryPollSecs: 0.5,
    loadModels: ["simple", "heavy"],
    strictReadiness: false,
    httpMaxInputSize: 1024,
    httpHeaderTimeoutMs: 200,
    httpRequestTimeoutMs: 0,
    httpSendTimeoutMs: 5000,
    httpMaxConnections: 100,
    maxPendingRequests: 0,
    maxBytesTensorElements: 64,
    disableAutoCompleteConfig: true,
    exitOnError: true,
    gpuExecutionProvider: "webgpu",
  });
  assert.equal(logVerbose, 1);
});

test("--http-max-buffered-bytes: a positive size; absent, the server derives it from memory", () => {
  assert.equal(
    parse("--model-repository", "m", "--http-max-buffered-bytes", "1048576").options?.httpMaxBufferedBytes,
    1048576,
  );
  assert.equal(parse("--model-repository", "m").options?.httpMaxBufferedBytes, undefined);
  assert.throws(
    () => parse("--model-repository", "m", "--http-max-buffered-bytes", "0"),
    new CliUsageError("invalid --http-max-buffered-bytes '0': expected a positive size in bytes"),
  );
});

test("--http-thread-count: threads serving HTTP, 1 to 64; a bad count is refused", () => {
  const given = parse("--model-repository", "m", "--http-thread-count", "4");
  assert.equal(given.options?.httpThreadCount, 4);
  assert.equal(given.warnings, undefined);
  assert.equal(parse("--model-repository", "m").options?.httpThreadCount, undefined);
  for (const bad of ["0", "65", "1.5"])
    assert.throws(
      () => parse("--model-repository=m", `--http-thread-count=${bad}`),
      new CliUsageError(
        `invalid --http-thread-count '${bad}': ${bad === "1.5" ? "expected a whole number" : "expected a number in the range 1 to 64"}`,
      ),
    );
});

test("--allow-grpc false serves no gRPC", () => {
  assert.equal(parse("--model-repository", "m", "--allow-grpc=false").options?.grpcPort, false);
});

test("bad command lines name the flag, the value and what is allowed", () => {
  const cases: [string[], string][] = [
    [[], "required option '--model-repository <dir>' not specified"],
    [
      ["--model-repository", "m", "--http-port", "http"],
      "invalid --http-port 'http': expected a port number",
    ],
    [
      ["--model-repository", "m", "--metrics-port", "70000"],
      "invalid --metrics-port '70000': expected a port from 0 to 65535",
    ],
    [
      ["--model-repository", "m", "--metrics-config", "summary_latencies"],
      "--metrics-config option format is <setting>=<value>. Got summary_latencies",
    ],
    [
      ["--model-repository", "m", "--metrics-config", "summary_quantiles=0.99"],
      "--metrics-config summary_quantiles=0.99: expected <quantile>:<error> pairs with both in (0, 1), got '0.99'",
    ],
    [
      ["--model-repository", "m", "--http-port", "1.5"],
      "invalid --http-port '1.5': expected an integer port",
    ],
    [
      ["--model-repository", "m", "--model-control-mode", "auto"],
      "invalid --model-control-mode 'auto': expected none, poll or explicit",
    ],
    [
      ["--model-repository", "m", "--repository-poll-secs", "0"],
      "invalid --repository-poll-secs '0': expected a positive number of seconds",
    ],
    [
      ["--model-repository", "m", "--strict-readiness", "maybe"],
      "invalid --strict-readiness 'maybe': expected true or false",
    ],
    [
      ["--model-repository", "m", "--http-max-input-size", "0"],
      "invalid --http-max-input-size '0': expected a positive size in bytes",
    ],
    [
      ["--model-repository", "m", "--http-header-timeout-ms", "-1"],
      "invalid --http-header-timeout-ms '-1': expected 0 (no limit) or a positive number of milliseconds",
    ],
    [
      ["--model-repository", "m", "--http-send-timeout-ms", "2.5"],
      "invalid --http-send-timeout-ms '2.5': expected a whole number of milliseconds",
    ],
    [
      ["--model-repository", "m", "--http-max-connections", "-1"],
      "invalid --http-max-connections '-1': expected 0 (no limit) or a positive number of connections",
    ],
    [
      ["--model-repository", "m", "--max-pending-requests", "x"],
      "invalid --max-pending-requests 'x': expected a number of requests",
    ],
    [
      ["--model-repository", "m", "--max-bytes-tensor-elements", "0"],
      "invalid --max-bytes-tensor-elements '0': expected a positive number of elements",
    ],
    [
      ["--model-repository", "m", "--max-bytes-tensor-elements", "1e3.5"],
      "invalid --max-bytes-tensor-elements '1e3.5': expected a number of elements",
    ],
    [
      ["--model-repository", "m", "--max-bytes-tensor-elements", "2.5"],
      "invalid --max-bytes-tensor-elements '2.5': expected a whole number of elements",
    ],
    [
      ["--model-repository", "m", "--gpu-execution-provider", "vulkan"],
      "invalid --gpu-execution-provider 'vulkan': expected auto, webgpu or cuda",
    ],
    [["--model-repository", "m", "--frobnicate"], "unknown option '--frobnicate'"],
    [["--model-repository", "m", "extra"], "too many arguments. Expected 0 arguments but got 1."],
  ];
  for (const [argv, message] of cases) {
    assert.throws(
      () => parse(...argv),
      (error: unknown) => {
        assert.ok(error instanceof CliUsageError, String(error));
        assert.equal(error.message, message);
        return true;
      },
    );
  }
});

test("--help and --version answer without options", () => {
  let out = "";
  assert.equal(parseServerArgs(["--help"], (text) => (out += text)).options, undefined);
  assert.match(out, /--model-repository <dir>/);
  assert.match(out, /--gpu-execution-provider <provider>/);
  out = "";
  assert.equal(parseServerArgs(["--version"], (text) => (out += text)).options, undefined);
  assert.equal(out.trim(), "0.1.0");
});

test("gRPC endpoint flags: Triton's names, validated, passed as grpcSettings only when given", () => {
  const { options } = parse(
    "--model-repository=m",
    "--grpc-keepalive-time=10000",
    "--grpc-keepalive-timeout",
    "5000",
    "--grpc-keepalive-permit-without-calls",
    "--grpc-http2-max-pings-without-data=0",
    "--grpc-http2-min-recv-ping-interval-without-data=1000",
    "--grpc-http2-max-ping-strikes=0",
    "--grpc-max-connection-age=60000",
    "--grpc-max-connection-age-grace=5000",
    "--grpc-infer-response-compression-level=HIGH",
    "--grpc-infer-allocation-pool-size=8",
    "--grpc-infer-thread-count=4",
  );
  assert.deepEqual(options?.grpcSettings, {
    keepaliveTimeMs: 10000,
    keepaliveTimeoutMs: 5000,
    keepalivePermitWithoutCalls: true,
    http2MaxPingsWithoutData: 0,
    http2MinRecvPingIntervalWithoutDataMs: 1000,
    http2MaxPingStrikes: 0,
    maxConnectionAgeMs: 60000,
    maxConnectionAgeGraceMs: 5000,
    inferResponseCompressionLevel: "high",
  });
  assert.equal(parse("--model-repository=m").options?.grpcSettings, undefined);
  assert.throws(
    () => parse("--model-repository=m", "--grpc-infer-response-compression-level=max"),
    new CliUsageError(
      "invalid --grpc-infer-response-compression-level 'max': expected none, low, medium or high",
    ),
  );
  assert.throws(
    () => parse("--model-repository=m", "--grpc-keepalive-time=-1"),
    new CliUsageError("invalid --grpc-keepalive-time '-1': expected a number >= 0"),
  );
  assert.throws(
    () => parse("--model-repository=m", "--grpc-infer-thread-count=1"),
    new CliUsageError("invalid --grpc-infer-thread-count '1': expected a number in the range 2 to 128"),
  );
  assert.throws(
    () => parse("--model-repository=m", "--grpc-keepalive-permit-without-calls=maybe"),
    new CliUsageError("invalid --grpc-keepalive-permit-without-calls 'maybe': expected true or false"),
  );
});

test("gRPC message size flags: bytes, 128 MiB by default, at most INT32_MAX", () => {
  assert.equal(DEFAULT_GRPC_MAX_MESSAGE_BYTES, 128 * 1024 * 1024);
  assert.deepEqual(
    parse(
      "--model-repository=m",
      "--grpc-max-receive-message-size=1048576",
      "--grpc-max-send-message-size",
      "2048",
    ).options?.grpcSettings,
    { maxReceiveMessageBytes: 1048576, maxSendMessageBytes: 2048 },
  );
  assert.deepEqual(grpcChannelOptions({})["grpc.max_receive_message_length"], DEFAULT_GRPC_MAX_MESSAGE_BYTES);
  assert.deepEqual(grpcChannelOptions({})["grpc.max_send_message_length"], DEFAULT_GRPC_MAX_MESSAGE_BYTES);
  assert.throws(
    () => parse("--model-repository=m", "--grpc-max-receive-message-size=0"),
    new CliUsageError("invalid --grpc-max-receive-message-size '0': expected a positive size in bytes"),
  );
  assert.throws(
    () => parse("--model-repository=m", "--grpc-max-send-message-size=2147483648"),
    new CliUsageError(
      "invalid --grpc-max-send-message-size '2147483648': expected at most 2147483647 bytes (INT32_MAX, Triton's own limit)",
    ),
  );
});
