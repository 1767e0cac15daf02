import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { UsageError } from "../run/usage-error.js";
import { resolveBenchConfig } from "./bench-config.js";

function fails(options: Record<string, unknown>, message: RegExp): void {
  assert.throws(
    () => resolveBenchConfig({ model: "simple", ...options }),
    (error: unknown) => error instanceof UsageError && message.test(error.message),
  );
}

describe("resolveBenchConfig", () => {
  it("applies perf_analyzer's defaults and freezes the result", () => {
    const config = resolveBenchConfig({ model: "simple" });
    assert.equal(config.url, "http://localhost:8000");
    assert.equal(config.mode, "concurrency");
    assert.deepEqual(config.range, { start: 1, end: 1, step: 1 });
    assert.equal(config.measurementMode, "time_windows");
    assert.equal(config.measurementIntervalMs, 5000);
    assert.equal(config.measurementRequestCount, 50);
    assert.equal(config.stabilityPercent, 10);
    assert.equal(config.maxTrials, 10);
    assert.equal(config.percentile, undefined);
    assert.equal(config.latencyThresholdMs, 0);
    assert.equal(config.batchSize, 1);
    assert.equal(config.inputData, "random");
    assert.equal(config.stringLength, 128);
    assert.equal(config.inputTensorFormat, "binary");
    assert.equal(config.outputTensorFormat, "binary");
    assert.equal(config.metricsUrl, "http://localhost:8002/metrics");
    assert.equal(config.metricsIntervalMs, 1000);
    assert.equal(config.maxThreads, 16);
    assert.equal(config.async, false);
    assert.equal(config.maxErrorRate, 0);
    assert.ok(Object.isFrozen(config));
  });

  it("request-rate mode: open loop by default, --sync caps in flight at --max-threads (default 4)", () => {
    const open = resolveBenchConfig({ model: "m", requestRateRange: "100:300:100" });
    assert.equal(open.mode, "request_rate");
    assert.deepEqual(open.range, { start: 100, end: 300, step: 100 });
    assert.equal(open.async, true);
    const sync = resolveBenchConfig({ model: "m", requestRateRange: "50.5", sync: true });
    assert.equal(sync.async, false);
    assert.equal(sync.maxThreads, 4);
    assert.deepEqual(sync.range, { start: 50.5, end: 50.5, step: 1 });
  });

  it("parses repeatable flags", () => {
    const config = resolveBenchConfig({
      model: "m",
      shape: ["INPUT0:1,16", "x:y:3"],
      header: ["Authorization: Bearer t", "X-A:b:c"],
      inputData: ["a.json", "b.json"],
    });
    assert.deepEqual(config.shapes, { INPUT0: [1, 16], "x:y": [3] });
    assert.deepEqual(config.headers, { Authorization: "Bearer t", "X-A": "b:c" });
    assert.deepEqual(config.inputData, ["a.json", "b.json"]);
  });

  it("-i grpc: Triton's gRPC port by default, host:port or a grpc-js target, perf_analyzer's options", () => {
    const grpc = resolveBenchConfig({ model: "m", protocol: "grpc" });
    assert.equal(grpc.protocol, "grpc");
    assert.equal(grpc.url, "localhost:8001");
    assert.equal(grpc.streaming, false);
    assert.equal(grpc.grpcCompression, "none");
    assert.equal(grpc.grpcSsl, undefined);
    assert.equal(grpc.async, false);
    // perf_analyzer lower-cases the protocol.
    assert.equal(resolveBenchConfig({ model: "m", protocol: "gRPC" }).protocol, "grpc");
    assert.equal(resolveBenchConfig({ model: "m", protocol: "HTTP" }).url, "http://localhost:8000");
    for (const url of ["10.0.0.2:9001", "grpc://h:1", "grpcs://h:443", "dns:///svc.ns:8001", "unix:/tmp/s"]) {
      assert.equal(resolveBenchConfig({ model: "m", protocol: "grpc", url }).url, url);
    }
    const streaming = resolveBenchConfig({
      model: "m",
      protocol: "grpc",
      streaming: true,
      grpcCompressionAlgorithm: "deflate",
    });
    assert.equal(streaming.streaming, true);
    assert.equal(streaming.async, true, "perf_analyzer makes streaming asynchronous");
    assert.equal(streaming.grpcCompression, "deflate");
    const tls = resolveBenchConfig({
      model: "m",
      protocol: "grpc",
      sslGrpcUseSsl: true,
      sslGrpcRootCertificationsFile: "ca.pem",
      sslGrpcPrivateKeyFile: "k.pem",
      sslGrpcCertificateChainFile: "c.pem",
    });
    assert.deepEqual(tls.grpcSsl, {
      rootCertificationsFile: "ca.pem",
      privateKeyFile: "k.pem",
      certificateChainFile: "c.pem",
    });
    assert.equal(
      resolveBenchConfig({ model: "m", protocol: "grpc", sslGrpcUseSsl: "false" }).grpcSsl,
      undefined,
    );
  });

  it("refuses gRPC-only flags without -i grpc, and what perf_analyzer refuses with them", () => {
    fails({ streaming: true }, /^--streaming: streaming is only allowed with -i grpc$/);
    fails({ protocol: "grpc", streaming: true, sync: true }, /^--streaming cannot be used with --sync/);
    fails(
      { grpcCompressionAlgorithm: "gzip" },
      /^--grpc-compression-algorithm: compression is only allowed with -i grpc$/,
    );
    fails(
      { protocol: "grpc", grpcCompressionAlgorithm: "zstd" },
      /^--grpc-compression-algorithm: expected one of none\|gzip\|deflate, got "zstd"$/,
    );
    fails({ sslGrpcUseSsl: true }, /^--ssl-grpc-use-ssl: only allowed with -i grpc/);
    fails(
      { protocol: "grpc", sslGrpcUseSsl: "yes" },
      /^--ssl-grpc-use-ssl: expected true, false or no value, got "yes"$/,
    );
    fails(
      { protocol: "grpc", sslGrpcRootCertificationsFile: "ca.pem" },
      /^--ssl-grpc-root-certifications-file: needs --ssl-grpc-use-ssl/,
    );
    fails(
      { protocol: "grpc", sslGrpcUseSsl: true, sslGrpcPrivateKeyFile: "k.pem" },
      /^--ssl-grpc-private-key-file and --ssl-grpc-certificate-chain-file: expected both/,
    );
    fails(
      { protocol: "grpc", url: "http://localhost:8001" },
      /^-u: with -i grpc expected host:port \(e\.g\. localhost:8001\).*, got "http:\/\/localhost:8001" \(an HTTP URL\)$/,
    );
    fails(
      { protocol: "grpc", url: "localhost" },
      /^-u: with -i grpc expected host:port.*, got "localhost" \(no port\)$/,
    );
    fails(
      { protocol: "grpc", url: "localhost:8001/v2" },
      /^-u: with -i grpc expected host:port.*, got "localhost:8001\/v2"$/,
    );
  });

  it("rejects bad flags with one line naming the flag, what was expected and what was given", () => {
    assert.throws(
      () => resolveBenchConfig({}),
      (e: unknown) => e instanceof UsageError && /^-m: the model name is required/.test(e.message),
    );
    fails({ protocol: "udp" }, /^-i: expected http or grpc, got "udp"$/);
    fails(
      { measurementInterval: "abc" },
      /^-p\/--measurement-interval: expected a number of milliseconds >= 1, got "abc"$/,
    );
    fails(
      { measurementMode: "windows" },
      /^--measurement-mode: expected one of time_windows\|count_windows, got "windows"$/,
    );
    fails({ concurrencyRange: "4:2" }, /^--concurrency-range: end must be 0 or at least start, got "4:2"$/);
    fails(
      { concurrencyRange: "1.5" },
      /^--concurrency-range: expected start\[:end\[:step\]\] with non-negative whole numbers, got "1.5"$/,
    );
    fails(
      { concurrencyRange: "1:0" },
      /^--concurrency-range: 'end' and --latency-threshold cannot both be 0$/,
    );
    fails({ concurrencyRange: "1:4", requestRateRange: "10" }, /cannot be used together/);
    fails({ percentile: "100" }, /^--percentile: expected a percentile between 1 and 99/);
    // --shape as perf_analyzer's parser refuses it: no colon, or a dimension <= 0.
    fails(
      { shape: ["INPUT0"] },
      /^--shape: there must be a colon after input name \(name:d1,d2,\.\.\.\), got "INPUT0"$/,
    );
    fails(
      { shape: ["INPUT0:4,0"] },
      /^--shape: the dimensions of input tensor INPUT0 must be > 0, got "INPUT0:4,0"$/,
    );
    fails(
      { shape: ["INPUT0:-1"] },
      /^--shape: the dimensions of input tensor INPUT0 must be > 0, got "INPUT0:-1"$/,
    );
    fails(
      { shape: ["INPUT0:4,x"] },
      /^--shape: expected whole-number dimensions \(name:d1,d2,\.\.\.\), got "INPUT0:4,x"$/,
    );
    fails({ shape: [":4"] }, /^--shape: expected an input name before the colon, got ":4"$/);
    fails({ header: ["NoColon"] }, /^-H: expected Header:Value, got "NoColon"$/);
    fails(
      { binarySearch: true, concurrencyRange: "1:8" },
      /^--binary-search: expected a --latency-threshold/,
    );
    fails({ async: true, sync: true }, /--async and --sync cannot be used together/);
    fails({ maxErrorRate: "150" }, /^--max-error-rate: expected a percentage between 0 and 100, got "150"$/);
    fails({ url: "ftp://x" }, /^-u: expected an http or https URL, got "ftp:\/\/x"$/);
  });
});
