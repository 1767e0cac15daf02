/**
 * The generation backend's scheduler: every request is a stream that runs the step model once per token
 * (its prompt's tokens first, then each token it generates), its recurrent state carried from step to step.
 * With in-flight batching, each step is one batch of every live stream that is not already running, oldest
 * first, up to max_batch_size: a new request joins at the next step and a finished or cancelled one leaves
 * at once (continuous batching). Without it, one stream runs at a time to its end. A stream answers a
 * response per generated token (`stream` true; the last, flagged final, has what text was held back, maybe
 * none) or one with the whole text at its end.
 * It ends at the end-of-sequence token, at max_tokens, or when its text reaches a stop string (left out of
 * the text; a streamed response holds back what could be the start of one). Every response carries the
 * request's token counts so far as parameters `prompt_tokens` and `completion_tokens`; the final one also
 * `finish_reason`, `stop` (end-of-sequence token or stop string) or `length` (max_tokens), as OpenAI names them.
 */
import { datatypeInfo } from "@tbench/proto";
import { bytesDataFromStrings } from "../core/bytes-data.js";
import type { Clock } from "../core/clock.js";
import { logRequest } from "../core/log-request.js";
import { DecoupledModelError, ServerError } from "../core/server-error.js";
import type { InferenceResponse, ResponseSink } from "../core/types.js";
import type { InstancePool } from "../instances/instance-pool.js";
import type { ThreadTensor } from "../instances/worker-protocol.js";
import type { ModelSpec } from "../repository/model-spec.js";
import type { InstanceScheduler, ValidatedRequest } from "../scheduler/scheduler.js";
import type { ExecutionTimes, FailureReason, ModelStatsCollector } from "../stats/model-stats.js";
import {
  type GenerationOptions,
  type GeneratorSettings,
  generationOptions,
  STEP_IO,
  TEXT_OUTPUT,
} from "./generator-config.js";
import { createSampler, type Sampler } from "./sampler.js";
import type { Tokenizer } from "./tokenizer.js";

export interface GenerationSchedulerOptions {
  readonly spec: ModelSpec;
  readonly version: string;
  readonly settings: GeneratorSettings;
  readonly tokenizer: Tokenizer;
  /** Elements of one stream's state (the step model's `state` width). */
  readonly stateSize: number;
  readonly pool: Pick<InstancePool, "hasIdle" | "run" | "close">;
  readonly clock: Clock;
  readonly stats: ModelStatsCollector;
  /** Most streams waiting at once (--max-pending-requests; 0 or undefined: the config's max_queued_streams). */
  readonly maxPendingRequests?: number | undefined;
}

/** Why a stream ended, in OpenAI's words. */
type FinishReason = "stop" | "length";

interface Stream {
  readonly request: ValidatedRequest["request"];
  readonly options: GenerationOptions;
  readonly sink: ResponseSink;
  readonly startNs: number;
  readonly enqueueNs: number;
  readonly sampler: Sampler;
  /** How many tokens the request's text_input has (0 for an empty one). */
  readonly promptTokens: number;
  /** The prompt's token ids; `position` is the next one to feed. */
  readonly prompt: readonly number[];
  position: number;
  /** The token fed at the next step once the prompt is in. */
  lastToken: number;
  readonly state: Float32Array;
  generatedTokens: number;
  /** Every generated character so far (stop strings are matched against it). */
  text: string;
  /** How much of `text` has been sent (streaming). */
  sent: number;
  running: boolean;
  /** It has run a step (it no longer waits); `firstStepNs` is when (queue time ends there). */
  started: boolean;
  firstStepNs: number;
  /** The index of its next response, and when the time to make it began (the previous one's end). */
  responses: number;
  responseStartNs: number;
  times: { computeInputNs: number; computeInferNs: number; computeOutputNs: number };
  done: boolean;
}

const INT64 = datatypeInfo("INT64")!.ortType!;
const FP32 = datatypeInfo("FP32")!.ortType!;

/** The longest suffix of `text` that starts one of `stops` (held back from a streamed response). */
function heldBack(text: string, stops: readonly string[]): number {
  let held = 0;
  for (const stop of stops) {
    for (let n = Math.min(stop.length - 1, text.length); n > held; n--) {
      if (text.endsWith(stop.slice(0, n))) {
        held = n;
        break;
      }
    }
  }
  return held;
}

export function createGenerationScheduler(options: GenerationSchedulerOptions): InstanceScheduler {
  const { spec, version, settings, tokenizer, pool, clock, stats, stateSize } = options;
  const model = spec.name;
  const batching = spec.maxBatchSize > 0;
  const maxQueued =
    options.maxPendingRequests !== undefined && options.maxPendingRequests > 0
      ? options.maxPendingRequests
      : settings.maxQueuedStreams;
  /** Live streams, oldest first. */
  const streams: Stream[] = [];
  let running = 0;
  let stopping = false;
  let abandoned: ServerError | undefined;
  let passScheduled = false;
  const drainWaiters: (() => void)[] = [];
  stats.setPendingCounter(() => streams.filter((s) => !s.started).length);

  const checkDrained = () => {
    if (streams.length === 0 && running === 0) for (const waiter of drainWaiters.splice(0)) waiter();
  };

  const remove = (stream: Stream) => {
    stream.done = true;
    const at = streams.indexOf(stream);
    if (at >= 0) streams.splice(at, 1);
  };

  const fail = (stream: Stream, error: unknown, reason: FailureReason) => {
    if (stream.done) return;
    remove(stream);
    const now = clock.nowNs();
    stats.requestFailed(now - stream.startNs, reason, clock.epochMs());
    stats.responseFailed(stream.responses, now - stream.responseStartNs, reason === "CANCELED");
    stream.sink.error(error);
  };

  const response = (stream: Stream, text: string, finishReason?: FinishReason): InferenceResponse => {
    const id = stream.request.id;
    return {
      model,
      version,
      ...(id !== undefined && id !== "" ? { id } : {}),
      // Token counts so far (usage): what an OpenAI-style answer reports and tbench reads per response.
      parameters: {
        prompt_tokens: stream.promptTokens,
        completion_tokens: stream.generatedTokens,
        ...(finishReason !== undefined ? { finish_reason: finishReason } : {}),
      },
      outputs: [
        {
          name: TEXT_OUTPUT,
          datatype: "BYTES",
          shape: batching ? [1, 1] : [1],
          data: bytesDataFromStrings([text]),
        },
      ],
    };
  };

  /** Sends one response of `stream` and counts it in the response statistics at its index. */
  const send = (stream: Stream, text: string, final: boolean, reason?: FinishReason) => {
    const outputStartNs = clock.nowNs();
    stream.sink.response(response(stream, text, reason), final);
    const endNs = clock.nowNs();
    stats.responseSent(stream.responses++, {
      computeInferNs: outputStartNs - stream.responseStartNs,
      computeOutputNs: endNs - outputStartNs,
    });
    stream.responseStartNs = endNs;
  };

  /**
   * Ends `stream` with one final response: streamed, the text not yet sent (possibly empty, so the final
   * counts and the reason always arrive); whole, all of it.
   */
  const finish = (stream: Stream, text: string, reason: FinishReason) => {
    remove(stream);
    const now = clock.nowNs();
    const queueNs = (stream.started ? stream.firstStepNs : now) - stream.enqueueNs;
    stats.requestSucceeded(now - stream.startNs, queueNs, stream.times, clock.epochMs());
    if (stream.options.stream) {
      send(stream, text.slice(stream.sent), true, reason);
      return;
    }
    const prefix = stream.options.excludeInput ? "" : stream.options.prompt;
    send(stream, prefix + text, true, reason);
  };

  /** Takes the step's token for `stream`: ends it, or adds the token's text (and streams what is safe). */
  const advance = (stream: Stream, token: number) => {
    if (token === tokenizer.eosTokenId) {
      finish(stream, stream.text, "stop");
      return;
    }
    stream.generatedTokens++;
    stream.lastToken = token;
    stream.text += tokenizer.decode(token);
    for (const stop of stream.options.stop) {
      const at = stream.text.indexOf(
        stop,
        Math.max(0, stream.text.length - tokenizer.decode(token).length - stop.length),
      );
      if (at >= 0) {
        finish(stream, stream.text.slice(0, at), "stop");
        return;
      }
    }
    if (stream.generatedTokens >= stream.options.maxTokens) {
      finish(stream, stream.text, "length");
      return;
    }
    if (stream.options.stream) {
      const safe = stream.text.length - heldBack(stream.text, stream.options.stop);
      if (safe > stream.sent) {
        send(stream, stream.text.slice(stream.sent, safe), false);
        stream.sent = safe;
      }
    }
  };

  const dispatch = (batch: Stream[]) => {
    const dispatchNs = clock.nowNs();
    const t0 = performance.now();
    const rows = batch.length;
    const ids = new BigInt64Array(rows);
    const state = new Float32Array(rows * stateSize);
    let joined = 0;
    for (const [i, stream] of batch.entries()) {
      stream.running = true;
      if (!stream.started) {
        stream.started = true;
        stream.firstStepNs = dispatchNs;
        stream.responseStartNs = dispatchNs;
        joined++;
      }
      const prefilling = stream.position < stream.prompt.length;
      ids[i] = BigInt(prefilling ? stream.prompt[stream.position]! : stream.lastToken);
      state.set(stream.state, i * stateSize);
    }
    const inputs: ThreadTensor[] = [
      { name: STEP_IO.inputIds, ortType: INT64, dims: [rows, 1], data: ids },
      { name: STEP_IO.state, ortType: FP32, dims: [rows, stateSize], data: state },
    ];
    const assembleNs = (performance.now() - t0) * 1e6;
    running++;
    pool
      .run({ inputs, outputNames: [STEP_IO.logits, STEP_IO.stateOut], transfer: [ids.buffer, state.buffer] })
      .then((result) => {
        const t1 = performance.now();
        const logits = result.outputs.find((o) => o.name === STEP_IO.logits)?.data;
        const next = result.outputs.find((o) => o.name === STEP_IO.stateOut)?.data;
        if (!(logits instanceof Float32Array) || !(next instanceof Float32Array)) {
          throw new ServerError(
            "INTERNAL",
            `the step model of '${model}' returned no FP32 '${STEP_IO.logits}' or '${STEP_IO.stateOut}'`,
          );
        }
        const width = logits.length / rows;
        const times: ExecutionTimes = {
          computeInputNs: assembleNs + result.inputNs,
          computeInferNs: result.inferNs,
          computeOutputNs: result.outputNs + (performance.now() - t1) * 1e6,
        };
        stats.executed(rows, times, joined);
        for (const [i, stream] of batch.entries()) {
          stream.running = false;
          stream.times.computeInputNs += times.computeInputNs / rows;
          stream.times.computeInferNs += times.computeInferNs / rows;
          stream.times.computeOutputNs += times.computeOutputNs / rows;
          if (stream.done) continue;
          stream.state.set(next.subarray(i * stateSize, (i + 1) * stateSize));
          if (stream.position < stream.prompt.length) stream.position++;
          // Still feeding the prompt: the logits of a token that is not the last one are not used.
          if (stream.position < stream.prompt.length) continue;
          advance(stream, stream.sampler(logits.subarray(i * width, (i + 1) * width)));
        }
      })
      .catch((error: unknown) => {
        for (const stream of batch) {
          stream.running = false;
          fail(stream, error, "BACKEND");
        }
      })
      .finally(() => {
        running--;
        schedulePass();
        checkDrained();
      });
  };

  const pass = () => {
    passScheduled = false;
    for (const stream of [...streams]) {
      if (!stream.running && stream.request.signal?.aborted === true) {
        fail(
          stream,
          new ServerError("CANCELLED", `${logRequest(stream.request)}request was cancelled`),
          "CANCELED",
        );
      }
    }
    while (pool.hasIdle()) {
      const ready = streams.filter((s) => !s.running);
      if (ready.length === 0) break;
      // Without in-flight batching the oldest stream runs alone until it ends: while it runs, nothing else does.
      if (!settings.inflightBatching && streams[0]!.running) break;
      dispatch(ready.slice(0, settings.inflightBatching ? settings.maxBatch : 1));
    }
    checkDrained();
  };

  function schedulePass(): void {
    if (passScheduled) return;
    passScheduled = true;
    queueMicrotask(pass);
  }

  const refuse = (
    sink: ResponseSink,
    startNs: number,
    error: ServerError,
    reason: FailureReason = "OTHER",
  ) => {
    stats.requestFailed(clock.nowNs() - startNs, reason, clock.epochMs());
    sink.error(error);
  };

  const abandon = (error: ServerError) => {
    if (abandoned) return;
    abandoned = error;
    for (const stream of [...streams]) if (!stream.running) fail(stream, error, "BACKEND");
    checkDrained();
  };

  const drain = () => {
    stopping = true;
    return new Promise<void>((resolve) => {
      drainWaiters.push(resolve);
      schedulePass();
    });
  };
  let closing: Promise<void> | undefined;

  return {
    submit: () => Promise.reject(new DecoupledModelError(model)),
    submitStream(validated, startNs, sink) {
      if (abandoned) return refuse(sink, startNs, new ServerError(abandoned.status, abandoned.message));
      if (stopping) {
        return refuse(
          sink,
          startNs,
          new ServerError(
            "UNAVAILABLE",
            "Server is stopping, scheduler for model has stopped accepting new inference requests",
          ),
        );
      }
      if (batching && validated.batchSize !== 1) {
        return refuse(
          sink,
          startNs,
          new ServerError(
            "INVALID_ARG",
            `inference request to model '${model}' must specify batch-size 1: each request is one generation stream`,
          ),
        );
      }
      let options: GenerationOptions;
      let prompt: number[];
      try {
        options = generationOptions(validated, settings, model);
        prompt = tokenizer.encode(options.prompt);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        return refuse(
          sink,
          startNs,
          error instanceof ServerError
            ? error
            : new ServerError("INVALID_ARG", `text_input of request to model '${model}': ${message}`),
        );
      }
      if (prompt.length > settings.maxPromptTokens) {
        return refuse(
          sink,
          startNs,
          new ServerError(
            "INVALID_ARG",
            `text_input of request to model '${model}' is ${prompt.length} tokens, more than the ${settings.maxPromptTokens} allowed (parameter max_prompt_tokens)`,
          ),
        );
      }
      const waiting = streams.filter((s) => !s.started).length;
      if (waiting >= maxQueued) {
        return refuse(
          sink,
          startNs,
          new ServerError(
            "UNAVAILABLE",
            `${logRequest(validated.request)}Exceeds the limit of ${maxQueued} streams waiting for model '${model}'`,
          ),
          "REJECTED",
        );
      }
      const now = clock.nowNs();
      const stream: Stream = {
        request: validated.request,
        options,
        sink,
        startNs,
        enqueueNs: now,
        sampler: createSampler(options.temperature, options.seed),
        promptTokens: prompt.length,
        // An empty prompt starts from the end-of-sequence token, as a beginning-of-text marker.
        prompt: prompt.length > 0 ? prompt : [tokenizer.eosTokenId],
        position: 0,
        lastToken: tokenizer.eosTokenId,
        state: new Float32Array(stateSize),
        generatedTokens: 0,
        text: "",
        sent: 0,
        running: false,
        started: false,
        firstStepNs: 0,
        responses: 0,
        // Until its first step: a stream that ends before it runs counts from its arrival.
        responseStartNs: now,
        times: { computeInputNs: 0, computeInferNs: 0, computeOutputNs: 0 },
        done: false,
      };
      streams.push(stream);
      if (options.maxTokens === 0) {
        finish(stream, "", "length");
        return;
      }
      validated.request.signal?.addEventListener("abort", schedulePass, { once: true });
      schedulePass();
    },
    instanceIdle: schedulePass,
    abandon,
    close() {
      closing ??= drain().then(() => pool.close());
      return closing;
    },
    destroy() {
      stopping = true;
      const error = new ServerError("UNAVAILABLE", "Server is stopping");
      for (const stream of [...streams]) fail(stream, error, "BACKEND");
      return pool.close();
    },
  };
}
