/**
 * The sequence batcher on a fake clock and a fake pool, with Triton's qa cases (L0_sequence_batcher,
 * L0_implicit_state) as the expected values: running sums, batch statistics with padding rows, backlog,
 * idle reaping, backlog timeouts, START conflicts, and the control values each row gets. The fake pool
 * computes what the bundled models compute: OUTPUT = INPUT + INPUT_STATE (the accumulator) and echoes the
 * controls, and records every batch. Each fake instance keeps its states as an instance thread does, in a
 * real state store of its own: a batch run on another instance than its batcher's would not find them.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseModelConfig } from "@tbench/proto";
import type { Logger } from "../core/logger.js";
import type { InferenceRequest, InferenceResponse, SequenceFlags } from "../core/types.js";
import type { InstanceLoss, PoolRunTarget } from "../instances/instance-pool.js";
import { type InstanceRun, sequenceRun } from "../instances/instance-types.js";
import { createSequenceStateStore, type SequenceStateStore } from "../instances/sequence-state-store.js";
import type { SequenceStateSetup, ThreadTensor } from "../instances/worker-protocol.js";
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

/** A fake instance: the thread-side state store a real instance keeps, and whether it got the setup. */
interface FakeInstance {
  readonly store: SequenceStateStore;
  sentSetup: SequenceStateSetup | undefined;
}

interface Harness {
  readonly clock: FakeClock;
  readonly batches: Row[][];
  readonly warnings: string[];
  readonly stats: ReturnType<typeof createModelStats>;
  readonly scheduler: ReturnType<typeof createSequenceBatchScheduler>;
  /** The instance each batch ran on, in batch order. */
  readonly ranOn: number[];
  /** The fake instances by index (their state stores). */
  readonly instances: FakeInstance[];
  /** Kills instance `index`: its states go, and the scheduler is told as the pool tells it. */
  kill(index: number, replacing?: boolean): void;
  /** Whether the fake instances take batches (false: requests stay queued); true tells the scheduler. */
  setIdle(idle: boolean): void;
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
  const fresh = (): FakeInstance => ({ store: createSequenceStateStore(), sentSetup: undefined });
  const fakes = Array.from({ length: instances }, fresh);
  const ranOn: number[] = [];
  let idle = true;
  const pool = {
    hasIdleInstance: () => idle,
    close: async () => {},
    async run(batch: InstanceRun, target: PoolRunTarget) {
      ranOn.push(target.instance);
      const fake = fakes[target.instance]!;
      // What the instance's handle and thread do with a sequence batch (worker-instance, session-runner).
      const sequence = batch.sequence!;
      const run = sequenceRun(sequence, sequence.setup === fake.sentSetup ? undefined : sequence.setup);
      fake.sentSetup = sequence.setup;
      const { feeds, outputNames } = fake.store.begin(run);
      assert.deepEqual(outputNames, ["OUTPUT_STATE"]);
      assert.deepEqual(batch.outputNames, ["OUTPUT"], "state outputs are the thread's, never asked back");
      const values = input(batch.inputs, "INPUT") as Int32Array;
      const state = feeds.find((f) => f.name === "INPUT_STATE")!.data as Int32Array;
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
      fake.store.keep(run, (name) => (name === "OUTPUT_STATE" ? { dims, data: sum.slice() } : undefined));
      return {
        outputs: [{ name: "OUTPUT", ortType: "int32" as const, dims, data: sum }],
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
    ranOn,
    instances: fakes,
    kill(index, replacing = true) {
      fakes[index] = fresh();
      const loss: InstanceLoss = {
        index,
        name: `seq_${index}`,
        reason: "worker exited with code 70",
        replacing,
      };
      scheduler.instanceLost?.(loss);
    },
    setIdle(value) {
      idle = value;
      if (value) scheduler.instanceIdle();
    },
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

describe("sequence batcher: states live in the batcher's instance", () => {
  it("batcher b's batches run on instance b, whose store alone keeps its sequences' states", async () => {
    const h = harness(2, "direct { }", "", 2);
    const sums = await Promise.all([1, 2, 3, 4].map((n) => runSequence(h, BigInt(n), [n, n * 10, n * 100])));
    assert.deepEqual(sums, [111, 222, 333, 444]);
    // Sequences 1 and 3 hold instance 0's slots, 2 and 4 instance 1's: every batch ran where its rows' are.
    h.batches.forEach((batch, i) => {
      const expected = batch.every((row) => row.corrId === 0n || row.corrId % 2n === 1n) ? 0 : 1;
      assert.equal(h.ranOn[i], expected, `batch ${i} (${batch.map((row) => row.corrId)})`);
    });
    for (const fake of h.instances)
      assert.deepEqual(fake.store.held(), { slots: 0, bytes: 0 }, "END dropped all");
    await h.scheduler.close();
  });

  it("END drops the state in the instance; an idle-reaped sequence's goes with the instance's next batch", async () => {
    const h = harness(2);
    const store = () => h.instances[0]!.store.held();
    assert.equal(await h.send(1, { id: 1n, start: true }), 1);
    assert.equal(await h.send(2, { id: 2n, start: true }), 2);
    assert.deepEqual(store(), { slots: 2, bytes: 8 });
    assert.equal(await h.send(5, { id: 2n, end: true }), 7);
    assert.deepEqual(store(), { slots: 1, bytes: 4 });
    h.clock.advanceUs(5_000_000);
    await h.settle();
    assert.deepEqual(store(), { slots: 1, bytes: 4 }, "reaped on the main thread; the instance learns next");
    assert.equal(await h.send(9, { id: 3n, start: true, end: true }), 9);
    assert.deepEqual(store(), { slots: 0, bytes: 0 });
    await h.scheduler.close();
  });
});

describe("sequence batcher: an instance that dies", () => {
  const lost = (id: number, instance = 0) => ({
    status: "INTERNAL",
    message:
      `inference request for sequence ${id} to model 'seq' cannot continue: its state was lost when model ` +
      `instance 'seq_${instance}' died (worker exited with code 70); start the sequence again with the START flag`,
  });

  it("its sequences' next requests fail with the loss until START; the other instance's go on", async () => {
    const h = harness(2, "direct { }", "", 2);
    // Sequences 1 and 3 on instance 0, 2 on instance 1.
    assert.deepEqual(
      await Promise.all([1, 2, 3].map((n) => h.send(n, { id: BigInt(n), start: true }))),
      [1, 2, 3],
    );
    h.kill(0);
    await assert.rejects(h.send(10, { id: 1n }), lost(1));
    await assert.rejects(h.send(10, { id: 1n }), lost(1), "every request, not only the first");
    await assert.rejects(h.send(10, { id: 3n, end: true }), lost(3));
    await assert.rejects(
      h.send(10, { id: 3n }),
      /must specify the START flag on the first request of the sequence/,
      "its END ended it",
    );
    assert.equal(await h.send(20, { id: 2n, end: true }), 22, "instance 1 kept its state");
    assert.equal(await h.send(7, { id: 5n, start: true }), 7, "a new sequence is served");
    assert.equal(await h.send(4, { id: 1n, start: true }), 4, "START begins it again");
    assert.equal(await h.send(4, { id: 1n, end: true }), 8);
    assert.equal(h.stats.metrics().failuresByReason["BACKEND"], 3);
    await h.scheduler.close();
  });

  it("a lost sequence's queued requests fail at once; a START queued after them goes on with a new state", async () => {
    const h = harness(2);
    assert.equal(await h.send(1, { id: 1n, start: true }), 1);
    assert.equal(await h.send(1, { id: 2n, start: true }), 1);
    h.setIdle(false);
    const queued = h.send(10, { id: 1n });
    const restarted = h.send(100, { id: 1n, start: true });
    const waiting = h.send(5, { id: 9n, start: true, end: true });
    await h.settle();
    h.kill(0);
    await assert.rejects(queued, lost(1));
    h.setIdle(true);
    assert.equal(await restarted, 100);
    assert.equal(await waiting, 5, "a START waiting in the backlog takes the freed slot");
    await assert.rejects(h.send(1, { id: 2n }), lost(2));
    await h.scheduler.close();
  });

  it("a sequence whose START has not run yet keeps its slot and runs on the replacement", async () => {
    const h = harness(2);
    h.setIdle(false);
    const first = h.send(3, { id: 1n, start: true });
    await h.settle();
    h.kill(0);
    h.setIdle(true);
    assert.equal(await first, 3);
    assert.equal(await h.send(4, { id: 1n, end: true }), 7);
    await h.scheduler.close();
  });

  it("not replaced: its batcher takes no sequence again; its waiting ones move to the other instance", async () => {
    const h = harness(2, "direct { }", "", 2);
    assert.equal(await h.send(1, { id: 1n, start: true }), 1);
    h.setIdle(false);
    // Slot 0 of instance 1 for sequence 2, slot 1 of instance 0 for sequence 3: neither ran yet.
    const second = h.send(2, { id: 2n, start: true });
    const third = h.send(3, { id: 3n, start: true });
    await h.settle();
    h.kill(0, false);
    await assert.rejects(h.send(1, { id: 1n }), lost(1));
    h.setIdle(true);
    assert.deepEqual(await Promise.all([second, third]), [2, 3]);
    assert.deepEqual(
      await Promise.all([h.send(30, { id: 3n, end: true }), h.send(20, { id: 2n, end: true })]),
      [33, 22],
    );
    assert.equal(await h.send(5, { id: 4n, start: true, end: true }), 5);
    const after = h.ranOn.slice(1);
    assert.ok(after.length > 0 && after.every((instance) => instance === 1), `ran on ${after}`);
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
