/**
 * The sequence batcher on a fake clock and a fake pool, with Triton's qa cases (L0_sequence_batcher,
 * L0_implicit_state) as the expected values: running sums, batch statistics with padding rows, backlog,
 * idle reaping, backlog timeouts, START conflicts, and the control values each row gets. The fake pool
 * computes what the bundled models compute: OUTPUT = INPUT + INPUT_STATE (the accumulator) and echoes the
 * controls, and records every batch.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseModelConfig } from "@tbench/proto";
import type { Logger } from "../core/logger.js";
import type { InferenceRequest, InferenceResponse, SequenceFlags } from "../core/types.js";
import type { ThreadTensor } from "../instances/worker-protocol.js";
import { validateRequest } from "../lifecycle/request-validation.js";
import { normalizeModelConfig } from "../repository/config-normalize.js";
import { validateSchedulingConfig } from "../repository/config-validate.js";
import { modelSpecFromConfig } from "../repository/model-spec.js";
import type { SequenceBatchingSpec } from "../repository/sequence-batching.js";
import { createModelStats } from "../stats/model-stats.js";
import { createFakeClock, type FakeClock } from "../testing/fake-clock.js";
import { createSequenceBatchScheduler } from "./sequence-batch-scheduler.js";

/** A sequence model config: INPUT INT32 [1] -> OUTPUT, the accumulator state, every control. */
function configText(maxBatchSize: number, strategy: string, extra = ""): string {
  return `
name: "seq"
platform: "onnxruntime_onnx"
max_batch_size: ${maxBatchSize}
sequence_batching {
  max_sequence_idle_microseconds: 5000000
  ${strategy}
  control_input [
    { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] },
    { name: "END" control [ { kind: CONTROL_SEQUENCE_END fp32_false_true: [ 0, 1 ] } ] },
    { name: "READY" control [ { kind: CONTROL_SEQUENCE_READY bool_false_true: [ false, true ] } ] },
    { name: "CORRID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 } ] }
  ]
  state [ { input_name: "INPUT_STATE" output_name: "OUTPUT_STATE" data_type: TYPE_INT32 dims: [ 1 ]
            initial_state: { data_type: TYPE_INT32 dims: [ 1 ] zero_data: true name: "zero" } } ]
  ${extra}
}
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
`;
}

interface Row {
  readonly input: number;
  readonly start: number;
  readonly end: number;
  readonly ready: boolean;
  readonly corrId: bigint;
}

interface Harness {
  readonly clock: FakeClock;
  readonly batches: Row[][];
  readonly warnings: string[];
  readonly stats: ReturnType<typeof createModelStats>;
  readonly scheduler: ReturnType<typeof createSequenceBatchScheduler>;
  /** Sends one request of a sequence; resolves with OUTPUT[0]. */
  send(value: number, sequence: Partial<SequenceFlags>, extra?: Partial<InferenceRequest>): Promise<number>;
  /** Lets queued microtasks (passes, fake runs) finish. */
  settle(): Promise<void>;
}

function harness(
  maxBatchSize: number,
  strategy = "direct { }",
  extra = "",
  instances = 1,
  maxPendingRequests?: number,
): Harness {
  const config = parseModelConfig(configText(maxBatchSize, strategy, extra));
  normalizeModelConfig(config);
  assert.equal(validateSchedulingConfig(config), undefined);
  const spec = modelSpecFromConfig(config) as ReturnType<typeof modelSpecFromConfig> & {
    sequenceBatching: SequenceBatchingSpec;
  };
  const clock = createFakeClock();
  const stats = createModelStats("seq", "1");
  const batches: Row[][] = [];
  const warnings: string[] = [];
  const logger: Logger = {
    info: () => {},
    warn: (line: string) => warnings.push(line),
    error: () => {},
  } as unknown as Logger;
  const input = (inputs: readonly ThreadTensor[], name: string) => inputs.find((t) => t.name === name)!.data;
  const pool = {
    hasIdle: () => true,
    close: async () => {},
    async run(batch: { inputs: readonly ThreadTensor[] }) {
      const values = input(batch.inputs, "INPUT") as Int32Array;
      const state = input(batch.inputs, "INPUT_STATE") as Int32Array;
      const starts = input(batch.inputs, "START") as Int32Array;
      const ends = input(batch.inputs, "END") as Float32Array;
      const readies = input(batch.inputs, "READY") as Uint8Array;
      const ids = input(batch.inputs, "CORRID") as BigUint64Array;
      const rows = values.length;
      batches.push(
        Array.from({ length: rows }, (_, i) => ({
          input: values[i]!,
          start: starts[i]!,
          end: ends[i]!,
          ready: readies[i] === 1,
          corrId: ids[i]!,
        })),
      );
      const sum = new Int32Array(rows);
      for (let i = 0; i < rows; i++) sum[i] = values[i]! + state[i]!;
      const dims = maxBatchSize > 0 ? [rows, 1] : [1];
      return {
        outputs: [
          { name: "OUTPUT", ortType: "int32", dims, data: sum },
          { name: "OUTPUT_STATE", ortType: "int32", dims, data: sum.slice() },
        ],
        inputNs: 0,
        inferNs: 0,
        outputNs: 0,
      };
    },
  };
  const scheduler = createSequenceBatchScheduler({
    spec,
    version: "1",
    pool: pool as never,
    instanceCount: instances,
    clock,
    stats,
    logger,
    maxPendingRequests,
  });
  return {
    clock,
    batches,
    warnings,
    stats,
    scheduler,
    async send(value, sequence, extra = {}) {
      const request: InferenceRequest = {
        model: "seq",
        inputs: [
          {
            name: "INPUT",
            datatype: "INT32",
            shape: maxBatchSize > 0 ? [1, 1] : [1],
            data: new Int32Array([value]),
          },
        ],
        sequence: { id: 0n, start: false, end: false, ...sequence },
        ...extra,
      };
      const response: InferenceResponse = await scheduler.submit(
        validateRequest(spec, request),
        clock.nowNs(),
      );
      return (response.outputs[0]!.data as Int32Array)[0]!;
    },
    settle: () => new Promise((resolve) => setImmediate(resolve)),
  };
}

/** Runs one sequence of `values` under `id`, each request after the previous answer; the last output. */
async function runSequence(h: Harness, id: bigint | string, values: readonly number[]): Promise<number> {
  let last = 0;
  for (const [i, value] of values.entries()) {
    last = await h.send(value, { id, start: i === 0, end: i === values.length - 1 });
  }
  return last;
}

describe("sequence batcher: a sequence's requests see its running state", () => {
  it("id 5: start 1, 2..8, end 9 gives 45; one execution per request (qa test_simple_sequence)", async () => {
    const h = harness(0);
    assert.equal(await runSequence(h, 5n, [1, 2, 3, 4, 5, 6, 7, 8, 9]), 45);
    const stats = h.stats.statistics();
    assert.equal(stats.execution_count, 9);
    assert.equal(stats.inference_count, 9);
    await h.scheduler.close();
  });

  it("a sequence of one request has START and END together, and READY (qa test_length1_sequence)", async () => {
    const h = harness(4);
    assert.equal(await h.send(42, { id: 99n, start: true, end: true }), 42);
    assert.deepEqual(h.batches, [[{ input: 42, start: 1, end: 1, ready: true, corrId: 99n }]]);
    await h.scheduler.close();
  });

  it("two interleaved sequences each keep their own sum", async () => {
    const h = harness(4, "direct { }", "");
    // (String ids, a separate sequence from the same number, are checked end to end in sequence-serving.)
    const [a, b] = await Promise.all([runSequence(h, 7n, [1, 2, 3]), runSequence(h, 8n, [10, 20, 30])]);
    assert.deepEqual([a, b], [6, 60]);
    await h.scheduler.close();
  });
});

describe("sequence batcher: Triton's refusals", () => {
  it("no id, id 0 or an empty id: must specify a non-zero or non-empty correlation ID", async () => {
    const h = harness(4);
    await assert.rejects(h.send(1, { id: 0n, start: true }), {
      status: "INVALID_ARG",
      message: "inference request to model 'seq' must specify a non-zero or non-empty correlation ID",
    });
    await h.scheduler.close();
  });

  it("no START on an unknown sequence, and after END (qa test_no_sequence_start, test_sequence_after_end)", async () => {
    const h = harness(4);
    const noStart =
      "inference request for sequence 37469245 to model 'seq' must specify the START flag on the first request of the sequence";
    await assert.rejects(h.send(1, { id: 37469245n }), { status: "INVALID_ARG", message: noStart });
    assert.equal(await runSequence(h, 3n, [1, 2, 3]), 6);
    await assert.rejects(h.send(55, { id: 3n }), {
      message:
        "inference request for sequence 3 to model 'seq' must specify the START flag on the first request of the sequence",
    });
    assert.equal(h.stats.statistics().inference_count, 3);
    assert.equal(h.stats.statistics().inference_stats.fail.count, 2);
    await h.scheduler.close();
  });

  it("a batch of 2 rows: must specify batch-size 1 due to requirements of sequence batcher", async () => {
    const h = harness(4);
    const config = parseModelConfig(configText(4, "direct { }"));
    normalizeModelConfig(config);
    const spec = modelSpecFromConfig(config);
    const request: InferenceRequest = {
      model: "seq",
      inputs: [{ name: "INPUT", datatype: "INT32", shape: [2, 1], data: new Int32Array([1, 2]) }],
      sequence: { id: 1n, start: true, end: false },
    };
    await assert.rejects(h.scheduler.submit(validateRequest(spec, request), 0), {
      status: "INVALID_ARG",
      message:
        "inference request to model 'seq' must specify batch-size 1 due to requirements of sequence batcher",
    });
    await h.scheduler.close();
  });

  it("START on a live sequence restarts its state with a warning, no error (qa test_no_sequence_end)", async () => {
    const h = harness(4);
    assert.equal(await h.send(1, { id: 4566n, start: true }), 1);
    assert.equal(await h.send(2, { id: 4566n }), 3);
    assert.equal(await h.send(42, { id: 4566n, start: true }), 42);
    assert.equal(await h.send(9, { id: 4566n, end: true }), 51);
    assert.equal(h.warnings.length, 1);
    assert.match(h.warnings[0]!, /The previous sequence did not end before this sequence start/);
    await h.scheduler.close();
  });
});

describe("sequence batcher: direct strategy", () => {
  it("a batch is the slots up to the highest busy one; a free slot below it is a padding row (qa test_skip_batch)", async () => {
    const h = harness(4);
    // Two long sequences (4 steps) take slots 0 and 1, two short ones (2 steps) slots 2 and 3.
    const sequences = [
      { id: 1n, values: [1, 2, 3, 4] },
      { id: 2n, values: [10, 20, 30, 40] },
      { id: 3n, values: [100, 200] },
      { id: 4n, values: [1000, 2000] },
    ];
    const sums = await Promise.all(sequences.map((s) => runSequence(h, s.id, s.values)));
    assert.deepEqual(sums, [10, 100, 300, 3000]);
    const stats = h.stats.statistics();
    assert.deepEqual(
      stats.batch_stats.map((b) => [b.batch_size, b.compute_infer.count]),
      [
        [2, 2],
        [4, 2],
      ],
    );
    assert.equal(stats.execution_count, 4);
    assert.equal(stats.inference_count, 12);
    await h.scheduler.close();
  });

  it("a padding row is not READY, START or END, has CORRID 0, and answers nobody", async () => {
    const h = harness(4);
    // Sequence 1 takes slot 0, sequence 2 slot 1; sequence 1 ends, so slot 0 is free while 2 goes on.
    const first = Promise.all([
      h.send(5, { id: 1n, start: true, end: true }),
      h.send(7, { id: 2n, start: true }),
    ]);
    assert.deepEqual(await first, [5, 7]);
    assert.equal(await h.send(8, { id: 2n, end: true }), 15);
    assert.deepEqual(h.batches.at(-1), [
      { input: 0, start: 0, end: 0, ready: false, corrId: 0n },
      { input: 8, start: 0, end: 1, ready: true, corrId: 2n },
    ]);
    const stats = h.stats.statistics();
    assert.equal(stats.inference_count, 3);
    assert.deepEqual(
      stats.batch_stats.map((b) => b.batch_size),
      [2],
    );
    await h.scheduler.close();
  });

  it("a fifth sequence waits in the backlog and takes the first slot freed (qa test_backlog)", async () => {
    const h = harness(4);
    const sequences = [1, 2, 3, 4, 5].map((n) => ({
      id: BigInt(n),
      values: [n * 10000 + 1111, n * 10000 + 1112, n * 10000 + 1113].map((v) => (n === 5 ? v - 40000 : v)),
    }));
    const sums = await Promise.all(sequences.map((s) => runSequence(h, s.id, s.values)));
    assert.equal(sums[4], 33336);
    const stats = h.stats.statistics();
    assert.deepEqual(
      stats.batch_stats.map((b) => [b.batch_size, b.compute_infer.count]),
      [
        [1, 3],
        [4, 3],
      ],
    );
    assert.equal(stats.inference_count, 15);
    await h.scheduler.close();
  });

  it("waits for minimum_slot_utilization up to max_queue_delay_microseconds (qa test_queue_delay_full_min_util)", async () => {
    const h = harness(2, "direct { max_queue_delay_microseconds: 3000000 minimum_slot_utilization: 1.0 }");
    const a = h.send(1, { id: 1n, start: true, end: true });
    await h.settle();
    assert.equal(h.batches.length, 0, "one of two slots busy: below the utilization, so it waits");
    h.clock.advanceUs(3_000_001);
    assert.equal(await a, 1);
    assert.equal(h.batches.length, 1);
    await h.scheduler.close();
  });
});

describe("sequence batcher: several instances", () => {
  it("each instance's batcher holds its own slots: 4 sequences on 2 instances of 2 slots need no backlog", async () => {
    const h = harness(2, "direct { }", "", 2);
    const sums = await Promise.all([1, 2, 3, 4].map((n) => runSequence(h, BigInt(n), [n, n * 10, n * 100])));
    assert.deepEqual(sums, [111, 222, 333, 444]);
    // Slots fill lowest index first, across instances: each first batch has its instance's two sequences.
    assert.deepEqual(
      h.batches.slice(0, 2).map((batch) => batch.map((row) => row.corrId)),
      [
        [1n, 3n],
        [2n, 4n],
      ],
    );
    assert.equal(h.stats.statistics().inference_count, 12);
    await h.scheduler.close();
  });
});

describe("sequence batcher: oldest strategy", () => {
  it("batches the oldest candidates' next requests without padding, one in flight per sequence", async () => {
    const h = harness(4, "oldest { max_candidate_sequences: 4 }");
    const sums = await Promise.all([runSequence(h, 1n, [1, 2]), runSequence(h, 9n, [10, 20, 30])]);
    assert.deepEqual(sums, [3, 60]);
    for (const batch of h.batches) assert.ok(batch.every((row) => row.ready));
    assert.equal(h.stats.statistics().inference_count, 5);
    await h.scheduler.close();
  });
});

describe("sequence batcher: idle sequences and backlog timeouts", () => {
  it("a sequence idle past max_sequence_idle_microseconds loses its slot to the backlog (qa test_backlog_sequence_timeout)", async () => {
    const h = harness(0);
    assert.equal(await h.send(1, { id: 1n, start: true }), 1);
    const waiting = h.send(100, { id: 2n, start: true, end: true });
    await h.settle();
    assert.equal(h.batches.length, 1, "the second sequence waits for the only slot");
    h.clock.advanceUs(5_000_000);
    assert.equal(await waiting, 100);
    await assert.rejects(
      h.send(2, { id: 1n }),
      /must specify the START flag on the first request of the sequence/,
    );
    await h.scheduler.close();
  });

  it("a backlogged sequence whose request timeout passes fails every request it queued (qa test_request_timeout)", async () => {
    const h = harness(0);
    assert.equal(await h.send(1, { id: 1n, start: true }), 1);
    const first = h.send(10, { id: 2n, start: true }, { timeoutUs: 3_000_000 });
    const second = h.send(11, { id: 2n });
    const expired = {
      status: "UNAVAILABLE",
      message: "timeout of the corresponding sequence has been expired",
    };
    h.clock.advanceUs(3_000_001);
    await assert.rejects(first, expired);
    await assert.rejects(second, expired);
    assert.equal(await h.send(2, { id: 1n, end: true }), 3);
    await h.scheduler.close();
  });
});

describe("sequence batcher: bounded", () => {
  it("past --max-pending-requests queued requests, a new one gets 503 naming the cap; the queued ones are answered", async () => {
    const h = harness(0, "direct { }", "", 1, 3);
    // One slot: the first sequence runs, the next ones wait in the backlog.
    const queued = [1, 2, 3].map((n) => h.send(n, { id: BigInt(n), start: true, end: true }));
    await assert.rejects(h.send(9, { id: 9n, start: true, end: true }), {
      status: "UNAVAILABLE",
      message:
        "[request id: <id_unknown>] Exceeds the server's limit of 3 pending requests for model 'seq' (--max-pending-requests)",
    });
    assert.deepEqual(await Promise.all(queued), [1, 2, 3]);
    assert.equal(h.stats.metrics().failuresByReason["REJECTED"], 1);
    await h.scheduler.close();
  });
});

describe("sequence batcher: lifetime", () => {
  it("destroy fails what is queued; close answers what is queued first", async () => {
    const h = harness(0);
    assert.equal(await h.send(1, { id: 1n, start: true }), 1);
    const queued = h.send(5, { id: 2n, start: true });
    await h.scheduler.destroy();
    await assert.rejects(queued, { status: "UNAVAILABLE" });
    const g = harness(0);
    const answered = g.send(3, { id: 1n, start: true });
    await g.scheduler.close();
    assert.equal(await answered, 3);
    await assert.rejects(g.send(1, { id: 4n, start: true }), /Server is stopping/);
  });
});
