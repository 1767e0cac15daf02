/**
 * The dynamic batcher on a fake clock: exact arrival times in, exact batches (which requests, when) out.
 * The instances are a fake pool that records each batch and finishes it when the test says.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bytesDataToStrings } from "../core/bytes-data.js";
import { ServerError } from "../core/server-error.js";
import type { BytesData, InferenceResponse } from "../core/types.js";
import type { PoolRun } from "../instances/instance-pool.js";
import type { InstanceRunResult } from "../instances/model-instance.js";
import { validateRequest } from "../lifecycle/request-validation.js";
import type { DynamicBatchingSpec, ModelSpec } from "../repository/model-spec.js";
import { createModelStats } from "../stats/model-stats.js";
import { createFakeClock, type FakeClock } from "../testing/fake-clock.js";
import { queuePolicy } from "../testing/queue-policy.js";
import { createModelScheduler, type ModelSchedulerOptions } from "./model-scheduler.js";

const policy = queuePolicy;

function spec(
  options: { maxBatchSize?: number; batching?: Partial<DynamicBatchingSpec> | null; dims?: number[] } = {},
): ModelSpec {
  const maxBatchSize = options.maxBatchSize ?? 8;
  const io = (name: string) => ({
    name,
    datatype: "FP32" as const,
    dims: options.dims ?? [2],
    optional: false,
    allowRaggedBatch: false,
    labelFilename: "",
  });
  const batching =
    options.batching === null
      ? undefined
      : {
          preferredBatchSizes: [4, 8],
          maxQueueDelayUs: 100,
          preserveOrdering: false,
          priorityLevels: 0,
          defaultPriorityLevel: 0,
          defaultQueuePolicy: policy(),
          priorityQueuePolicy: new Map(),
          ...options.batching,
        };
  return {
    name: "m",
    platform: "onnxruntime_onnx",
    backend: "onnxruntime",
    maxBatchSize,
    inputs: [io("IN")],
    outputs: [io("OUT")],
    ...(batching ? { dynamicBatching: batching } : {}),
    instanceGroups: [],
    defaultModelFilename: "model.onnx",
    parameters: new Map(),
  };
}

interface RecordedRun {
  readonly atUs: number;
  /** What the scheduler handed the pool. */
  readonly batch: PoolRun;
  /** The request numbers in the batch, in batch order (first element of each row). */
  readonly requests: number[];
  finish(): void;
  fail(error: Error): void;
}

interface Harness {
  readonly clock: FakeClock;
  readonly runs: RecordedRun[];
  /** Submits request number `n` (batch `rows`, row width `width`); returns its settled outcome. */
  submit(
    n: number,
    options?: {
      rows?: number;
      width?: number;
      priority?: number;
      timeoutUs?: number;
      id?: string;
      signal?: AbortSignal;
      parameters?: Record<string, boolean>;
      classification?: number;
    },
  ): Promise<InferenceResponse>;
  /** Lets queued microtasks (the batcher's passes) run. */
  settle(): Promise<void>;
  readonly stats: ReturnType<typeof createModelStats>;
  drain(): Promise<void>;
  abandon(error: ServerError): void;
}

function harness(
  modelSpec: ModelSpec,
  instances = 1,
  extra: Pick<ModelSchedulerOptions, "trace" | "crashParameter" | "labels"> = {},
): Harness {
  const clock = createFakeClock();
  const runs: RecordedRun[] = [];
  const stats = createModelStats("m", "1");
  let busy = 0;
  const pool = {
    hasIdle: () => busy < instances,
    close: async () => {},
    run(batch: PoolRun): Promise<InstanceRunResult> {
      busy++;
      const input = batch.inputs[0]!;
      const data = input.data as Float32Array;
      const width = input.dims.slice(1).reduce((a, b) => a * b, 1);
      const rows = input.dims[0]!;
      const requests: number[] = [];
      for (let r = 0; r < rows; r++) {
        const n = data[r * width]!;
        if (requests.at(-1) !== n) requests.push(n);
      }
      return new Promise((resolve, reject) => {
        runs.push({
          atUs: clock.nowUs(),
          batch,
          requests,
          finish: () => {
            busy--;
            resolve({
              outputs: [{ name: "OUT", ortType: "float32", dims: input.dims, data }],
              inputNs: 1,
              inferNs: 2,
              outputNs: 3,
            });
          },
          fail: (error) => {
            busy--;
            reject(error);
          },
        });
      });
    },
  };
  const scheduler = createModelScheduler({ spec: modelSpec, version: "1", pool, clock, stats, ...extra });
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
  return {
    clock,
    runs,
    stats,
    settle,
    drain: () => scheduler.drain(),
    abandon: (error) => scheduler.abandon(error),
    submit(n, options = {}) {
      const rows = options.rows ?? 1;
      const width = options.width ?? 2;
      const shape = modelSpec.maxBatchSize > 0 ? [rows, width] : [width];
      const request = {
        model: "m",
        ...(options.id !== undefined ? { id: options.id } : {}),
        ...(options.priority !== undefined ? { priority: options.priority } : {}),
        ...(options.timeoutUs !== undefined ? { timeoutUs: options.timeoutUs } : {}),
        ...(options.signal !== undefined ? { signal: options.signal } : {}),
        ...(options.parameters !== undefined ? { parameters: options.parameters } : {}),
        ...(options.classification !== undefined
          ? { outputs: [{ name: "OUT", classification: options.classification }] }
          : {}),
        inputs: [
          { name: "IN", datatype: "FP32" as const, shape, data: new Float32Array(rows * width).fill(n) },
        ],
      };
      const promise = scheduler.submit(validateRequest(modelSpec, request), clock.nowNs());
      promise.catch(() => {});
      return promise;
    },
  };
}

/** Advances the fake clock to `us`, letting the batcher run at every step. */
async function at(h: Harness, us: number): Promise<void> {
  await h.settle();
  h.clock.advanceToUs(us);
  await h.settle();
}

const batches = (h: Harness) => h.runs.map((r) => ({ at: r.atUs, requests: r.requests }));

describe("dynamic batcher on a fake clock", () => {
  it("sends 3 requests that arrived at 0, 10, 20 us as one batch when the oldest waited 100 us", async () => {
    const h = harness(spec());
    h.submit(1);
    await at(h, 10);
    h.submit(2);
    await at(h, 20);
    h.submit(3);
    await at(h, 99);
    assert.deepEqual(batches(h), []);
    await at(h, 100);
    assert.deepEqual(batches(h), [{ at: 100, requests: [1, 2, 3] }]);
  });

  it("sends 9 simultaneous arrivals as a batch of 8 at once, then the ninth after the delay", async () => {
    const h = harness(spec(), 2);
    for (let n = 1; n <= 9; n++) h.submit(n);
    await at(h, 0);
    assert.deepEqual(batches(h), [{ at: 0, requests: [1, 2, 3, 4, 5, 6, 7, 8] }]);
    await at(h, 100);
    assert.deepEqual(batches(h), [
      { at: 0, requests: [1, 2, 3, 4, 5, 6, 7, 8] },
      { at: 100, requests: [9] },
    ]);
  });

  it("sends as soon as a preferred batch size is reached", async () => {
    const h = harness(spec());
    for (let n = 1; n <= 4; n++) {
      await at(h, (n - 1) * 10);
      h.submit(n);
    }
    await at(h, 30);
    assert.deepEqual(batches(h), [{ at: 30, requests: [1, 2, 3, 4] }]);
  });

  it("never splits a request: 3 rows + 6 rows pass the largest preferred size 8, so 3 goes alone", async () => {
    const h = harness(spec({ maxBatchSize: 16, batching: { preferredBatchSizes: [4, 8] } }));
    h.submit(1, { rows: 3 });
    h.submit(2, { rows: 6 });
    await at(h, 0);
    assert.deepEqual(batches(h), [{ at: 0, requests: [1] }]);
    h.runs[0]!.finish();
    await at(h, 0);
    await at(h, 100);
    assert.deepEqual(batches(h), [
      { at: 0, requests: [1] },
      { at: 100, requests: [2] },
    ]);
  });

  it("puts requests with different variable dims in different batches", async () => {
    const h = harness(spec({ dims: [-1] }), 2);
    h.submit(1, { width: 4 });
    h.submit(2, { width: 4 });
    h.submit(3, { width: 6 });
    h.submit(4, { width: 4 });
    await at(h, 0);
    // Requests 1 and 2 share [4]; request 3 ([6]) ends that batch, and request 4 ([4]) ends request 3's:
    // a shape change sends the pending batch as it is (Triton). Request 4 then waits for its delay.
    assert.deepEqual(batches(h), [
      { at: 0, requests: [1, 2] },
      { at: 0, requests: [3] },
    ]);
    h.runs[0]!.finish();
    await at(h, 100);
    assert.deepEqual(batches(h).at(-1), { at: 100, requests: [4] });
  });

  it("forms no batch while every instance is busy; the idle instance then takes all that waited", async () => {
    const h = harness(spec({ batching: { preferredBatchSizes: [8], maxQueueDelayUs: 0 } }));
    h.submit(1);
    await at(h, 0);
    assert.deepEqual(batches(h), [{ at: 0, requests: [1] }]);
    for (let n = 2; n <= 6; n++) h.submit(n);
    await at(h, 50);
    assert.equal(h.runs.length, 1);
    h.runs[0]!.finish();
    await at(h, 50);
    assert.deepEqual(batches(h), [
      { at: 0, requests: [1] },
      { at: 50, requests: [2, 3, 4, 5, 6] },
    ]);
  });

  it("runs each request alone, FIFO on any idle instance, without dynamic_batching", async () => {
    const h = harness(spec({ batching: null }), 2);
    h.submit(1, { rows: 2 });
    h.submit(2);
    h.submit(3);
    await at(h, 0);
    assert.deepEqual(batches(h), [
      { at: 0, requests: [1] },
      { at: 0, requests: [2] },
    ]);
    await at(h, 5);
    assert.equal(h.runs.length, 2);
    h.runs[1]!.finish();
    await h.settle();
    assert.deepEqual(batches(h).at(-1), { at: 5, requests: [3] });
  });

  /** Runs request 1 alone, queues the others with the given priorities, and returns the order they ran in. */
  async function priorityOrder(
    levels: { priorityLevels: number; defaultPriorityLevel: number },
    priorities: readonly number[],
  ): Promise<number[]> {
    const h = harness(
      spec({ maxBatchSize: 1, batching: { preferredBatchSizes: [1], maxQueueDelayUs: 0, ...levels } }),
    );
    h.submit(1);
    await at(h, 0);
    for (const [i, priority] of priorities.entries()) h.submit(i + 2, { priority });
    await at(h, 1);
    for (let i = 0; i <= priorities.length; i++) {
      h.runs[i]!.finish();
      await at(h, 2 + i);
    }
    return h.runs.map((r) => r.requests[0]!);
  }

  it("serves the highest priority level (1) first and maps priority 0 to the default level", async () => {
    const order = await priorityOrder({ priorityLevels: 2, defaultPriorityLevel: 2 }, [0, 2, 1, 9]);
    assert.deepEqual(order, [1, 4, 2, 3, 5]);
  });

  it("keeps a request at the lowest level (priority == priority_levels) there, below the default level", async () => {
    const order = await priorityOrder({ priorityLevels: 3, defaultPriorityLevel: 2 }, [3, 0, 4, 2]);
    // 3 (0: default), 4 (beyond the levels: default) and 5 (level 2) go before 2 (level 3, the lowest).
    assert.deepEqual(order, [1, 3, 4, 5, 2]);
  });

  it("rejects a request whose queue timeout expired (REJECT) with 'Request timeout expired'", async () => {
    const h = harness(spec({ batching: { defaultQueuePolicy: policy({ defaultTimeoutUs: 50 }) } }));
    const rejected = h.submit(1);
    await at(h, 50);
    assert.equal(h.runs.length, 0);
    await at(h, 51);
    await assert.rejects(rejected, { status: "UNAVAILABLE", message: "Request timeout expired" });
    await at(h, 200);
    assert.equal(h.runs.length, 0);
    assert.equal(h.stats.metrics().failuresByReason["REJECTED"], 1);
  });

  it("lets a request shorten, never lengthen, the timeout when allow_timeout_override is set", async () => {
    const h = harness(
      spec({
        batching: {
          maxQueueDelayUs: 1000,
          defaultQueuePolicy: policy({ defaultTimeoutUs: 500, allowTimeoutOverride: true }),
        },
      }),
    );
    const short = h.submit(1, { timeoutUs: 30 });
    const long = h.submit(2, { timeoutUs: 5000 });
    await at(h, 31);
    await assert.rejects(short, { message: "Request timeout expired" });
    await at(h, 501);
    await assert.rejects(long, { message: "Request timeout expired" });
  });

  it("moves an expired request behind the others (DELAY) instead of rejecting it", async () => {
    const h = harness(
      spec({
        maxBatchSize: 1,
        batching: {
          preferredBatchSizes: [1],
          maxQueueDelayUs: 0,
          defaultQueuePolicy: policy({ defaultTimeoutUs: 50, timeoutAction: "DELAY" }),
        },
      }),
    );
    h.submit(1);
    await at(h, 0);
    const delayed = h.submit(2);
    await at(h, 60);
    h.submit(3);
    await at(h, 60);
    h.runs[0]!.finish();
    await at(h, 61);
    h.runs[1]!.finish();
    await at(h, 62);
    assert.deepEqual(
      h.runs.map((r) => r.requests[0]),
      [1, 3, 2],
    );
    h.runs[2]!.finish();
    assert.equal((await delayed).outputs[0]?.name, "OUT");
  });

  it("refuses a request beyond max_queue_size with UNAVAILABLE 'Exceeds maximum queue size'", async () => {
    const h = harness(spec({ batching: { defaultQueuePolicy: policy({ maxQueueSize: 2 }) } }));
    h.submit(1);
    h.submit(2);
    await assert.rejects(h.submit(3, { id: "r3" }), (error: unknown) => {
      assert.ok(error instanceof ServerError);
      assert.equal(error.status, "UNAVAILABLE");
      assert.equal(error.message, "[request id: r3] Exceeds maximum queue size");
      return true;
    });
  });

  it("answers in arrival order with preserve_ordering even when a later batch finishes first", async () => {
    const h = harness(
      spec({
        maxBatchSize: 1,
        batching: { preferredBatchSizes: [1], maxQueueDelayUs: 0, preserveOrdering: true },
      }),
      2,
    );
    const order: number[] = [];
    const first = h.submit(1).then(() => order.push(1));
    const second = h.submit(2).then(() => order.push(2));
    await at(h, 0);
    assert.equal(h.runs.length, 2);
    h.runs[1]!.finish();
    await at(h, 5);
    assert.deepEqual(order, []);
    h.runs[0]!.finish();
    await Promise.all([first, second]);
    assert.deepEqual(order, [1, 2]);
  });

  it("drops a queued request whose client went away (CANCELLED, reason CANCELED)", async () => {
    const h = harness(spec());
    const controller = new AbortController();
    const cancelled = h.submit(1, { signal: controller.signal });
    h.submit(2);
    await at(h, 10);
    controller.abort();
    await assert.rejects(cancelled, { status: "CANCELLED" });
    await at(h, 100);
    assert.deepEqual(batches(h), [{ at: 100, requests: [2] }]);
    assert.equal(h.stats.metrics().failuresByReason["CANCELED"], 1);
  });

  it("fails every request of a batch whose run failed, and drains", async () => {
    const h = harness(spec({ batching: { maxQueueDelayUs: 0 } }));
    const a = h.submit(1);
    const b = h.submit(2);
    await at(h, 0);
    h.runs[0]!.fail(new ServerError("INTERNAL", "model instance 'm_0' died while running the request"));
    await assert.rejects(a, { status: "INTERNAL" });
    await assert.rejects(b, { status: "INTERNAL" });
    await h.drain();
    const stats = h.stats.statistics();
    assert.equal(stats.inference_stats.fail.count, 2);
    assert.equal(h.stats.metrics().failuresByReason["BACKEND"], 2);
  });

  it("counts pending requests as those queued: not running ones, not refused or timed-out ones", async () => {
    const h = harness(
      spec({
        batching: {
          maxQueueDelayUs: 100,
          defaultQueuePolicy: policy({ defaultTimeoutUs: 10_000, allowTimeoutOverride: true }),
        },
      }),
    );
    const pending = () => h.stats.metrics().pendingRequests;
    const held = [h.submit(1), h.submit(2)];
    await at(h, 0);
    assert.equal(pending(), 2);
    await at(h, 100);
    assert.equal(h.runs.length, 1);
    assert.equal(pending(), 0, "a batch held by the instance is not pending");
    const late = h.submit(3, { timeoutUs: 50 });
    h.submit(4);
    await at(h, 110);
    assert.equal(pending(), 2);
    const drained = h.drain();
    await assert.rejects(h.submit(5), { status: "UNAVAILABLE", message: /Server is stopping/ });
    assert.equal(pending(), 2, "a request refused while stopping never counts");
    h.runs[0]!.finish();
    await Promise.all(held);
    await at(h, 300);
    await assert.rejects(late, { message: "Request timeout expired" });
    assert.deepEqual(h.runs[1]?.requests, [4]);
    h.runs[1]!.finish();
    await drained;
    assert.equal(pending(), 0);
  });

  it("abandon (every instance died) fails what is queued and what comes later; running batches finish", async () => {
    const h = harness(spec({ batching: { maxQueueDelayUs: 0 } }));
    const running = h.submit(1);
    await at(h, 0);
    const queued = h.submit(2);
    await at(h, 10);
    const error = new ServerError("INTERNAL", "all instances of model 'm' version 1 died");
    h.abandon(error);
    await assert.rejects(queued, error);
    await assert.rejects(h.submit(3), error);
    h.runs[0]!.finish();
    await running;
    await h.drain();
    assert.equal(h.runs.length, 1);
    assert.equal(h.stats.metrics().failuresByReason["BACKEND"], 2);
    assert.equal(h.stats.metrics().pendingRequests, 0);
  });

  it("records statistics with Triton's meaning: inference_count adds rows, execution_count adds runs", async () => {
    const h = harness(spec({ batching: { maxQueueDelayUs: 0 } }));
    const done = [h.submit(1, { rows: 2 }), h.submit(2, { rows: 3 })];
    await at(h, 40);
    h.runs[0]!.finish();
    await Promise.all(done);
    const stats = h.stats.statistics();
    assert.equal(stats.inference_count, 5);
    assert.equal(stats.execution_count, 1);
    assert.equal(stats.inference_stats.success.count, 2);
    assert.equal(stats.inference_stats.queue.count, 2);
    assert.equal(stats.inference_stats.compute_infer.count, 2);
    assert.equal(stats.inference_stats.compute_infer.ns, 4);
    assert.deepEqual(
      stats.batch_stats.map((b) => [b.batch_size, b.compute_infer.count, b.compute_infer.ns]),
      [[5, 1, 2]],
    );
    assert.equal(stats.last_inference, h.clock.epochMs());
  });

  it("traces each decision: the wait and why, then the batch sent and why (TBENCH_TRACE=batcher)", async () => {
    const lines: string[] = [];
    const h = harness(spec(), 1, { trace: (line) => lines.push(line) });
    const done = h.submit(1);
    await at(h, 0);
    await at(h, 100);
    h.runs[0]!.finish();
    await done;
    assert.deepEqual(lines, [
      "m:1 t=0us wait 100us: batch 1 below preferred sizes [4,8], oldest waited 0 us",
      "m:1 t=100us send batch 1 (1 requests): oldest request waited 100 us >= max_queue_delay 100 us",
    ]);
  });

  it("answers with the model, the version and the request's id (none when the id is empty)", async () => {
    const h = harness(spec({ batching: { maxQueueDelayUs: 0 } }));
    const named = h.submit(1, { id: "r1" });
    const unnamed = h.submit(2, { id: "" });
    await at(h, 0);
    h.runs[0]!.finish();
    const [a, b] = await Promise.all([named, unnamed]);
    assert.deepEqual([a.model, a.version, a.id], ["m", "1", "r1"]);
    assert.equal("id" in b, false);
  });

  it("asks the pool for the requested outputs, and for a worker crash only when a request sets the hook", async () => {
    const h = harness(spec({ batching: { maxQueueDelayUs: 0 } }), 2, { crashParameter: "crash" });
    const plain = h.submit(1, { parameters: { crash: false } });
    await at(h, 0);
    const crashing = h.submit(2, { parameters: { crash: true } });
    await at(h, 1);
    assert.deepEqual(h.runs[0]!.batch.outputNames, ["OUT"]);
    assert.equal(h.runs[0]!.batch.crash, undefined);
    assert.equal(h.runs[1]!.batch.crash, true);
    h.runs[0]!.finish();
    h.runs[1]!.finish();
    await Promise.all([plain, crashing]);
  });

  it("without dynamic_batching a request with no batch dimension runs alone and counts one row", async () => {
    const h = harness(spec({ maxBatchSize: 0, batching: null }));
    const done = [h.submit(1), h.submit(2)];
    await at(h, 0);
    assert.deepEqual(batches(h), [{ at: 0, requests: [1] }]);
    h.runs[0]!.finish();
    await at(h, 1);
    h.runs[1]!.finish();
    await Promise.all(done);
    assert.deepEqual(
      h.stats.statistics().batch_stats.map((b) => [b.batch_size, b.compute_infer.count]),
      [[1, 2]],
    );
  });

  it("statistics carry exact times on the fake clock: queue, request duration, failure duration", async () => {
    const h = harness(
      spec({
        batching: { defaultQueuePolicy: policy({ defaultTimeoutUs: 300, allowTimeoutOverride: true }) },
      }),
    );
    const started = performance.now();
    const served = h.submit(1);
    await at(h, 100);
    await at(h, 150);
    h.runs[0]!.finish();
    await served;
    const stats = h.stats.statistics();
    assert.equal(stats.inference_stats.queue.ns, 100_000, "queued from 0 until sent at the 100 us delay");
    assert.equal(stats.inference_stats.success.ns, 150_000, "received at 0, answered at 150 us");
    // Compute input and output add the scheduler's own assembly and split time (real time, so bounded by
    // the test's own duration) to the instance's figures (1 ns and 3 ns).
    const elapsedNs = (performance.now() - started) * 1e6;
    assert.ok(
      stats.inference_stats.compute_input.ns >= 1 && stats.inference_stats.compute_input.ns <= 1 + elapsedNs,
    );
    assert.ok(
      stats.inference_stats.compute_output.ns >= 3 &&
        stats.inference_stats.compute_output.ns <= 3 + elapsedNs,
    );
    const refused = h.submit(2, { timeoutUs: 50 });
    await at(h, 150);
    await at(h, 201);
    await assert.rejects(refused, { message: "Request timeout expired" });
    assert.equal(h.stats.statistics().inference_stats.fail.ns, 51_000, "received at 150, refused at 201 us");
  });

  it("drain resolves only once the batch in flight is answered", async () => {
    const h = harness(spec({ batching: { maxQueueDelayUs: 0 } }));
    const served = h.submit(1);
    await at(h, 0);
    let drained = false;
    const drain = h.drain().then(() => {
      drained = true;
    });
    await at(h, 10);
    assert.equal(drained, false);
    h.runs[0]!.finish();
    await served;
    await drain;
    assert.equal(drained, true);
  });

  it("a model without priority levels ignores a request's priority: arrival order", async () => {
    const h = harness(
      spec({
        maxBatchSize: 1,
        batching: { preferredBatchSizes: [1], maxQueueDelayUs: 0, priorityLevels: 0 },
      }),
    );
    h.submit(1);
    await at(h, 0);
    h.submit(2, { priority: 2 });
    h.submit(3, { priority: 1 });
    await at(h, 1);
    for (let i = 0; i < 3; i++) {
      h.runs[i]!.finish();
      await at(h, 2 + i);
    }
    assert.deepEqual(
      h.runs.map((r) => r.requests[0]),
      [1, 2, 3],
    );
  });

  it("classification: a request asking for the top classes of an output gets them, with labels", async () => {
    const h = harness(spec({ batching: { maxQueueDelayUs: 0 } }), 1, {
      labels: new Map([["OUT", ["cat", "dog"]]]),
    });
    const classified = h.submit(5, { classification: 1 });
    const plain = h.submit(6);
    await at(h, 0);
    h.runs[0]!.finish();
    const [a, b] = await Promise.all([classified, plain]);
    assert.equal(a.outputs[0]?.datatype, "BYTES");
    assert.deepEqual(a.outputs[0]?.shape, [1, 1]);
    assert.deepEqual(bytesDataToStrings(a.outputs[0]?.data as BytesData), ["5.000000:0:cat"]);
    assert.equal(b.outputs[0]?.datatype, "FP32");
    assert.deepEqual([...(b.outputs[0]!.data as Float32Array)], [6, 6]);
  });
});
