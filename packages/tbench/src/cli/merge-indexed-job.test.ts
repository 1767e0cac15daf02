/**
 * The path of deploy/k8s/tbench-job.yaml without a cluster: N tbench processes stand in for the Indexed
 * Job's pods, each running the same sweep against one real tbench-server at the same time with `--json`
 * into a shared directory (the pods' volume), then `tbench merge` (the collect step) makes one result.
 * The merged counts and histograms must be the sums of the pods': the merge loses nothing.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { type RunningServer, startServer } from "@tbench/server";
import { sourceNodeArgs } from "../../../../scripts/testing/source-node.js";
import { parseResultJson, type ResultJson } from "../report/json-result.js";
import { decodeHistogram } from "../stats/histogram.js";

const MODELS = fileURLToPath(new URL("../../../../examples/models", import.meta.url));
const MAIN = fileURLToPath(new URL("./main.ts", import.meta.url));
const quiet = { error() {}, warn() {}, info() {}, verbose() {}, debug() {} };
const PODS = 3;

/** One tbench process, as a pod runs it (its own process, its own exit code). */
function tbench(args: readonly string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...sourceNodeArgs(MAIN), ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

async function readResult(path: string): Promise<ResultJson> {
  return parseResultJson(await readFile(path, "utf8"), path);
}

describe("tbench merge of an Indexed Job's pods (local processes)", { timeout: 180_000 }, () => {
  let server: RunningServer;
  let dir = "";
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
    dir = await mkdtemp(join(tmpdir(), "tbench-indexed-job-"));
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it(`${PODS} concurrent runs merge into one result whose counts are their sums`, async () => {
    const url = server.httpUrl.replace(/^http:\/\//, "");
    const sweep = [
      "-m",
      "simple",
      "-u",
      url,
      "--concurrency-range",
      "1:2",
      "-p",
      "500",
      "-r",
      "3",
      "-s",
      "100",
    ];
    // JOB_COMPLETION_INDEX names each pod's file in the Job; here the loop index does.
    const files = Array.from({ length: PODS }, (_, i) => join(dir, `tbench-${i}.json`));
    const runs = await Promise.all(files.map((file) => tbench([...sweep, "--json", file])));
    for (const [i, run] of runs.entries()) assert.equal(run.code, 0, `pod ${i}: ${run.output}`);

    const merged = join(dir, "merged.json");
    const merge = await tbench(["merge", ...files, "-o", merged]);
    assert.equal(merge.code, 0, merge.output);
    assert.match(merge.output, new RegExp(`Merged ${PODS} result\\(s\\), 2 level\\(s\\)`));

    const pods = await Promise.all(files.map(readResult));
    const result = await readResult(merged);
    assert.deepEqual(
      result.levels.map((l) => l.value),
      [1, 2],
    );
    for (const [index, level] of result.levels.entries()) {
      const parts = pods.map((pod) => {
        const part = pod.levels[index];
        assert.ok(part !== undefined && part.value === level.value, `each pod measured level ${level.value}`);
        return part;
      });
      const sum = (pick: (l: (typeof parts)[number]) => number) => parts.reduce((t, l) => t + pick(l), 0);
      assert.ok(sum((l) => l.requestCount) > 0);
      assert.equal(
        level.requestCount,
        sum((l) => l.requestCount),
      );
      assert.equal(
        level.sentCount,
        sum((l) => l.sentCount),
      );
      assert.equal(
        level.errorCount,
        sum((l) => l.errorCount),
      );
      // Lossless: the merged histogram holds every pod's every latency, so its count is the sum too.
      const count = (encoded: string) => decodeHistogram(encoded).totalCount;
      assert.equal(
        count(level.histograms.latencyUs),
        sum((l) => count(l.histograms.latencyUs)),
      );
      assert.equal(count(level.histograms.latencyUs), level.requestCount);
      // The pods loaded the server together: their throughputs add up.
      assert.ok(Math.abs(level.inferPerSec - sum((l) => l.inferPerSec)) < 1e-6 * level.inferPerSec);
    }

    // The server answered at least every request the pods counted (and the ones outside the windows).
    const stats = (await (await fetch(`${server.httpUrl}/v2/models/simple/stats`)).json()) as {
      model_stats: { inference_count: number }[];
    };
    const counted = result.levels.reduce((t, l) => t + l.requestCount, 0);
    assert.ok(
      stats.model_stats[0]!.inference_count >= counted,
      `server ${stats.model_stats[0]!.inference_count}`,
    );
  });
});
