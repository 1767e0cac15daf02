import type { InferInput, InferRequest, InferResult } from "@tbench/client";
import { checkExpected } from "./infer-sender.js";
import type { RequestData } from "./input-data.js";
import type { RequestSender } from "./request-sender.js";

/** What the stream sender needs of one gRPC stream (`InferStream` of `@tbench/client`). */
export interface LoadStream extends AsyncIterable<unknown> {
  prepare(request: { inputs: readonly InferInput[]; modelVersion?: string }): {
    send(): Promise<InferResult>;
  };
  /** Encodes and sends one request (a step of a sequence: its id and flags differ each time). */
  infer(request: InferRequest): Promise<InferResult>;
  end(): void;
  cancel(reason?: unknown): void;
}

/** What the stream sender needs of the client (`GrpcInferenceClient` of `@tbench/client`). */
export interface StreamingClient {
  stream(model: string): LoadStream;
  close(): Promise<void>;
}

/** Options of {@link createStreamSender}. */
export interface StreamSenderOptions {
  client: StreamingClient;
  model: string;
  modelVersion: string | undefined;
  requests: readonly RequestData[];
  /**
   * Streams opened at most. In concurrency mode this is the number of contexts, so each request in flight
   * has a stream of its own (perf_analyzer: one stream per context); past it (rate mode) requests share the
   * stream with the fewest in flight.
   */
  maxStreams: number;
  /** Close the client when the sender is closed (true when the sender created it). */
  ownsClient: boolean;
}

interface StreamSlot {
  readonly stream: LoadStream;
  /** Each distinct request, encoded once for this stream. */
  readonly prepared: readonly { send(): Promise<InferResult> }[];
  inFlight: number;
  /** The stream ended or failed: never used again. */
  dead: boolean;
}

/**
 * Sends infer requests over bidirectional ModelStreamInfer streams (`--streaming`). A request takes an idle
 * stream (one with nothing in flight), or opens one while fewer than `maxStreams` are open, so under a
 * closed loop of N contexts exactly N streams carry one request each at a time, as perf_analyzer's contexts
 * do. Each request's promise is its own answer (`prepare(...).send()`), so latency runs from its write to
 * its answer, and an error answer rejects that request only, counted like a unary error. A stream that
 * fails (its iterator ends or throws) is dropped; the next request opens a new one.
 */
export function createStreamSender(options: StreamSenderOptions): RequestSender {
  const { client, requests } = options;
  if (!(options.maxStreams >= 1)) throw new Error(`maxStreams must be >= 1, got ${options.maxStreams}`);
  const count = requests.length;
  const slots: StreamSlot[] = [];
  const idle: StreamSlot[] = [];
  let closed = false;

  function open(): StreamSlot {
    const stream = client.stream(options.model);
    const prepared = requests.map((request) =>
      stream.prepare({
        inputs: request.inputs as unknown as InferInput[],
        ...(options.modelVersion !== undefined ? { modelVersion: options.modelVersion } : {}),
      }),
    );
    const slot: StreamSlot = { stream, prepared, inFlight: 0, dead: false };
    // Answers of prepare().send() are never yielded; the iterator only tells when the stream is over.
    void (async () => {
      try {
        for await (const _ of stream) {
          // nothing is written with write(), so nothing arrives here
        }
      } catch {
        // the requests in flight reject on their own and are counted there
      }
      retire(slot);
    })();
    slots.push(slot);
    return slot;
  }

  function retire(slot: StreamSlot): void {
    slot.dead = true;
    const at = slots.indexOf(slot);
    if (at >= 0) slots.splice(at, 1);
    const idleAt = idle.indexOf(slot);
    if (idleAt >= 0) idle.splice(idleAt, 1);
  }

  function pick(): StreamSlot {
    const free = idle.pop();
    if (free !== undefined) return free;
    if (slots.length < options.maxStreams) return open();
    let best = slots[0]!;
    for (const slot of slots) if (slot.inFlight < best.inFlight) best = slot;
    return best;
  }

  function release(slot: StreamSlot): void {
    slot.inFlight -= 1;
    if (slot.inFlight === 0 && !slot.dead && !closed) idle.push(slot);
  }

  return {
    send(index, sequence) {
      if (closed) return Promise.reject(new Error("the stream sender is closed"));
      const slot = pick();
      const data = index % count;
      let sent: Promise<InferResult>;
      try {
        sent =
          sequence === undefined
            ? slot.prepared[data]!.send()
            : slot.stream.infer({
                inputs: requests[data]!.inputs as unknown as InferInput[],
                ...(options.modelVersion !== undefined ? { modelVersion: options.modelVersion } : {}),
                sequenceId: sequence.id,
                sequenceStart: sequence.start,
                sequenceEnd: sequence.end,
              });
      } catch (error) {
        // A stream that refuses a write is over (ended or cancelled): the next request opens a new one.
        retire(slot);
        return Promise.reject(error);
      }
      slot.inFlight += 1;
      const expected = requests[data]?.expected;
      return sent.then(
        (result) => {
          release(slot);
          if (expected !== undefined) checkExpected(result, expected);
        },
        (error: unknown) => {
          release(slot);
          throw error;
        },
      );
    },
    async close() {
      if (closed) return;
      closed = true;
      idle.length = 0;
      // Half-close: each stream ends once its requests in flight are answered (the load stopped first).
      for (const slot of slots) slot.stream.end();
      if (options.ownsClient) await client.close();
    },
  };
}
