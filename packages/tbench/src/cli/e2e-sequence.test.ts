// tbench against a real tbench-server serving the bundled stateful model `sequence_accumulator` (OUTPUT is
// the running sum of the sequence's INPUTs, kept by the server between requests): every request of a
// sequence reaches the server in order with the right flags (the sums check out), the summary counts the
// sequences, and after the run the server holds none of the ids tbench used.
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { createHttpClient, type InferenceClient } from "@tbench/client";
import { type RunningServer, startServer } from "@tbench/server";
import { parseResultJson } from "../report/json-result.js";
import { runCli } from "./run-cli.js";

const MODELS = fileURLToPath(new URL("../../../../examples/models", import.meta.url));
const MODEL = "sequence_accumulator";

/** Captures what the server logs (its warnings, e.g. a START for a sequence that never ended). */
function captureLogger() {
  const warnings: string[] = [];
  return {
    warnings,
    logger: { error() {}, warn: (m: string) => warnings.push(m), info() {}, verbose() {}, debug() {} },
  };
}

describe("tbench on a sequence model (tbench-server's sequence batcher)", { timeout: 180_000 }, () => {
  let server: RunningServer;
  let client: InferenceClient;
  let dir: string;
  const log = captureLogger();

  before(async () => {
    server = await startServer({
      modelRepository: MODELS,
      httpPort: 0,
      grpcPort: 0,
      metricsPort: 0,
      modelControlMode: "explicit",
      loadModels: [MODEL],
      logger: log.logger as never,
    });
    client = createHttpClient({ url: server.httpUrl });
    dir = await mkdtemp(join(tmpdir(), "tbench-sequence-"));
  });
  after(async () => {
    await client?.close();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function tbench(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = "";
    let stderr = "";
    const code = await runCli(args, {
      stdout: {
        write: (text: string) => {
          stdout += text;
          return true;
        },
      },
      stderr: {
        write: (text: string) => {
          stderr += text;
          return true;
        },
      },
      signal: new AbortController().signal,
    });
    return { code, stdout, stderr };
  }

  /** A request without START for each id: the server must answer that it holds no such sequence. */
  async function assertNoOpenSequence(firstId: number, count: number): Promise<void> {
    for (let id = firstId; id < firstId + count; id++) {
      await assert.rejects(
        client.infer(MODEL, {
          inputs: [{ name: "INPUT", datatype: "INT32", shape: [1, 1], data: [1] }],
          sequenceId: id,
        }),
        (error: Error) =>
          error.message.includes(
            `inference request for sequence ${id} to model '${MODEL}' must specify the START flag on the first request of the sequence`,
          ),
        `sequence ${id} is still open on the server`,
      );
    }
  }

  async function inferenceCount(): Promise<number> {
    const [stats] = await client.modelStatistics(MODEL);
    return Number(stats?.inferenceCount ?? 0);
  }

  /**
   * Runs `tbench -m sequence_accumulator <args> --json <name>.json` (args split on spaces), expects exit 0,
   * and returns its output and levels, each checked to have had no failed request.
   */
  async function runSequences(name: string, args: string) {
    const json = join(dir, `${name}.json`);
    const run = await tbench([
      "-m",
      MODEL,
      ...args.split(" "),
      "--json",
      json,
      "--profile-export-file",
      join(dir, `${name}.profile.json`),
    ]);
    assert.equal(run.code, 0, run.stderr);
    const { levels } = parseResultJson(await readFile(json, "utf8"), json);
    for (const level of levels) assert.equal(level.errorCount, 0, JSON.stringify(level.errorsByKind));
    return { ...run, levels };
  }

  it("concurrency 1 and 3, length 5: exit 0, Sequence count in the summary and the JSON, no errors", async () => {
    const before = await inferenceCount();
    const run = await runSequences(
      "concurrency",
      `-u ${server.httpUrl} --concurrency-range 1:4:2 --sequence-length 5 --sequence-id-range 1000:1010 -p 500 -s 50 -r 4`,
    );
    const counts = [...run.stdout.matchAll(/^ {4}Sequence count: (\d+) \(([\d.e+]+) seq\/sec\)$/gm)];
    assert.equal(counts.length, 2, `one Sequence count line per level:\n${run.stdout}`);
    assert.match(run.stdout, /Using asynchronous calls for inference/, "a sequence model's calls are async");
    assert.deepEqual(
      run.levels.map((l) => l.value),
      [1, 3],
    );
    for (const [i, level] of run.levels.entries()) {
      assert.ok((level.sequenceCount ?? 0) > 0, "sequences ended in the windows");
      assert.equal(String(level.sequenceCount), counts[i]?.[1]);
      // Lengths 4..6: a level's sequences are about a fifth of its requests.
      const perSequence = level.requestCount / level.sequenceCount!;
      assert.ok(perSequence > 3 && perSequence < 7, `${perSequence} requests per sequence`);
      const server = (level as unknown as { server: { inferenceCount: number } | null }).server;
      assert.ok((server?.inferenceCount ?? 0) > 0, "the server's statistics show the requests");
    }
    assert.ok((await inferenceCount()) - before >= run.levels.reduce((t, l) => t + l.requestCount, 0));
    await assertNoOpenSequence(1000, 10);
    // perf_analyzer's profile export names each request's sequence: ids of the range, every one in use.
    const profile = JSON.parse(await readFile(join(dir, "concurrency.profile.json"), "utf8")) as {
      experiments: { requests: { sequence_id?: number }[] }[];
    };
    const ids = profile.experiments.flatMap((e) => e.requests.map((r) => r.sequence_id));
    assert.ok(ids.length > 0);
    assert.ok(
      ids.every((id) => id !== undefined && id >= 1000 && id < 1010),
      `ids ${[...new Set(ids)].join(",")}`,
    );
  });

  it("JSON streams: each sequence is one stream, in order (the running sums match validation_data)", async () => {
    const data = join(dir, "streams.json");
    await writeFile(
      data,
      JSON.stringify({
        data: [
          [{ INPUT: [1] }, { INPUT: [2] }, { INPUT: [3] }],
          [{ INPUT: [10] }, { INPUT: [20] }],
        ],
        validation_data: [
          [{ OUTPUT: [1] }, { OUTPUT: [3] }, { OUTPUT: [6] }],
          [{ OUTPUT: [10] }, { OUTPUT: [30] }],
        ],
      }),
    );
    const { levels } = await runSequences(
      "streams-result",
      `-u ${server.httpUrl} --concurrency-range 2 --input-data ${data} --sequence-id-range 2000:2010 --request-count 200`,
    );
    const [level] = levels;
    assert.equal(level?.requestCount, 200);
    // Sequences of 3 and 2 steps: 200 requests end between 40 and 100 of them (fewer at the window's edge).
    assert.ok(
      (level?.sequenceCount ?? 0) >= 60 && (level?.sequenceCount ?? 0) <= 100,
      `${level?.sequenceCount}`,
    );
    await assertNoOpenSequence(2000, 10);
  });

  it("request-rate mode over gRPC streams, --serial-sequences: no errors, nothing left open", async () => {
    const grpc = server.grpcAddress;
    assert.ok(grpc !== undefined);
    const run = await runSequences(
      "rate",
      `-i grpc --streaming -u ${grpc} --request-rate-range 200 --num-of-sequences 3 --serial-sequences ` +
        "--sequence-length 4 --sequence-id-range 3000:3003 --request-count 150",
    );
    const [level] = run.levels;
    assert.ok((level?.sequenceCount ?? 0) > 0);
    assert.match(run.stdout, /Sequence count: \d+/);
    await assertNoOpenSequence(3000, 3);
  });

  it("refuses -b 2 with perf_analyzer's message; the server never saw a conflicting START", async () => {
    const run = await tbench(["-m", MODEL, "-u", server.httpUrl, "-b", "2"]);
    assert.deepEqual(
      [run.code, run.stderr],
      [2, "tbench: error: can not specify batch size > 1 when using a sequence model\n"],
    );
    assert.deepEqual(
      log.warnings.filter((w) => w.includes("did not end before this sequence start")),
      [],
    );
  });
});
