import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseModelConfig } from "@tbench/proto";
import { normalizeModelConfig } from "./config-normalize.js";
import { sequenceBatchingSpec, validateSequenceBatching } from "./sequence-batching.js";

function config(sequence: string, maxBatchSize = 4) {
  const parsed = parseModelConfig(
    `name: "m" platform: "onnxruntime_onnx" max_batch_size: ${maxBatchSize} sequence_batching { ${sequence} }`,
  );
  normalizeModelConfig(parsed);
  return parsed;
}

const problem = (sequence: string, maxBatchSize = 4) =>
  validateSequenceBatching(config(sequence, maxBatchSize));

describe("sequence_batching: Triton's defaults", () => {
  it("an idle timeout of 0 or none is 1 s; no strategy is direct with max(1, max_batch_size) slots", () => {
    const c = config("");
    assert.equal(c.sequence_batching?.max_sequence_idle_microseconds, "1000000");
    const spec = sequenceBatchingSpec(c)!;
    assert.equal(spec.maxSequenceIdleUs, 1_000_000);
    assert.deepEqual(spec.strategy, { kind: "direct", maxQueueDelayUs: 0, minimumSlotUtilization: 0 });
    assert.equal(spec.slotsPerInstance, 4);
    assert.equal(sequenceBatchingSpec(config("", 0))!.slotsPerInstance, 1);
  });

  it("oldest: max_candidate_sequences 0 means max(1, max_batch_size); preferred sizes default to [max_batch_size]", () => {
    const spec = sequenceBatchingSpec(config("oldest { max_queue_delay_microseconds: 100 }", 8))!;
    assert.deepEqual(spec.strategy, {
      kind: "oldest",
      maxCandidateSequences: 8,
      preferredBatchSizes: [8],
      maxQueueDelayUs: 100,
      preserveOrdering: false,
    });
    assert.equal(spec.slotsPerInstance, 8);
  });

  it("controls: each form's false/true values, CORRID's type, and the state's initial shape", () => {
    const spec = sequenceBatchingSpec(
      config(`
        control_input [
          { name: "S" control [ { kind: CONTROL_SEQUENCE_START fp32_false_true: [ 0, 1 ] } ] },
          { name: "R" control [ { kind: CONTROL_SEQUENCE_READY bool_false_true: [ false, true ] } ] },
          { name: "C" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_STRING } ] }
        ]
        state [ { input_name: "I" output_name: "O" data_type: TYPE_FP32 dims: [ -1, 2 ] } ]`),
    )!;
    assert.deepEqual(spec.controls, [
      { kind: "START", name: "S", datatype: "FP32", values: [0, 1] },
      { kind: "READY", name: "R", datatype: "BOOL", values: [false, true] },
      { kind: "CORRID", name: "C", datatype: "BYTES" },
    ]);
    assert.deepEqual(spec.states[0], {
      inputName: "I",
      outputName: "O",
      datatype: "FP32",
      dims: [-1, 2],
      initialDims: [1, 2],
      initial: { kind: "zero" },
    });
  });
});

describe("sequence_batching: Triton's checks and words", () => {
  const cases: [string, string, number?][] = [
    [
      `control_input [ { control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] } ]`,
      "sequence batching control tensor must have a name for m",
    ],
    [
      `control_input [ { name: "A" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] },
                       { name: "A" control [ { kind: CONTROL_SEQUENCE_END int32_false_true: [ 0, 1 ] } ] } ]`,
      "sequence batching control tensor 'A' is specified for multiple control kinds for m",
    ],
    [
      `control_input [ { name: "A" control [ { kind: CONTROL_SEQUENCE_END int32_false_true: [ 0, 1 ] } ] },
                       { name: "B" control [ { kind: CONTROL_SEQUENCE_END int32_false_true: [ 0, 1 ] } ] } ]`,
      "sequence batching specifies multiple CONTROL_SEQUENCE_END tensors for m",
    ],
    [
      `control_input [ { name: "A" control [ { kind: CONTROL_SEQUENCE_READY } ] } ]`,
      "sequence batching must specify either 'int32_false_true', 'fp32_false_true' or 'bool_false_true' for CONTROL_SEQUENCE_READY for m",
    ],
    [
      `control_input [ { name: "A" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] fp32_false_true: [ 0, 1 ] } ] } ]`,
      "sequence batching specifies more than one from 'int32_false_true', 'fp32_false_true' and 'bool_false_true' for CONTROL_SEQUENCE_START for m",
    ],
    [
      `control_input [ { name: "A" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1, 1 ] } ] } ]`,
      "sequence batching control 'int32_false_true' must have exactly 2 entries for CONTROL_SEQUENCE_START for m",
    ],
    [
      `control_input [ { name: "A" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_FP32 } ] } ]`,
      "unexpected data type for control CONTROL_SEQUENCE_CORRID for m. Allowed data types are TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 and TYPE_STRING",
    ],
    [
      `control_input [ { name: "A" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 int32_false_true: [ 0, 1 ] } ] } ]`,
      "sequence batching must not specify either 'int32_false_true', 'fp32_false_true' or 'bool_false_true' for CONTROL_SEQUENCE_CORRID for m",
    ],
    [
      `oldest { preferred_batch_size: [ 0 ] }`,
      "sequence batching preferred batch size must be positive for m",
    ],
    [
      `oldest { preferred_batch_size: [ 8 ] }`,
      "sequence batching preferred batch size must be <= max batch size for m",
    ],
    [
      `direct { minimum_slot_utilization: 1.5 }`,
      "sequence batching minimum slot utilization must be in range (0.0, 1.0] for m",
    ],
    [
      `state [ { input_name: "I" output_name: "O" data_type: TYPE_INT32 dims: [ 1 ]
                 initial_state: [ { data_type: TYPE_INT32 dims: [ 1 ] zero_data: true name: "a" },
                                  { data_type: TYPE_INT32 dims: [ 1 ] zero_data: true name: "b" } ] } ]`,
      "initial_state field for state input 'I' must contain exactly one or zero element. Found '2' elements.",
    ],
    [
      `state [ { input_name: "I" output_name: "O" data_type: TYPE_INT32 dims: [ 1 ]
                 initial_state: { data_type: TYPE_FP32 dims: [ 1 ] zero_data: true name: "a" } } ]`,
      "The data type used for 'initial_state' field of state 'I' does not match the state data type.",
    ],
    [
      `state [ { input_name: "I" output_name: "O" data_type: TYPE_INT32 dims: [ 1 ]
                 initial_state: { data_type: TYPE_INT32 dims: [ 1 ] zero_data: true } } ]`,
      "Field 'name' must be set when using initial_state for state input 'I'.",
    ],
    [
      `state [ { input_name: "I" output_name: "O" data_type: TYPE_INT32 dims: [ 2 ]
                 initial_state: { data_type: TYPE_INT32 dims: [ 3 ] zero_data: true name: "a" } } ]`,
      "'initial_state' dim for input name 'I' doesn't match 'state' dim description. 3 != 2",
    ],
    [
      `state [ { input_name: "I" output_name: "O" data_type: TYPE_INT32 dims: [ -1 ]
                 initial_state: { data_type: TYPE_INT32 dims: [ -1 ] zero_data: true name: "a" } } ]`,
      "'initial_state' field for state input name 'I' contains variable dimensions.",
    ],
    [
      `state [ { input_name: "I" output_name: "O" data_type: TYPE_INT32 dims: [ 1 ]
                 initial_state: { data_type: TYPE_INT32 dims: [ 1 ] name: "a" } } ]`,
      "initial_state setting expects state'I' to have state_data set",
    ],
  ];
  for (const [sequence, message, maxBatchSize] of cases) {
    it(message, () => assert.equal(problem(sequence, maxBatchSize), message));
  }
  it("a valid section has no problem", () => {
    assert.equal(
      problem(`direct { max_queue_delay_microseconds: 100 minimum_slot_utilization: 0.5 }
               control_input [ { name: "C" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_INT32 } ] } ]`),
      undefined,
    );
  });
});
