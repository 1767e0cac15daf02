import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parseResultJson, toResultJson } from "../report/json-result.js";
import { UsageError } from "../run/usage-error.js";
import { syntheticLevel } from "../testing/synthetic-results.js";
import { runMerge } from "./merge-command.js";

describe("tbench merge", () => {
  it("writes the merged result of several files", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tbench-merge-"));
    try {
      const files = [join(dir, "a.json"), join(dir, "b.json")];
      await writeFile(
        files[0]!,
        JSON.stringify(
          toResultJson([syntheticLevel({ value: 4, latenciesUs: [100, 200] })], { mode: "concurrency" }, "t"),
        ),
      );
      await writeFile(
        files[1]!,
        JSON.stringify(
          toResultJson([syntheticLevel({ value: 4, latenciesUs: [300] })], { mode: "concurrency" }, "t"),
        ),
      );
      const out = join(dir, "merged.json");
      let printed = "";
      assert.equal(await runMerge(files, { output: out }, (text) => (printed += text)), 0);
      assert.match(printed, /Merged 2 result\(s\), 1 level\(s\)/);
      const merged = parseResultJson(await readFile(out, "utf8"), out);
      assert.equal(merged.levels[0]?.requestCount, 3);
      assert.equal(merged.levels[0]?.latency.avgUs, 200);
      await writeFile(
        files[1]!,
        JSON.stringify(
          toResultJson(
            [syntheticLevel({ mode: "request_rate", value: 4, latenciesUs: [1] })],
            { mode: "request_rate" },
            "t",
          ),
        ),
      );
      await assert.rejects(
        runMerge(files, { output: out }, () => {}),
        (e: unknown) => e instanceof UsageError && /mix modes/.test(e.message),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("tbench compare, files", () => {
  it("a missing file is a usage error naming it", async () => {
    const { runCompare } = await import("./compare-command.js");
    await assert.rejects(
      runCompare("/nonexistent/a.json", "/nonexistent/b.json", {}, () => {}),
      (e: unknown) =>
        e instanceof UsageError && /\/nonexistent\/a\.json: cannot read the file/.test(e.message),
    );
  });
});
