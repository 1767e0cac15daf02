import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { parseResultJson } from "../report/json-result.js";
import { type FakeV2Server, startFakeV2Server } from "../testing/fake-v2-server.js";
import { runCli } from "./run-cli.js";

const sink = { write: () => true };
const io = () => ({ stdout: sink, stderr: sink, signal: new AbortController().signal });

describe("errors never end the run", { timeout: 60_000 }, () => {
  let server: FakeV2Server;
  let dir: string;
  before(async () => {
    server = await startFakeV2Server({ failStatus: 503, failEvery: 10 });
    dir = await mkdtemp(join(tmpdir(), "tbench-errors-"));
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  const fast = ["-m", "tiny", "-p", "300", "-r", "3", "-s", "100"];

  it("counts failures by kind, marks the level failed, goes on with the sweep, exits 1", async () => {
    const json = join(dir, "sweep.json");
    const code = await runCli(
      [...fast, "-u", server.url, "--concurrency-range", "1:2", "--json", json],
      io(),
    );
    assert.equal(code, 1);
    const result = parseResultJson(await readFile(json, "utf8"), json);
    assert.deepEqual(
      result.levels.map((l) => [l.value, l.status]),
      [
        [1, "error_rate"],
        [2, "error_rate"],
      ],
    );
    for (const level of result.levels) {
      assert.deepEqual(Object.keys(level.errorsByKind), ["UNAVAILABLE (503)"]);
      // One request in ten fails; over a few hundred requests the rate is 10% give or take a request per window boundary.
      assert.ok(Math.abs(level.errorRate - 0.1) < 0.05, `error rate ${level.errorRate}`);
    }
  });

  it("--max-error-rate lets a level pass; --stop-on-error stops the sweep at the first failed level", async () => {
    const tolerant = join(dir, "tolerant.json");
    assert.equal(
      await runCli([...fast, "-u", server.url, "--max-error-rate", "20", "--json", tolerant], io()),
      0,
    );
    // "unstable" only if a window of the busy CI machine saw no completions at all; either way not failed.
    const status = parseResultJson(await readFile(tolerant, "utf8"), tolerant).levels[0]?.status;
    assert.ok(status === "ok" || status === "unstable", `status ${status}`);
    const stopped = join(dir, "stopped.json");
    const code = await runCli(
      [...fast, "-u", server.url, "--concurrency-range", "1:3", "--stop-on-error", "--json", stopped],
      io(),
    );
    assert.equal(code, 1);
    assert.equal(parseResultJson(await readFile(stopped, "utf8"), stopped).levels.length, 1);
  });

  it("responses that do not match validation_data are counted as VALIDATION errors", async () => {
    const ok = await startFakeV2Server();
    try {
      const data = join(dir, "data.json");
      // The fake model answers OUTPUT0 = [0]; the second entry expects [1].
      await writeFile(
        data,
        JSON.stringify({
          data: [{ INPUT0: [1] }, { INPUT0: [2] }],
          validation_data: [{ OUTPUT0: [0] }, { OUTPUT0: [1] }],
        }),
      );
      const json = join(dir, "validation.json");
      let stderr = "";
      const code = await runCli(
        [...fast, "-u", ok.url, "--input-data", data, "--max-error-rate", "60", "--json", json],
        {
          ...io(),
          stderr: {
            write: (text: string) => {
              stderr += text;
              return true;
            },
          },
        },
      );
      assert.equal(code, 0);
      // What differs is said once, before measuring: the data entry, the output, the first differing
      // element, what was expected and what came back.
      assert.match(
        stderr,
        /^validation_data: the response to data\[1\] does not match: output OUTPUT0\[0\]: expected 1, got 0 \(such responses are counted as VALIDATION errors\)$/m,
      );
      const level = parseResultJson(await readFile(json, "utf8"), json).levels[0]!;
      assert.deepEqual(Object.keys(level.errorsByKind), ["VALIDATION"]);
      assert.ok(Math.abs(level.errorRate - 0.5) < 0.1, `error rate ${level.errorRate}`);
    } finally {
      await ok.close();
    }
  });
});
