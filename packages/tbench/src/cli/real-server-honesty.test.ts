/**
 * tbench's honesty claims, through the tbench command against the real tbench-server (onnxruntime
 * sessions, one instance thread each): coordinated omission with a server-side stall (the only instance
 * held busy by one large request), errors counted while the run goes on (queue-full 503s), and
 * `--workers 2`. Assertions compare counts, orderings and one measurement with another; none is a bound on
 * how fast this machine is.
 */
import assert from "node:assert/strict";
import { copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { createHttpClient, type InferenceClient } from "@tbench/client";
import { type RunningServer, startServer } from "@tbench/server";
import { decodeHistogram } from "../stats/histogram.js";
import { assertCountsAgree, readFirstLevel, runTbench } from "../testing/cli-harness.js";

const MODELS = fileURLToPath(new URL("../../../../examples/models", import.meta.url));
const HEAVY = join(MODELS, "heavy", "1", "model.onnx");
const quiet = { error() {}, warn() {}, info() {}, verbose() {}, debug() {} };

/** heavy's file (input [256] -> output [16], about a millisecond a row alone), under a config of ours. */
function heavyConfig(name: string, body: string): string {
  return `name: "${name}"
platform: "onnxruntime_onnx"
${body}
input [ { name: "input", data_type: TYPE_FP32, dims: [ 256 ] } ]
output [ { name: "output", data_type: TYPE_FP32, dims: [ 16 ] } ]
instance_group [ { count: 1, kind: KIND_CPU } ]
parameters { key: "intra_op_thread_count", value: { string_value: "1" } }
`;
}

const CONFIGS: Record<string, string> = {
  // No batcher: requests run one at a time, in arrival order, on the one instance.
  stall: heavyConfig("stall", "max_batch_size: 1024"),
  // One request running, one queued, every other one refused at once with 503.
  tight_queue: heavyConfig(
    "tight_queue",
    "max_batch_size: 1\ndynamic_batching { default_queue_policy { max_queue_size: 1 } }",
  ),
};

/** Rows of the request that holds the stall model's instance busy. */
const STALL_ROWS = 1024;
const RATE = 100;
/** Short windows; stability is not what these tests look at. */
const SHORT_WINDOWS = ["-p", "500", "-r", "3", "-s", "100"];

describe("tbench against the real tbench-server: what it claims to measure", { timeout: 120_000 }, () => {
  let server: RunningServer;
  let client: InferenceClient;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "tbench-honesty-"));
    const repository = join(dir, "models");
    for (const [name, config] of Object.entries(CONFIGS)) {
      await mkdir(join(repository, name, "1"), { recursive: true });
      await copyFile(HEAVY, join(repository, name, "1", "model.onnx"));
      await writeFile(join(repository, name, "config.pbtxt"), config);
    }
    await mkdir(join(repository, "simple", "1"), { recursive: true });
    await copyFile(join(MODELS, "simple", "1", "model.onnx"), join(repository, "simple", "1", "model.onnx"));
    await copyFile(join(MODELS, "simple", "config.pbtxt"), join(repository, "simple", "config.pbtxt"));
    server = await startServer({
      modelRepository: repository,
      httpPort: 0,
      metricsPort: false,
      logger: quiet as never,
    });
    client = createHttpClient({ url: server.httpUrl });
  });
  after(async () => {
    await client?.close();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("coordinated omission: the corrected latency includes a server-side stall", async () => {
    const json = join(dir, "stall.json");
    // One request in flight (--sync --max-threads 1), like a closed-loop client, at 100 requests/s.
    const run = runTbench([
      "-m",
      "stall",
      "-u",
      server.httpUrl,
      "--request-rate-range",
      String(RATE),
      "--sync",
      "--max-threads",
      "1",
      "--request-count",
      "300",
      "--json",
      json,
    ]);
    // Once the run is under way (20 of its 300 requests served, about 2.8 s of schedule left), one request
    // of 1024 rows takes the only instance; tbench's next request waits behind it on the server.
    const served = async () => (await client.modelStatistics("stall"))[0]?.inferenceCount ?? 0;
    while ((await served()) < 20) await new Promise((resolve) => setTimeout(resolve, 5));
    const input = new Float32Array(STALL_ROWS * 256).fill(0.5);
    await client.infer("stall", {
      inputs: [{ name: "input", datatype: "FP32", shape: [STALL_ROWS, 256], data: input }],
    });
    const { code, stderr } = await run;
    assert.equal(code, 0, stderr);

    // How long the instance was held, by the server's own clock: the stall's compute time.
    const stats = (await client.modelStatistics("stall"))[0]!;
    const stall = stats.batchStats.find((b) => b.batchSize === STALL_ROWS);
    assert.ok(stall !== undefined && stall.computeInfer.count === 1, "the stall ran once, alone");
    const stallUs = (stall.computeInput.ns + stall.computeInfer.ns + stall.computeOutput.ns) / 1000;

    const level = await readFirstLevel(json);
    assert.equal(level.requestCount, 300);
    assert.equal(level.errorCount, 0);
    // Every send due while the instance was held is measured from its due time: those due in the first half
    // of the stall (one every 1/rate) each waited at least half of it. In the uncorrected view (from the
    // moment a request really left) only the one request waiting behind the stall on the server did.
    const gapUs = 1_000_000 / RATE;
    const halfStallUs = stallUs / 2;
    const slow = Math.floor(halfStallUs / gapUs);
    assert.ok(slow >= 3, `the stall (${stallUs} us) spans at least 6 sends`);
    const percentile = 100 * (1 - (slow - 1) / level.requestCount);
    const corrected = decodeHistogram(level.histograms.latencyUs).getValueAtPercentile(percentile);
    const uncorrected = decodeHistogram(level.histograms.uncorrectedLatencyUs!).getValueAtPercentile(
      percentile,
    );
    // (0.1%: the histogram's precision.)
    assert.ok(
      corrected >= halfStallUs * 0.999,
      `corrected p${percentile} ${corrected} us: ${slow} requests should show half the ${stallUs} us stall`,
    );
    assert.ok(uncorrected < corrected, `uncorrected p${percentile} ${uncorrected} us hides the stall`);
    // Those sends could not leave on time (the one slot was taken): each is counted late.
    assert.ok(level.lateSendCount >= 2 * slow - 1, `${level.lateSendCount} late sends`);
  });

  it("queue-full 503s are counted per request while the run goes on and the others are served", async () => {
    const json = join(dir, "tight-queue.json");
    // Eight contexts against one running and one queued slot: most sends are refused at once.
    const { code, stderr } = await runTbench([
      "-m",
      "tight_queue",
      "-u",
      server.httpUrl,
      "--concurrency-range",
      "8",
      ...SHORT_WINDOWS,
      "--json",
      json,
    ]);
    assert.equal(code, 1, `a level with errors fails, after it was measured: ${stderr}`);
    const level = await readFirstLevel(json);
    assert.ok(level.requestCount > 0, "requests kept being served between the refusals");
    assert.ok(level.errorCount > 0, "refusals were counted");
    // Every measurement window saw both: the first refusal did not end the run.
    assert.ok(level.windows.length >= 3, `${level.windows.length} windows`);
    for (const [i, window] of level.windows.entries()) {
      assert.ok(window.errorCount > 0 && window.inferPerSec > 0, `window ${i}: ${JSON.stringify(window)}`);
    }
    assert.deepEqual(Object.keys(level.errorsByKind), ["UNAVAILABLE (503)"]);
    assert.equal(level.errorsByKind["UNAVAILABLE (503)"], level.errorCount);
    assert.equal(level.errorRate, level.errorCount / (level.requestCount + level.errorCount));
    // The server served what tbench counted as served, give or take the 8 in flight at each end.
    assertCountsAgree(level, 8);
  });

  it("--workers 2 spreads the contexts over two threads and counts every request once", async () => {
    const json = join(dir, "workers.json");
    const { code, stderr } = await runTbench([
      "-m",
      "simple",
      "-u",
      server.httpUrl,
      "--workers",
      "2",
      "--concurrency-range",
      "4",
      ...SHORT_WINDOWS,
      "--json",
      json,
    ]);
    assert.equal(code, 0, stderr);
    const level = await readFirstLevel(json);
    assert.equal(level.errorCount, 0);
    assert.ok(level.requestCount > 0);
    assertCountsAgree(level, 4);
    // Both workers' windows were merged: the latencies recorded are exactly the requests counted.
    assert.equal(level.moments.latency.count, level.requestCount);
  });
});
