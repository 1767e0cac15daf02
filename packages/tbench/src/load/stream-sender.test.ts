import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { InferRequest, InferResult } from "@tbench/client";
import type { RequestData } from "./input-data.js";
import { createStreamSender, type LoadStream, type StreamingClient } from "./stream-sender.js";

/** A stream whose answers the test releases by hand, and that it can fail. */
class FakeStream implements LoadStream {
  readonly sent: {
    data: number;
    sequence?: { id: unknown; start: unknown; end: unknown };
    answer(error?: Error): void;
  }[] = [];
  ended = false;
  private finish: ((error?: Error) => void) | undefined;
  private readonly over = new Promise<void>((resolve, reject) => {
    this.finish = (error) => (error === undefined ? resolve() : reject(error));
  });

  prepare(request: { inputs: readonly { name: string }[] }) {
    const data = Number(request.inputs[0]?.name);
    return {
      send: () => {
        if (this.ended) throw new Error("stream is over");
        return new Promise<InferResult>((resolve, reject) => {
          this.sent.push({
            data,
            answer: (error) => (error === undefined ? resolve({} as InferResult) : reject(error)),
          });
        });
      },
    };
  }
  infer(request: InferRequest): Promise<InferResult> {
    if (this.ended) return Promise.reject(new Error("stream is over"));
    return new Promise<InferResult>((resolve, reject) => {
      this.sent.push({
        data: Number(request.inputs[0]?.name),
        sequence: { id: request.sequenceId, start: request.sequenceStart, end: request.sequenceEnd },
        answer: (error) => (error === undefined ? resolve({} as InferResult) : reject(error)),
      });
    });
  }
  end(): void {
    this.ended = true;
    this.finish?.();
  }
  cancel(): void {
    this.fail(new Error("cancelled"));
  }
  fail(error: Error): void {
    this.ended = true;
    for (const request of this.sent.splice(0)) request.answer(error);
    this.finish?.(error);
  }
  // Yields nothing (no write() is used); ends when the stream ends, throws when it fails.
  [Symbol.asyncIterator](): AsyncIterator<unknown> {
    return { next: () => this.over.then(() => ({ done: true, value: undefined })) };
  }
}

function fakeClient(): StreamingClient & { streams: FakeStream[]; closed: boolean } {
  const streams: FakeStream[] = [];
  return {
    streams,
    closed: false,
    stream() {
      const stream = new FakeStream();
      streams.push(stream);
      return stream;
    },
    async close() {
      this.closed = true;
    },
  };
}

// Two distinct requests; the fake reads the data index back from the input's name.
const requests = [0, 1].map(
  (i): RequestData => ({
    inputs: [{ name: String(i), datatype: "INT32", shape: [1], data: [i] }],
    expected: undefined,
  }),
);

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("createStreamSender", () => {
  it("one stream per request in flight, up to maxStreams; a stream is reused once its answer is in", async () => {
    const client = fakeClient();
    const sender = createStreamSender({
      client,
      model: "m",
      modelVersion: undefined,
      requests,
      maxStreams: 3,
      ownsClient: true,
    });
    const first = [0, 1, 2].map((i) => sender.send(i));
    assert.equal(client.streams.length, 3);
    assert.deepEqual(
      client.streams.map((s) => s.sent.map((r) => r.data)),
      [[0], [1], [0]],
      "each request's data by its index, round-robin",
    );
    client.streams[1]!.sent[0]!.answer();
    await first[1];
    const next = sender.send(3);
    assert.equal(client.streams.length, 3, "the idle stream is reused, none opened");
    assert.deepEqual(
      client.streams[1]!.sent.map((r) => r.data),
      [1, 1],
    );
    // Past maxStreams (rate mode), requests share the stream with the fewest in flight.
    client.streams[0]!.sent[0]!.answer();
    await first[0];
    sender.send(4); // the idle stream 0
    sender.send(5); // all three have one in flight: the first
    sender.send(6); // streams 1 and 2 have one, stream 0 two: stream 1
    assert.equal(client.streams.length, 3);
    assert.deepEqual(
      client.streams.map((s) => s.sent.length),
      [3, 3, 1],
    );
    void next;
  });

  it("an error answer rejects its own request only; a failed stream is replaced by a new one", async () => {
    const client = fakeClient();
    const sender = createStreamSender({
      client,
      model: "m",
      modelVersion: "2",
      requests,
      maxStreams: 1,
      ownsClient: false,
    });
    const a = sender.send(0);
    const refused = new Error("unexpected shape");
    client.streams[0]!.sent[0]!.answer(refused);
    await assert.rejects(a, (e: unknown) => e === refused);
    const b = sender.send(1);
    assert.equal(client.streams.length, 1, "the stream survives an error answer");
    client.streams[0]!.fail(new Error("stream reset"));
    await assert.rejects(b, /stream reset/);
    await settle();
    const c = sender.send(0);
    assert.equal(client.streams.length, 2, "a new stream after the failed one");
    client.streams[1]!.sent[0]!.answer();
    await c;
    await sender.close();
    assert.equal(client.streams[1]!.ended, true, "close half-closes the open streams");
    assert.equal(client.closed, false, "a client the sender does not own stays open");
    await assert.rejects(sender.send(0), /closed/);
  });

  it("a step of a sequence goes with its id and flags, encoded as it is sent", async () => {
    const client = fakeClient();
    const sender = createStreamSender({
      client,
      model: "m",
      modelVersion: undefined,
      requests,
      maxStreams: 1,
      ownsClient: true,
    });
    const step = sender.send(1, { id: 7, start: true, end: false });
    assert.deepEqual(client.streams[0]!.sent[0]?.data, 1);
    assert.deepEqual(client.streams[0]!.sent[0]?.sequence, { id: 7, start: true, end: false });
    client.streams[0]!.sent[0]!.answer();
    await step;
    await sender.close();
  });
});
