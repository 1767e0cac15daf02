import assert from "node:assert/strict";
import { test } from "node:test";
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
    maxBytesTensorElements: 64,
    disableAutoCompleteConfig: true,
    exitOnError: true,
    gpuExecutionProvider: "webgpu",
  });
  assert.equal(logVerbose, 1);
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
