// Poll mode's time to first answer, one round: tbench-server in a child process with
// `--model-control-mode poll --repository-poll-secs S` on a temporary copy of `simple` (version 1); once
// version 1 answers, a version directory 2/ (a copy of model.onnx) appears in the model's directory, and
// the round measures from that moment to the first correct answer from /v2/models/simple/versions/2/infer,
// asked every few ms. The directory is written beside the repository and renamed in, so it appears whole
// (a scan never sees half a file) and "the copy finished" is one instant.
import { cp, mkdir, mkdtemp, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ROOT, startTbenchServer } from "@tbench/bench-kit";
import { createHttpClient, InferenceError } from "@tbench/client";

export const POLL_MODEL = "simple";
const MODEL_SOURCE = join(ROOT, "examples/models", POLL_MODEL);
/** Time between two tries of version 2 (after an answer, refused or not). */
export const ASK_EVERY_MS = 5;
/** How long version 1 may take to become ready after the server listens. */
const START_TIMEOUT_MS = 30_000;

export interface PollRoundOptions {
  pollSecs: number;
  /** Wait after version 1 answers, before version 2 appears: spreads the rounds over the scan's phase. */
  staggerMs: number;
  /** Give up on version 2 after this long. */
  timeoutMs: number;
}

export interface PollRound {
  staggerMs: number;
  /** From the rename of 2/ into place to the first correct answer from version 2; null: none in time. */
  firstAnswerMs: number | null;
  /** Requests to version 2 before (and including) the first answer. */
  tries: number;
  /** The refusals on the way, by error code and HTTP status (e.g. "NOT_FOUND 404"). */
  refusals: Record<string, number>;
  /** Why the round has no figure, when it has none. */
  failure: string | null;
}

const INPUT0 = Int32Array.from({ length: 16 }, (_, i) => i);
const INPUT1 = Int32Array.from({ length: 16 }, () => 1);

export async function measurePollRound(options: PollRoundOptions): Promise<PollRound> {
  const work = await mkdtemp(join(tmpdir(), "tbench-bench-poll-"));
  const modelDir = join(work, "repository", POLL_MODEL);
  await cp(MODEL_SOURCE, modelDir, { recursive: true });
  await rm(join(modelDir, "2"), { recursive: true, force: true });
  const server = await startTbenchServer({
    repository: join(work, "repository"),
    args: ["--model-control-mode", "poll", "--repository-poll-secs", String(options.pollSecs)],
  });
  const client = createHttpClient({ url: server.httpUrl, connections: 1 });
  const refusals: Record<string, number> = {};
  let tries = 0;
  const end = (firstAnswerMs: number | null, failure: string | null): PollRound => ({
    staggerMs: options.staggerMs,
    firstAnswerMs,
    tries,
    refusals,
    failure,
  });
  try {
    const startBy = performance.now() + START_TIMEOUT_MS;
    while (!(await client.isModelReady(POLL_MODEL, "1"))) {
      if (performance.now() > startBy) {
        return end(
          null,
          `version 1 of ${POLL_MODEL} not ready ${START_TIMEOUT_MS} ms after the server listened`,
        );
      }
      await sleep(ASK_EVERY_MS);
    }
    await sleep(options.staggerMs);

    const staged = join(work, "staging", "2");
    await mkdir(staged, { recursive: true });
    await cp(join(modelDir, "1", "model.onnx"), join(staged, "model.onnx"));
    await rename(staged, join(modelDir, "2"));
    const appeared = performance.now();

    while (performance.now() - appeared < options.timeoutMs) {
      tries++;
      try {
        const result = await client.infer(POLL_MODEL, {
          modelVersion: "2",
          inputs: [
            { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: INPUT0 },
            { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: INPUT1 },
          ],
        });
        const answeredMs = performance.now() - appeared;
        const sum = result.output("OUTPUT0")?.as("INT32");
        const right = sum !== undefined && INPUT0.every((a, i) => sum[i] === a + INPUT1[i]!);
        if (result.modelVersion !== "2" || !right) {
          const failure =
            `version 2 of ${POLL_MODEL}: expected OUTPUT0 = INPUT0 + INPUT1 from version 2, got version ` +
            `${result.modelVersion} with [${sum?.join(", ")}]`;
          return end(null, failure);
        }
        return end(answeredMs, null);
      } catch (error) {
        if (!(error instanceof InferenceError)) throw error;
        const key = `${error.code} ${error.status ?? "-"}`;
        refusals[key] = (refusals[key] ?? 0) + 1;
      }
      await sleep(ASK_EVERY_MS);
    }
    return end(
      null,
      `no answer from version 2 within ${options.timeoutMs} ms; server log:\n${server.log().slice(-1500)}`,
    );
  } finally {
    await client.close();
    await server.close();
    await rm(work, { recursive: true, force: true });
  }
}
