// createSequence over a fake InferenceClient (only infer(), given as the argument): the flags each request
// carries, one request at a time in call order, and what a failed request, an abort and close() send.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  AbortedError,
  ConnectionError,
  DeadlineExceededError,
  InternalServerError,
  InvalidArgumentError,
} from "./errors.js";
import type { InferResult } from "./infer-result.js";
import { createSequence } from "./infer-sequence.js";
import type { CallOptions, InferenceClient } from "./inference-client.js";
import type { InferRequest } from "./tensor-types.js";

/** One infer() call the fake saw. */
interface Seen {
  readonly model: string;
  readonly value: number;
  readonly id: unknown;
  readonly start: unknown;
  readonly end: unknown;
  readonly options: CallOptions | undefined;
}

type Answer = (request: InferRequest, options: CallOptions | undefined) => Promise<InferResult>;

/** A fake client: records each call, answers through `answer` (by default at once, with a result). */
function fakeClient(answer?: Answer) {
  const seen: Seen[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const client: Pick<InferenceClient, "infer"> = {
    async infer(model, request, options) {
      seen.push({
        model,
        value: inputValue(request),
        id: request.sequenceId,
        start: request.sequenceStart,
        end: request.sequenceEnd,
        options,
      });
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        return await (answer ?? answered)(request, options);
      } finally {
        inFlight--;
      }
    },
  };
  return { client, seen, maxInFlight: () => maxInFlight };
}

function inputValue(request: InferRequest): number {
  return (request.inputs[0]!.data as number[])[0]!;
}

/** A result for `request`, at once. */
function answered(request: InferRequest): Promise<InferResult> {
  return Promise.resolve({ model: "acc", value: inputValue(request) } as unknown as InferResult);
}

/** Answers every request but those whose input is `value`, which fail with `error`. */
function failingAt(value: number, error: unknown): Answer {
  return (request) => (inputValue(request) === value ? Promise.reject(error) : answered(request));
}

const step = (value: number) => ({
  inputs: [{ name: "INPUT", datatype: "INT32" as const, shape: [1], data: [value] }],
});

/** [value, start, end] of each call. */
const flags = (seen: Seen[]) => seen.map((s) => [s.value, s.start, s.end]);

/** A promise settled from outside. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("createSequence: flags and order", () => {
  test("START on the first request, END on end(), the id on every one", async () => {
    const fake = fakeClient();
    const seq = createSequence(fake.client, "acc", { sequenceId: 2n ** 64n - 1n });
    assert.equal(seq.state, "idle");
    await seq.infer(step(1));
    assert.equal(seq.state, "open");
    await seq.infer(step(2));
    await seq.end(step(3));
    assert.equal(seq.state, "ended");
    assert.deepEqual(flags(fake.seen), [
      [1, true, false],
      [2, false, false],
      [3, false, true],
    ]);
    assert.deepEqual(
      fake.seen.map((s) => [s.model, s.id]),
      Array(3).fill(["acc", 2n ** 64n - 1n]),
    );
  });

  test("a one-request sequence carries START and END together", async () => {
    const fake = fakeClient();
    const seq = createSequence(fake.client, "acc", { sequenceId: "s-1" });
    await seq.end(step(9));
    assert.deepEqual(flags(fake.seen), [[9, true, true]]);
  });

  test("calls made together go one at a time, in call order, each after the previous answer", async () => {
    const answers: ReturnType<typeof deferred<InferResult>>[] = [];
    const fake = fakeClient(() => {
      const d = deferred<InferResult>();
      answers.push(d);
      return d.promise;
    });
    const seq = createSequence(fake.client, "acc", { sequenceId: 5 });
    const calls = [seq.infer(step(1)), seq.infer(step(2)), seq.end(step(3))];
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(fake.seen.length, i + 1, "the next request waits for the previous answer");
      answers[i]!.resolve({ value: i } as unknown as InferResult);
    }
    const results = await Promise.all(calls);
    assert.deepEqual(
      results.map((r) => (r as unknown as { value: number }).value),
      [0, 1, 2],
    );
    assert.deepEqual(flags(fake.seen), [
      [1, true, false],
      [2, false, false],
      [3, false, true],
    ]);
    assert.equal(fake.maxInFlight(), 1);
  });

  test("after end() the sequence is over: later calls are refused, close() sends nothing", async () => {
    const fake = fakeClient();
    const seq = createSequence(fake.client, "acc", { sequenceId: 5 });
    await seq.end(step(1));
    await assert.rejects(
      seq.infer(step(2)),
      (e: unknown) =>
        e instanceof InvalidArgumentError && /sequence 5 of model 'acc' is over \(ended\)/.test(e.message),
    );
    await seq.close();
    assert.equal(fake.seen.length, 1);
  });

  test("the sequence's timeoutMs and headers go with each request; a call's own win", async () => {
    const fake = fakeClient();
    const seq = createSequence(fake.client, "acc", {
      sequenceId: 5,
      timeoutMs: 1000,
      headers: { a: "1", b: "1" },
    });
    await seq.infer(step(1));
    await seq.end(step(2), { timeoutMs: 50, headers: { b: "2" } });
    assert.deepEqual(fake.seen[0]!.options, { timeoutMs: 1000, headers: { a: "1", b: "1" } });
    assert.deepEqual(fake.seen[1]!.options, { timeoutMs: 50, headers: { a: "1", b: "2" } });
  });

  test("the id, the model and the client are checked at creation", () => {
    const { client } = fakeClient();
    assert.throws(
      () => createSequence(client, "acc", { sequenceId: 0 }),
      (e: unknown) =>
        e instanceof InvalidArgumentError && /createSequence: sequenceId 0 is refused/.test(e.message),
    );
    assert.throws(() => createSequence(client, "", { sequenceId: 1 }), InvalidArgumentError);
    assert.throws(
      () => createSequence({} as InferenceClient, "acc", { sequenceId: 1 }),
      InvalidArgumentError,
    );
  });
});

describe("createSequence: a failed request ends the sequence and releases it", () => {
  test("a middle request fails: END with the last answered request, then the failure, unchanged", async () => {
    const failure = new InternalServerError("model failed");
    const fake = fakeClient(failingAt(2, failure));
    const seq = createSequence(fake.client, "acc", { sequenceId: 5 });
    await seq.infer(step(1));
    const failing = seq.infer(step(2));
    const queued = seq.infer(step(3)); // made before the failure is known
    await assert.rejects(failing, (e: unknown) => e === failure);
    assert.deepEqual(flags(fake.seen), [
      [1, true, false],
      [2, false, false],
      [1, false, true], // the release: the last answered request again, with END
    ]);
    assert.equal(seq.state, "ended");
    await assert.rejects(
      queued,
      (e: unknown) =>
        e instanceof InvalidArgumentError &&
        e.cause === failure &&
        /a request of it failed \(model failed\)/.test(e.message),
    );
    await seq.close(); // nothing left to release
    assert.equal(fake.seen.length, 3);
  });

  test("the failed call settles only after the release was answered", async () => {
    const release = deferred<InferResult>();
    const fake = fakeClient((request, _options) => {
      if (request.sequenceEnd === true) return release.promise;
      return inputValue(request) === 2
        ? Promise.reject(new DeadlineExceededError("late"))
        : answered(request);
    });
    const seq = createSequence(fake.client, "acc", { sequenceId: 5 });
    await seq.infer(step(1));
    let settled = false;
    const failed = seq.infer(step(2)).finally(() => {
      settled = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(fake.seen.length, 3);
    assert.equal(settled, false);
    release.resolve({} as InferResult);
    await assert.rejects(failed, DeadlineExceededError);
  });

  test("the first request fails after it may have reached the server: START and END with it", async () => {
    const fake = fakeClient((request) =>
      request.sequenceEnd === true ? answered(request) : Promise.reject(new ConnectionError("reset")),
    );
    const seq = createSequence(fake.client, "acc", { sequenceId: 5 });
    await assert.rejects(seq.infer(step(1)), ConnectionError);
    assert.deepEqual(flags(fake.seen), [
      [1, true, false],
      [1, true, true],
    ]);
    assert.equal(seq.state, "ended");
  });

  test("the first request never left the client: nothing to release", async () => {
    for (const error of [
      new InvalidArgumentError("input 'INPUT': bad shape"),
      new ConnectionError("refused", { requestSent: false }),
    ]) {
      const fake = fakeClient(() => Promise.reject(error));
      const seq = createSequence(fake.client, "acc", { sequenceId: 5 });
      await assert.rejects(seq.infer(step(1)), (e: unknown) => e === error);
      assert.equal(fake.seen.length, 1);
      assert.equal(seq.state, "ended");
    }
  });

  test("a client-side refusal after answered requests still releases the open sequence", async () => {
    const refusal = new InvalidArgumentError("input 'INPUT': bad shape");
    const fake = fakeClient(failingAt(2, refusal));
    const seq = createSequence(fake.client, "acc", { sequenceId: 5 });
    await seq.infer(step(1));
    await assert.rejects(seq.end(step(2)), (e: unknown) => e === refusal);
    assert.deepEqual(flags(fake.seen), [
      [1, true, false],
      [2, false, true],
      [1, false, true],
    ]);
  });

  test("the release fails too: state 'failed', the step's error; close() retries and reports", async () => {
    let releaseFails = true;
    const fake = fakeClient((request) => {
      if (inputValue(request) === 2) return Promise.reject(new InternalServerError("step"));
      if (request.sequenceEnd === true && releaseFails) return Promise.reject(new ConnectionError("down"));
      return answered(request);
    });
    const seq = createSequence(fake.client, "acc", { sequenceId: 5 });
    await seq.infer(step(1));
    await assert.rejects(seq.infer(step(2)), InternalServerError);
    assert.equal(seq.state, "failed");
    await assert.rejects(seq.close(), ConnectionError);
    assert.equal(seq.state, "failed");
    releaseFails = false;
    await seq.close();
    assert.equal(seq.state, "ended");
    assert.deepEqual(flags(fake.seen), [
      [1, true, false],
      [2, false, false],
      [1, false, true],
      [1, false, true],
      [1, false, true],
    ]);
  });
});

describe("createSequence: abort and close", () => {
  test("abort during a request: it rejects with AbortedError, then END with the last answered request", async () => {
    const controller = new AbortController();
    const fake = fakeClient((request, options) => {
      if (inputValue(request) !== 2) return answered(request);
      return new Promise((_resolve, reject) => {
        const signal = options!.signal!;
        signal.addEventListener("abort", () => reject(new AbortedError("aborted", { cause: signal.reason })));
      });
    });
    const seq = createSequence(fake.client, "acc", { sequenceId: 5, signal: controller.signal });
    await seq.infer(step(1));
    const inFlight = seq.infer(step(2));
    const queued = seq.end(step(3));
    await new Promise((resolve) => setImmediate(resolve));
    const reason = new Error("user left");
    controller.abort(reason);
    await assert.rejects(inFlight, (e: unknown) => e instanceof AbortedError && e.cause === reason);
    await assert.rejects(queued, (e: unknown) => e instanceof AbortedError && e.cause === reason);
    await seq.close();
    assert.deepEqual(flags(fake.seen), [
      [1, true, false],
      [2, false, false],
      [1, false, true],
    ]);
    assert.equal(fake.seen[2]!.options?.signal, undefined, "the release does not carry the aborted signal");
    assert.equal(seq.state, "ended");
  });

  test("abort between requests releases at once; a later call rejects with AbortedError", async () => {
    const controller = new AbortController();
    const fake = fakeClient();
    const seq = createSequence(fake.client, "acc", { sequenceId: "a", signal: controller.signal });
    await seq.infer(step(1));
    controller.abort();
    await seq.close();
    assert.deepEqual(flags(fake.seen), [
      [1, true, false],
      [1, false, true],
    ]);
    await assert.rejects(seq.infer(step(2)), AbortedError);
    assert.equal(fake.seen.length, 2);
  });

  test("a signal aborted before anything was sent: nothing is sent", async () => {
    const fake = fakeClient();
    const seq = createSequence(fake.client, "acc", { sequenceId: 1, signal: AbortSignal.abort() });
    await assert.rejects(seq.infer(step(1)), AbortedError);
    await seq.close();
    assert.equal(fake.seen.length, 0);
    assert.equal(seq.state, "ended");
  });

  test("a call's own signal, already aborted, sends nothing and ends the sequence", async () => {
    const fake = fakeClient();
    const seq = createSequence(fake.client, "acc", { sequenceId: 1 });
    await assert.rejects(seq.infer(step(1), { signal: AbortSignal.abort() }), AbortedError);
    assert.equal(fake.seen.length, 0);
    assert.equal(seq.state, "ended");
  });

  test("await using without end(): the open sequence is released with END on the way out", async () => {
    const fake = fakeClient();
    {
      await using seq = createSequence(fake.client, "acc", { sequenceId: 3 });
      await seq.infer(step(1));
      await seq.infer(step(2));
    }
    assert.deepEqual(flags(fake.seen), [
      [1, true, false],
      [2, false, false],
      [2, false, true],
    ]);
  });

  test("close() while idle sends nothing and ends the sequence", async () => {
    const fake = fakeClient();
    const seq = createSequence(fake.client, "acc", { sequenceId: 3 });
    await seq.close();
    assert.equal(seq.state, "ended");
    await assert.rejects(seq.infer(step(1)), InvalidArgumentError);
    assert.equal(fake.seen.length, 0);
  });
});
