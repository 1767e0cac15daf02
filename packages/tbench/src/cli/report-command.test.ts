import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { toResultJson } from "../report/json-result.js";
import { syntheticLevel } from "../testing/synthetic-results.js";
import { runCli } from "./run-cli.js";

function sink() {
  let text = "";
  return {
    stream: {
      write: (chunk: string) => {
        text += chunk;
        return true;
      },
    },
    text: () => text,
  };
}

async function tbench(argv: string[]) {
  const out = sink();
  const err = sink();
  const code = await runCli(argv, {
    stdout: out.stream,
    stderr: err.stream,
    signal: new AbortController().signal,
  });
  return { code, stdout: out.text(), stderr: err.text() };
}

const result = (levels: number[]) =>
  JSON.stringify(
    toResultJson(
      levels.map((value) => syntheticLevel({ value, latenciesUs: [1_000 * value, 2_000 * value] })),
      { mode: "concurrency" },
      "t",
    ),
  );

describe("tbench report", () => {
  it("writes an HTML page with every chart and an SVG with the throughput chart", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tbench-report-"));
    try {
      const on = join(dir, "batching-on.json");
      const off = join(dir, "batching-off.json");
      await writeFile(on, result([1, 2, 4]));
      await writeFile(off, result([1, 2, 4]));
      const html = join(dir, "report.html");
      const run = await tbench(["report", on, off, "-o", html]);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /Wrote the report of 2 run\(s\) to .*report\.html/);
      const page = await readFile(html, "utf8");
      // Throughput/latency for both, then per run percentiles; no server statistics in synthetic results.
      assert.equal(page.split("<svg").length - 1, 3);
      assert.equal(page.split("no server-side statistics").length - 1, 2);
      assert.ok(!page.includes("<script"), "no script: the page works offline");
      assert.ok(page.includes(">batching-on<") && page.includes(">batching-off<"));

      const svgPath = join(dir, "chart.svg");
      assert.equal((await tbench(["report", on, off, "-o", svgPath])).code, 0);
      const svg = await readFile(svgPath, "utf8");
      assert.match(svg, /^<svg /);
      assert.equal(svg.split(">c=4<").length - 1, 2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses a wrong output type, no output, and files that are not results (exit 2)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tbench-report-"));
    try {
      const good = join(dir, "a.json");
      await writeFile(good, result([1]));
      const bad = join(dir, "bad.json");
      await writeFile(bad, '{"hello": 1}');
      const png = await tbench(["report", good, "-o", join(dir, "r.png")]);
      assert.equal(png.code, 2);
      assert.match(png.stderr, /-o expects a file ending in \.html or \.svg, got '.*r\.png'/);
      const none = await tbench(["report", good]);
      assert.equal(none.code, 2);
      assert.match(none.stderr, /--output/);
      const notResult = await tbench(["report", bad, "-o", join(dir, "r.html")]);
      assert.equal(notResult.code, 2);
      assert.match(notResult.stderr, /bad\.json: expected a tbench --json result/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
