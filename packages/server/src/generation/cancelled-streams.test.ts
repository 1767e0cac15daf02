/**
 * Nothing outlives a cancelled stream: 10,000 generation streams on the bundled char_generator, each
 * cancelled (its signal aborted, as a front end aborts it when the client goes away), some before their
 * first step and some mid-stream, through the real core and step model. Afterwards the scheduler holds no
 * stream (the pending count is 0 and a new request is served at once), every one of them was answered with
 * CANCELLED, the process holds no more handles than before, and the heap has not grown with the count.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { BUNDLED_MODEL_REPOSITORY } from "@tbench/model-builder";
import { bytesDataFromStrings, bytesDataToStrings } from "../core/bytes-data.js";
import { Cancellation } from "../core/cancel-signal.js";
import type { BytesData, InferenceCore, InferenceRequest, InferenceResponse } from "../core/types.js";
import { type RunningServer, startServer } from "../server.js";
import { createRecordingLogger } from "../testing/test-fixtures.js";

const MODEL = "char_generator";

// A full collection before each heap reading, so that garbage not yet collected is not taken for a leak.
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const STREAMS = 10_000;

function request(signal: Cancellation, maxTokens: number): InferenceRequest {
  return {
    model: MODEL,
    inputs: [
      { name: "text_input", datatype: "BYTES", shape: [1, 1], data: bytesDataFromStrings([" "]) },
      { name: "stream", datatype: "BOOL", shape: [1, 1], data: Uint8Array.of(1) },
      { name: "max_tokens", datatype: "INT32", shape: [1, 1], data: Int32Array.of(maxTokens) },
    ],
    signal,
  };
}

/** Runs one stream; resolves with how it ended and how many responses it got. */
function run(core: InferenceCore, signal: Cancellation, maxTokens: number, cancelAfter: number) {
  return new Promise<{ ended: "end" | "error"; responses: number; error?: string }>((resolve) => {
    let responses = 0;
    if (cancelAfter === 0) signal.abort();
    core.inferStream(request(signal, maxTokens), {
      response(_response: InferenceResponse, final: boolean) {
        responses++;
        if (final) resolve({ ended: "end", responses });
        else if (responses === cancelAfter) signal.abort();
      },
      end: () => resolve({ ended: "end", responses }),
      error: (error) => resolve({ ended: "error", responses, error: (error as Error).message }),
    });
  });
}

describe("10,000 cancelled generation streams", { timeout: 600_000 }, () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({
      modelRepository: BUNDLED_MODEL_REPOSITORY,
      modelControlMode: "explicit",
      loadModels: [MODEL],
      httpPort: 0,
      grpcPort: false,
      metricsPort: false,
      logger: createRecordingLogger(),
    });
  });
  after(async () => {
    await server?.close();
  });

  test("leave nothing behind: no stream held, no handle, no heap growth with the count", async () => {
    const core = server.core;
    // Warm up (the step model, the code paths), then take the baseline.
    await Promise.all(Array.from({ length: 64 }, () => run(core, new Cancellation(), 4000, 2)));
    gc();
    const handlesBefore = process.getActiveResourcesInfo().length;
    const heapBefore = process.memoryUsage().heapUsed;
    let cancelled = 0;
    // In waves of 256 at once: a quarter cancelled before their first step, the rest after 1 to 3 tokens.
    for (let wave = 0; wave < STREAMS / 256; wave++) {
      const outcomes = await Promise.all(
        Array.from({ length: Math.min(256, STREAMS - wave * 256) }, (_, i) =>
          run(core, new Cancellation(), 4000, i % 4),
        ),
      );
      for (const outcome of outcomes) {
        assert.equal(outcome.ended, "error", "a cancelled stream never runs to its 4000 tokens");
        assert.match(outcome.error ?? "", /request was cancelled/);
        cancelled++;
      }
    }
    assert.equal(cancelled, STREAMS);
    const [stats] = core.modelStatistics(MODEL);
    assert.ok(stats !== undefined);
    const snapshot = core.metricsSnapshot().find((m) => m.model === MODEL);
    assert.equal(snapshot?.pendingRequests, 0, "no stream waits");
    // A new stream is served as usual, to its end.
    const text: string[] = [];
    await new Promise<void>((resolve, reject) =>
      core.inferStream(request(new Cancellation(), 3), {
        response: (r, final) => {
          text.push(bytesDataToStrings(r.outputs[0]!.data as BytesData)[0]!);
          if (final) resolve();
        },
        end: resolve,
        error: reject,
      }),
    );
    assert.deepEqual(text, ["!", '"', "#"]);
    gc();
    const handlesAfter = process.getActiveResourcesInfo().length;
    assert.ok(handlesAfter <= handlesBefore, `handles ${handlesBefore} -> ${handlesAfter}`);
    // 10,000 streams that each held a state of H floats, prompt and sampler: leaking even one object per
    // stream of that size would grow the heap by tens of MiB. Allow noise, not that.
    const growthMiB = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
    assert.ok(growthMiB < 16, `heap grew ${growthMiB.toFixed(1)} MiB over ${STREAMS} cancelled streams`);
  });
});
