/**
 * The generation scheduler on a fake pool whose step model is the bundled char_generator's rule (the next
 * token is the one after the input, '~' is followed by end-of-sequence) and whose state counts the steps a
 * stream ran: in-flight batching (joins at the next step, leaves at once), one stream at a time without it,
 * streamed and whole answers, max_tokens, stop strings, cancellation, limits, and the statistics.
 * Each batch waits until the test releases it, so what forms a batch is decided by the test, not by timing.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseModelConfig } from "@tbench/proto";
import { bytesDataFromStrings, bytesDataToStrings } from "../core/bytes-data.js";
import { Cancellation } from "../core/cancel-signal.js";
import type { BytesData, InferenceRequest, InferenceResponse, ResponseSink, Tensor } from "../core/types.js";
import type { InstanceRun } from "../instances/instance-types.js";
import type { InstanceRunResult } from "../instances/worker-protocol.js";
import { validateRequest } from "../lifecycle/request-validation.js";
import { normalizeModelConfig } from "../repository/config-normalize.js";
import { modelSpecFromConfig } from "../repository/model-spec.js";
import { createModelStats } from "../stats/model-stats.js";
import { createFakeClock } from "../testing/fake-clock.js";
import { createGenerationScheduler } from "./generation-scheduler.js";
import { generatorSettings } from "./generator-config.js";
import { createTokenizer } from "./tokenizer.js";

const VOCABULARY = ["</s>", ...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i))];
const tokenizer = createTokenizer({ type: "characters", vocabulary: VOCABULARY, eos_token_id: 0 });
const H = 2;

function spec(maxBatchSize: number, inflight: boolean) {
  const config = parseModelConfig(`
name: "gen"
backend: "tbench_generator"
max_batch_size: ${maxBatchSize}
model_transaction_policy { decoupled: true }
input [
  { name: "text_input" data_type: TYPE_STRING dims: [ 1 ] },
  { name: "stream" data_type: TYPE_BOOL dims: [ 1 ] optional: true },
  { name: "max_tokens" data_type: TYPE_INT32 dims: [ 1 ] optional: true },
  { name: "stop" data_type: TYPE_STRING dims: [ -1 ] optional: true }
]
output [ { name: "text_output" data_type: TYPE_STRING dims: [ 1 ] } ]
parameters { key: "inflight_batching" value: { string_value: "${inflight}" } }
parameters { key: "max_prompt_tokens" value: { string_value: "8" } }
parameters { key: "max_queued_streams" value: { string_value: "3" } }
`);
  normalizeModelConfig(config);
  return modelSpecFromConfig(config);
}

/** A pool whose runs wait for `release()`; each records the input ids of its rows. */
function fakePool() {
  const batches: { ids: number[]; states: number[] }[] = [];
  const waiting: (() => void)[] = [];
  let busy = false;
  const pool = {
    hasIdle: () => !busy,
    run(batch: InstanceRun): Promise<InstanceRunResult> {
      busy = true;
      const ids = Array.from(batch.inputs[0]!.data as BigInt64Array, Number);
      const state = batch.inputs[1]!.data as Float32Array;
      batches.push({ ids, states: ids.map((_, i) => state[i * H]!) });
      return new Promise((resolve) => {
        waiting.push(() => {
          busy = false;
          const logits = new Float32Array(ids.length * VOCABULARY.length);
          const next = new Float32Array(ids.length * H);
          ids.forEach((id, i) => {
            const successor = id >= 1 && id < 95 ? id + 1 : 0;
            logits[i * VOCABULARY.length + successor] = 8;
            next[i * H] = state[i * H]! + 1;
          });
          resolve({
            outputs: [
              { name: "logits", ortType: "float32", dims: [ids.length, VOCABULARY.length], data: logits },
              { name: "state_out", ortType: "float32", dims: [ids.length, H], data: next },
            ],
            inputNs: 1,
            inferNs: 10,
            outputNs: 1,
          });
        });
      });
    },
    close: async () => {},
  };
  /** Lets the oldest running batch finish, then lets the scheduler react. */
  const release = async () => {
    waiting.shift()?.();
    for (let i = 0; i < 5; i++) await Promise.resolve();
    await new Promise((r) => setImmediate(r));
  };
  return { pool, batches, release, running: () => waiting.length };
}

/** A sink that keeps what it is told. */
function recordingSink() {
  const texts: string[] = [];
  const finals: boolean[] = [];
  const reasons: unknown[] = [];
  let ended = false;
  let error: unknown;
  const sink: ResponseSink = {
    response(response: InferenceResponse, final: boolean) {
      texts.push(bytesDataToStrings(response.outputs[0]!.data as BytesData)[0]!);
      finals.push(final);
      reasons.push(response.parameters?.finish_reason);
      if (final) ended = true;
    },
    end: () => {
      ended = true;
    },
    error: (e) => {
      error = e;
    },
  };
  return {
    sink,
    texts,
    finals,
    reasons,
    get ended() {
      return ended;
    },
    get error() {
      return error;
    },
  };
}

function setup(options: { maxBatchSize?: number; inflight?: boolean } = {}) {
  const modelSpec = spec(options.maxBatchSize ?? 4, options.inflight ?? true);
  const pool = fakePool();
  const stats = createModelStats("gen", "1");
  const clock = createFakeClock();
  const scheduler = createGenerationScheduler({
    spec: modelSpec,
    version: "1",
    settings: generatorSettings(modelSpec, true),
    tokenizer,
    stateSize: H,
    pool: pool.pool,
    clock,
    stats,
  });
  const submit = (
    prompt: string,
    fields: { stream?: boolean; maxTokens?: number; stop?: string[]; signal?: Cancellation } = {},
  ) => {
    const recorder = recordingSink();
    const inputs: Tensor[] = [
      { name: "text_input", datatype: "BYTES", shape: [1, 1], data: bytesDataFromStrings([prompt]) },
    ];
    if (fields.stream !== undefined)
      inputs.push({
        name: "stream",
        datatype: "BOOL",
        shape: [1, 1],
        data: Uint8Array.of(fields.stream ? 1 : 0),
      });
    if (fields.maxTokens !== undefined)
      inputs.push({
        name: "max_tokens",
        datatype: "INT32",
        shape: [1, 1],
        data: Int32Array.of(fields.maxTokens),
      });
    if (fields.stop !== undefined)
      inputs.push({
        name: "stop",
        datatype: "BYTES",
        shape: [1, fields.stop.length],
        data: bytesDataFromStrings(fields.stop),
      });
    const request: InferenceRequest = {
      model: "gen",
      inputs,
      ...(fields.signal ? { signal: fields.signal } : {}),
    };
    scheduler.submitStream!(validateRequest(modelSpec, request), clock.nowNs(), recorder.sink);
    return recorder;
  };
  const settle = () => new Promise((r) => setImmediate(r));
  return { scheduler, submit, pool, stats, settle };
}

describe("generation scheduler", () => {
  it("streams one response per token, the last flagged final with its finish_reason; the prompt runs first, a token per step", async () => {
    const { submit, pool, settle } = setup();
    const a = submit("xy", { stream: true, maxTokens: 3 });
    await settle();
    for (let i = 0; i < 5; i++) await pool.release();
    assert.deepEqual(a.texts, ["z", "{", "|"]);
    assert.deepEqual(a.finals, [false, false, true]);
    assert.deepEqual(a.reasons, [undefined, undefined, "length"]);
    assert.equal(a.ended, true);
    // x (the prompt's first token: its logits unused), y (gives z), then z and { (give { and |).
    assert.deepEqual(
      pool.batches.map((b) => b.ids),
      [[89], [90], [91], [92]],
    );
    // The state carried from step to step: the fake model counts the steps.
    assert.deepEqual(
      pool.batches.map((b) => b.states[0]),
      [0, 1, 2, 3],
    );
  });

  it("without stream: one final response with the prompt and its continuation, ended at end-of-sequence", async () => {
    const { submit, pool, settle } = setup();
    const a = submit("{", { maxTokens: 10 });
    await settle();
    for (let i = 0; i < 6; i++) await pool.release();
    assert.deepEqual(a.texts, ["{|}~"]);
    assert.deepEqual(a.finals, [true]);
    assert.deepEqual(a.reasons, ["stop"]);
  });

  it("in-flight batching: a request joins at the next step and a finished one leaves at once", async () => {
    const { submit, pool, settle } = setup();
    const a = submit("a", { stream: true, maxTokens: 2 });
    await settle();
    assert.deepEqual(pool.batches.at(-1)?.ids, [66]);
    const b = submit("k", { stream: true, maxTokens: 3 });
    await settle();
    assert.equal(pool.batches.length, 1, "b waits for the running step");
    await pool.release();
    assert.deepEqual(pool.batches.at(-1)?.ids, [67, 76], "b joined the second step");
    await pool.release();
    assert.equal(a.ended, true);
    assert.deepEqual(pool.batches.at(-1)?.ids, [77], "a left; b runs alone");
    await pool.release();
    await pool.release();
    assert.deepEqual(a.texts, ["b", "c"]);
    assert.deepEqual(b.texts, ["l", "m", "n"]);
  });

  it("max_batch_size bounds a step; the rest wait their turn", async () => {
    const { submit, pool, settle } = setup({ maxBatchSize: 2 });
    const streams = ["a", "b", "c"].map((p) => submit(p, { stream: true, maxTokens: 1 }));
    await settle();
    assert.deepEqual(pool.batches[0]?.ids, [66, 67]);
    await pool.release();
    assert.deepEqual(pool.batches[1]?.ids, [68], "c waited for a place");
    await pool.release();
    assert.deepEqual(
      streams.map((s) => s.texts),
      [["b"], ["c"], ["d"]],
    );
  });

  it("without in-flight batching one stream runs to its end before the next starts", async () => {
    const { submit, pool, settle } = setup({ inflight: false });
    const a = submit("a", { stream: true, maxTokens: 2 });
    const b = submit("k", { stream: true, maxTokens: 1 });
    await settle();
    for (let i = 0; i < 4; i++) await pool.release();
    assert.deepEqual(
      pool.batches.map((x) => x.ids),
      [[66], [67], [76]],
    );
    assert.equal(a.ended && b.ended, true);
  });

  it("a stop string ends the text before it; streamed text holds back what could start one", async () => {
    const { submit, pool, settle } = setup();
    const whole = submit("a", { maxTokens: 20, stop: ["ef"] });
    const streamed = submit("a", { stream: true, maxTokens: 20, stop: ["ef"] });
    await settle();
    for (let i = 0; i < 8; i++) await pool.release();
    assert.deepEqual(whole.texts, ["abcd"]);
    // "d" was safe to send; "e" was held back, and "f" made the stop string: the final response is empty.
    assert.deepEqual(streamed.texts, ["b", "c", "d", ""]);
    assert.deepEqual(streamed.reasons.at(-1), "stop");
    assert.equal(streamed.ended, true);
  });

  it("a cancelled stream leaves at the next step and fails CANCELLED; the others go on", async () => {
    const { submit, pool, settle, stats } = setup();
    const cancel = new Cancellation();
    const a = submit("a", { stream: true, maxTokens: 5, signal: cancel });
    const b = submit("a", { stream: true, maxTokens: 3 });
    await settle();
    await pool.release();
    // The second step (both streams) is running: a is cancelled during it and leaves when it ends.
    cancel.abort();
    await pool.release();
    assert.match(String((a.error as Error)?.message), /request was cancelled/);
    assert.deepEqual(pool.batches.at(-1)?.ids, [68], "only b ran the next step");
    for (let i = 0; i < 3; i++) await pool.release();
    assert.deepEqual(b.texts, ["b", "c", "d"]);
    const s = stats.statistics();
    assert.equal(s.inference_stats.fail.count, 1);
    assert.equal(s.inference_stats.success.count, 1);
    assert.equal(s.inference_count, 2, "a request counts once, however many steps it ran");
    // Per response index: both sent two (a's second came from the step it was cancelled in), then b its
    // third while a was cancelled waiting for its own.
    const r = s.response_stats;
    assert.deepEqual(Object.keys(r), ["0", "1", "2"]);
    assert.deepEqual(
      ["0", "1", "2"].map((k) => r[k]!.success.count),
      [2, 2, 1],
    );
    assert.deepEqual(
      ["0", "1", "2"].map((k) => [r[k]!.cancel.count, r[k]!.fail.count, r[k]!.compute_output.count]),
      [
        [0, 0, 2],
        [0, 0, 2],
        [1, 0, 1],
      ],
    );
  });

  it("refuses bad requests with what was expected and given, and too many waiting streams", async () => {
    const { submit, settle } = setup({ maxBatchSize: 1 });
    const long = submit("123456789");
    assert.match(String((long.error as Error).message), /9 tokens, more than the 8 allowed/);
    const unknown = submit("héllo");
    assert.match(String((unknown.error as Error).message), /no token for "é"/);
    const tooMany = submit("a", { maxTokens: 5000 });
    assert.match(
      String((tooMany.error as Error).message),
      /'max_tokens' must be an integer in \[0, 4096\], got 5000/,
    );
    const held = [submit("a")];
    await settle();
    held.push(submit("a"), submit("a"), submit("a"));
    // One runs; three wait (max_queued_streams 3); the fifth is refused.
    const refused = submit("a");
    assert.match(String((refused.error as Error).message), /Exceeds the limit of 3 streams waiting/);
    assert.equal(held.filter((s) => s.error !== undefined).length, 0);
  });
});
