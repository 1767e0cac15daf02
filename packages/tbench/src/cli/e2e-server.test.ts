import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { type RunningServer, startServer } from "@tbench/server";
import { parseResultJson } from "../report/json-result.js";
import { runCli } from "./run-cli.js";

const MODELS = fileURLToPath(new URL("../../../../examples/models", import.meta.url));
const quiet = { error() {}, warn() {}, info() {}, verbose() {}, debug() {} };
const sink = { write: () => true };

describe("tbench against a real tbench-server", { timeout: 120_000 }, () => {
  let server: RunningServer;
  let dir: string;
  before(async () => {
    server = await startServer({
      modelRepository: MODELS,
      httpPort: 0,
      metricsPort: 0,
      modelControlMode: "explicit",
      loadModels: ["simple"],
      logger: quiet as never,
    });
    dir = await mkdtemp(join(tmpdir(), "tbench-e2e-"));
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("tbench -m simple just works, and its count agrees with the server's inference count", async () => {
    const json = join(dir, "simple.json");
    const csv = join(dir, "simple.csv");
    const code = await runCli(
      [
        "-m",
        "simple",
        "-u",
        server.httpUrl,
        "-p",
        "1000",
        "-s",
        "50",
        "-r",
        "5",
        "-f",
        csv,
        "--json",
        json,
        "--collect-metrics",
        "--metrics-url",
        server.metricsUrl ?? "",
        "--metrics-interval",
        "100",
      ],
      { stdout: sink, stderr: sink, signal: new AbortController().signal },
    );
    assert.equal(code, 0);
    const level = parseResultJson(await readFile(json, "utf8"), json).levels[0] as ReturnType<
      typeof parseResultJson
    >["levels"][0] & {
      server: { inferenceCount: number; executionCount: number; successCount: number } | null;
      serverBreakdown: { requestUs: number } | null;
    };
    assert.equal(level.errorCount, 0);
    assert.ok(level.requestCount > 0);
    // The same windows seen from both ends: statistics are read at each window boundary, so the counts
    // differ only by the one request (concurrency 1) in flight at each boundary of the 3 merged windows: at
    // most 6, whatever the machine's speed (done-when: within 2%, which holds from 300 requests up).
    const serverCount = level.server!.inferenceCount;
    const difference = Math.abs(serverCount - level.requestCount);
    assert.ok(
      difference <= Math.max(6, 0.02 * level.requestCount),
      `client ${level.requestCount} vs server ${serverCount} inferences`,
    );
    // The client's latency includes the server's request time plus network and client time.
    assert.ok(level.latency.avgUs > level.serverBreakdown!.requestUs);
    // The client library's own time (undici diagnostics channels) is part of that latency. A sample of the
    // requests is timed (one at a time, then a gap of 9x its duration), so some but not all of them.
    const http = (
      level as unknown as { http: { count: number; sendUs: number; recvUs: number; requestUs: number } }
    ).http;
    assert.ok(
      http.count > 0 && http.count < level.requestCount,
      `${http.count} timed vs ${level.requestCount} counted`,
    );
    assert.ok(http.sendUs > 0 && http.sendUs + http.recvUs <= http.requestUs);
    // Each timed request's HTTP time is part of its own latency, so their average is at most the largest
    // latency. (Comparing it with the average latency, even with a margin of standard errors, failed on a
    // loaded machine: the sample is small and the times are heavy-tailed.)
    assert.ok(
      http.requestUs <= level.latency.maxUs,
      `HTTP ${http.requestUs} us vs the largest latency ${level.latency.maxUs} us`,
    );
    // --collect-metrics scraped the server's Prometheus endpoint, every scrape answered, and what it read
    // is what a CPU server at concurrency 1 shows: no GPUs, and never more than the one request pending.
    const metrics = level.metrics;
    assert.ok(metrics !== null, "the level carries the scraped metrics");
    assert.ok(metrics.scrapeCount > 0, `${metrics.scrapeCount} scrapes`);
    assert.equal(metrics.failedScrapeCount, 0);
    assert.deepEqual(metrics.gpus, {});
    assert.ok(
      metrics.avgPendingRequests >= 0 && metrics.avgPendingRequests <= 1,
      `average pending ${metrics.avgPendingRequests} at concurrency 1`,
    );
    const header = (await readFile(csv, "utf8")).split("\n")[0];
    assert.equal(
      header,
      "Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input," +
        "Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency",
    );
  });
});
