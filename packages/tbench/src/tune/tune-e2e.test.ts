import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { applyModelConfigDefaults, type ModelConfig, parseModelConfig } from "@tbench/proto";
import { runCli } from "../cli/run-cli.js";
import { captureStream, startTuneServer, type TuneServer } from "../testing/tune-server.js";
import type { TuneJson } from "./tune-json.js";

describe("tbench tune against a real tbench-server", { timeout: 60_000 }, () => {
  let tune: TuneServer;
  before(async () => {
    tune = await startTuneServer();
  });
  after(() => tune.close());

  it("tunes heavy over batching, queue delay and instances: picks the best measured within the budget, restores the config, writes the winner's config.pbtxt", async () => {
    const { server, client, dir } = tune;
    const before = await client.modelConfig("heavy");
    const json = join(dir, "tune.json");
    const out = join(dir, "out");
    const stdout = captureStream();
    const stderr = captureStream();
    const code = await runCli(
      [
        "tune",
        "-m",
        "heavy",
        "-u",
        server.httpUrl,
        "--batching",
        "off,on",
        "--max-queue-delay-us",
        "500,2000",
        "--instance-count",
        "1,2",
        "--latency-budget",
        "p95:20ms",
        "--concurrency",
        "1,4",
        "-p",
        "300",
        "-s",
        "50",
        "-r",
        "4",
        "--json",
        json,
        "--output-config",
        out,
      ],
      { stdout: stdout.stream, stderr: stderr.stream, signal: new AbortController().signal },
    );
    // The server's config afterwards is the original, field for field.
    assert.deepEqual(await client.modelConfig("heavy"), before);
    assert.match(stdout.text(), /Restored the original config of 'heavy'/);

    const result = JSON.parse(await readFile(json, "utf8")) as TuneJson;
    assert.equal(result.restored, true);
    assert.deepEqual(result.originalConfig, before);
    assert.deepEqual(result.runs.map((r) => r.label).sort(), [
      "off inst=1",
      "off inst=2",
      "on delay=2000us inst=1",
      "on delay=2000us inst=2",
      "on delay=500us inst=1",
      "on delay=500us inst=2",
    ]);
    for (const run of result.runs) {
      assert.equal(run.state, "measured", `${run.label}: ${run.message}`);
      assert.ok(run.result !== null && run.result.levels.length > 0);
      assert.equal(run.result.run["candidate"], run.label);
      for (const level of run.result.levels)
        assert.ok(level.serverBreakdown !== null, "server-side breakdown");
    }
    // The choice is the highest throughput among the measured levels under the budget (computed here).
    let best: { label: string; inferPerSec: number } | undefined;
    for (const run of result.runs) {
      for (const level of run.result?.levels ?? []) {
        const ok =
          (level.status === "ok" || level.status === "unstable") &&
          (level.latency.percentiles["95"] ?? 0) < 20_000;
        if (ok && (best === undefined || level.inferPerSec > best.inferPerSec))
          best = { label: run.label, inferPerSec: level.inferPerSec };
      }
    }
    assert.equal(result.winner, best?.label ?? null);
    assert.equal(code, best === undefined ? 1 : 0, stderr.text());
    if (best === undefined) return;
    assert.match(
      stdout.text(),
      new RegExp(`│ 1 \\* +│ ${best.label.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`),
    );
    assert.match(stdout.text(), /^Winner: .*; runner-up .*\.$/m);

    // The winner's config.pbtxt parses and is the winner's config.
    const text = await readFile(join(out, "heavy", "config.pbtxt"), "utf8");
    const winner = result.runs.find((r) => r.label === best.label)!;
    assert.deepEqual(
      applyModelConfigDefaults(parseModelConfig(text)),
      applyModelConfigDefaults(winner.config as unknown as ModelConfig),
    );

    // compare and report read the tune's JSON.
    const sink = { write: () => true };
    const io = { stdout: sink, stderr: sink, signal: new AbortController().signal };
    assert.equal(await runCli(["compare", `${json}#off inst=1`, json], io), 0);
    assert.equal(await runCli(["report", json, "-o", join(dir, "tune.svg")], io), 0);
  });
});
