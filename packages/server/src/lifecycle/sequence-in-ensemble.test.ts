/**
 * A stateful model as an ensemble step: the member request carries the ensemble request's correlation id
 * and START/END, as Triton passes them on, so the member's running state follows the ensemble's sequence.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createFixtureRepository, createRecordingLogger } from "../testing/test-fixtures.js";
import { createInferenceCore } from "./create-inference-core.js";

describe("a stateful model inside an ensemble", () => {
  test("its step gets the ensemble request's correlation id and START/END (Triton passes them on)", async () => {
    const ensemble = `name: "seq_ensemble"
platform: "ensemble"
max_batch_size: 8
input [ { name: "X" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "SUM" data_type: TYPE_INT32 dims: [ 1 ] } ]
ensemble_scheduling {
  step [ { model_name: "sequence_accumulator" model_version: -1
           input_map { key: "INPUT" value: "X" } output_map { key: "OUTPUT" value: "SUM" } } ]
}`;
    const repo = createFixtureRepository({
      sequence_accumulator: { config: "bundled" },
      seq_ensemble: { config: ensemble, versions: [], extraDirs: ["1"] },
    });
    const core = await createInferenceCore({ modelRepository: repo.dir, logger: createRecordingLogger() });
    try {
      const sums: number[] = [];
      for (const [i, value] of [3, 4, 5].entries()) {
        const response = await core.infer({
          model: "seq_ensemble",
          inputs: [{ name: "X", datatype: "INT32", shape: [1, 1], data: new Int32Array([value]) }],
          sequence: { id: 31n, start: i === 0, end: i === 2 },
        });
        sums.push((response.outputs[0]!.data as Int32Array)[0]!);
      }
      assert.deepEqual(sums, [3, 7, 12]);
    } finally {
      await core.close();
      repo.remove();
    }
  });
});
