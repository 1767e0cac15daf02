import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { type RunningServer, startServer } from "@tbench/server";
import { assertCountsAgree, readFirstLevel, runTbench, type ServerLevel } from "../testing/cli-harness.js";

const MODELS = fileURLToPath(new URL("../../../../examples/models", import.meta.url));
const quiet = { error() {}, warn() {}, info() {}, verbose() {}, debug() {} };

const run = runTbench;
const level = readFirstLevel;

describe("tbench -i grpc against a real tbench-server", { timeout: 120_000 }, () => {
  let server: RunningServer;
  let grpcUrl: string;
  let dir: string;
  let badShapeData: string;
  // Short windows; stability is not what these tests look at.
  const fast = ["-m", "simple", "-p", "500", "-r", "3", "-s", "100"];

  before(async () => {
    server = await startServer({
      modelRepository: MODELS,
      httpPort: 0,
      grpcPort: 0,
      metricsPort: 0,
      modelControlMode: "explicit",
      loadModels: ["simple"],
      logger: quiet as never,
    });
    grpcUrl = server.grpcAddress ?? "";
    dir = await mkdtemp(join(tmpdir(), "tbench-grpc-"));
    // Two requests used in turn: the second's INPUT0 has 8 elements where `simple` takes 16, which the
    // server refuses (INVALID_ARG), so exactly every other request fails.
    const row = Array.from({ length: 16 }, (_, i) => i);
    badShapeData = join(dir, "bad-shape.json");
    await writeFile(
      badShapeData,
      JSON.stringify({
        data: [
          { INPUT0: row, INPUT1: row },
          { INPUT0: { content: row.slice(0, 8), shape: [8] }, INPUT1: row },
        ],
      }),
    );
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("-i grpc: unary infer (gzip requests), with the server-side breakdown and metrics as over HTTP", async () => {
    const json = join(dir, "unary.json");
    const { code, stderr } = await run([
      ...fast,
      "-i",
      "grpc",
      "-u",
      grpcUrl,
      "--grpc-compression-algorithm",
      "gzip",
      "--collect-metrics",
      "--metrics-url",
      server.metricsUrl ?? "",
      "--json",
      json,
    ]);
    assert.equal(code, 0, stderr);
    const l = await level(json);
    assert.equal(l.errorCount, 0);
    assert.ok(l.requestCount > 0);
    assertCountsAgree(l, 1);
    assert.ok(l.serverBreakdown !== null && l.latency.avgUs > l.serverBreakdown.requestUs);
    assert.ok(l.metrics !== null && l.metrics !== undefined, "metrics scraped");
  });

  it("--streaming: each context its own stream; --workers 2 --streaming as well", async () => {
    const json = join(dir, "streaming.json");
    const streamed = await run([
      ...fast,
      "-i",
      "grpc",
      "-u",
      grpcUrl,
      "--streaming",
      "--concurrency-range",
      "4",
      "--json",
      json,
    ]);
    assert.equal(streamed.code, 0, streamed.stderr);
    const l = await level(json);
    assert.equal(l.errorCount, 0);
    assertCountsAgree(l, 4);

    const workers = join(dir, "workers.json");
    const spread = await run([
      ...fast,
      "-i",
      "grpc",
      "-u",
      grpcUrl,
      "--streaming",
      "--workers",
      "2",
      "--concurrency-range",
      "2",
      "--json",
      workers,
    ]);
    assert.equal(spread.code, 0, spread.stderr);
    const w = await level(workers);
    assert.equal(w.errorCount, 0);
    assert.ok(w.requestCount > 0);
    assertCountsAgree(w, 2);
  });

  it("refused requests are counted per request, under the same word as over HTTP", async () => {
    const counted = async (args: string[]): Promise<ServerLevel> => {
      const json = join(dir, `errors-${args.join("-").replace(/[^a-z0-9]+/gi, "_")}.json`);
      const { code, stderr } = await run([...fast, "--input-data", badShapeData, ...args, "--json", json]);
      assert.equal(code, 1, `a level with errors fails: ${stderr}`);
      return level(json);
    };
    const http = await counted(["-u", server.httpUrl]);
    const unary = await counted(["-i", "grpc", "-u", grpcUrl]);
    const streamed = await counted(["-i", "grpc", "-u", grpcUrl, "--streaming", "--concurrency-range", "2"]);
    assert.deepEqual(Object.keys(http.errorsByKind), ["INVALID_ARGUMENT (400)"]);
    // The same first word as over HTTP; the gRPC status name follows when the client error keeps it (its
    // cause, or a grpcStatus field: see classifyError).
    assert.equal(Object.keys(unary.errorsByKind).length, 1);
    assert.match(Object.keys(unary.errorsByKind)[0]!, /^INVALID_ARGUMENT \(grpc INVALID_ARGUMENT\)$/);
    // Triton's stream error answer (error_message) has no status: the client names the kind from the message
    // alone (UNKNOWN when it names none of the kinds it knows), and no status follows.
    assert.equal(Object.keys(streamed.errorsByKind).length, 1);
    assert.match(Object.keys(streamed.errorsByKind)[0]!, /^(INVALID_ARGUMENT|UNKNOWN)$/);
    for (const l of [http, unary, streamed]) {
      // Every other request fails (requestCount counts the successful ones); the windows' edges cut at most
      // one pair per context.
      assert.ok(Math.abs(l.errorCount - l.requestCount) <= 2, `${l.errorCount} failed, ${l.requestCount} ok`);
      assert.ok(l.requestCount > 0, "the good requests still succeed");
    }
  });

  it("flag mistakes are one line and exit code 2, before any request", async () => {
    const cases: [string[], RegExp][] = [
      [
        ["-u", server.httpUrl, "--streaming"],
        /^tbench: error: --streaming: streaming is only allowed with -i grpc\n$/,
      ],
      [
        ["-i", "grpc", "-u", server.httpUrl],
        /^tbench: error: -u: with -i grpc expected host:port \(e\.g\. localhost:8001\).* \(an HTTP URL\)\n$/,
      ],
      [
        [
          "-i",
          "grpc",
          "-u",
          grpcUrl,
          "--ssl-grpc-use-ssl",
          "--ssl-grpc-root-certifications-file",
          join(dir, "none.pem"),
        ],
        /^tbench: error: --ssl-grpc-root-certifications-file .*none\.pem: cannot read the file \(ENOENT[^\n]*\)\n$/,
      ],
      [
        [
          "-i",
          "grpc",
          "-u",
          grpcUrl,
          "--ssl-grpc-use-ssl",
          "--ssl-grpc-root-certifications-file",
          badShapeData,
        ],
        /^tbench: error: --ssl-grpc-root-certifications-file .*: expected a PEM file \(-----BEGIN \.\.\.\), the file has none\n$/,
      ],
    ];
    for (const [args, message] of cases) {
      const { code, stderr } = await run([...fast, ...args]);
      assert.equal(code, 2, args.join(" "));
      assert.match(stderr, message);
    }
  });
});
