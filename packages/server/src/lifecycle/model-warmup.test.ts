/**
 * model_warmup: a version is READY only after its samples ran (zero, random, or a file under warmup/), and a
 * sample that fails leaves the version UNAVAILABLE with Triton's "failed to run warmup sample" reason.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { bundledConfig, createFixtureRepository, createRecordingLogger } from "../testing/test-fixtures.js";
import { createInferenceCore } from "./create-inference-core.js";

/** Eight ASCII bytes: two FP32 values (fixture files are written as text). */
const TWO_FLOATS = "abcdefgh";

function withWarmup(warmup: string): string {
  return `${bundledConfig("identity_fp32")}\n${warmup}\n`;
}

async function indexOf(warmup: string, files: Record<string, string> = {}) {
  const repo = createFixtureRepository({
    identity_fp32: { config: withWarmup(warmup), extraDirs: ["warmup"], extraFiles: files },
  });
  const core = await createInferenceCore({ modelRepository: repo.dir, logger: createRecordingLogger() });
  try {
    return await core.repositoryIndex();
  } finally {
    await core.close();
    repo.remove();
  }
}

describe("model_warmup", () => {
  test("zero, random and file samples run before the version is READY", async () => {
    const index = await indexOf(
      `model_warmup [
        { name: "zeros" batch_size: 2 count: 3 inputs { key: "INPUT0" value: { data_type: TYPE_FP32 dims: [ 4 ] zero_data: true } } },
        { name: "random" batch_size: 1 inputs { key: "INPUT0" value: { data_type: TYPE_FP32 dims: [ 4 ] random_data: true } } },
        { name: "file" batch_size: 1 inputs { key: "INPUT0" value: { data_type: TYPE_FP32 dims: [ 2 ] input_data_file: "two_floats" } } }
      ]`,
      { "warmup/two_floats": TWO_FLOATS },
    );
    assert.deepEqual(index, [{ name: "identity_fp32", version: "1", state: "READY", reason: "" }]);
  });

  test("a failing sample leaves the version UNAVAILABLE with the reason", async () => {
    const [row] = await indexOf(
      `model_warmup [ { name: "bad" batch_size: 1 inputs { key: "NOPE" value: { data_type: TYPE_FP32 dims: [ 4 ] zero_data: true } } } ]`,
    );
    assert.equal(row?.state, "UNAVAILABLE");
    assert.match(row?.reason ?? "", /failed to run warmup sample 'bad': .*NOPE/);
  });

  test("a data file of the wrong size, or one outside the model's directory, is refused", async () => {
    const [short] = await indexOf(
      `model_warmup [ { name: "short" batch_size: 1 inputs { key: "INPUT0" value: { data_type: TYPE_FP32 dims: [ 4 ] input_data_file: "two_floats" } } } ]`,
      { "warmup/two_floats": TWO_FLOATS },
    );
    assert.equal(short?.state, "UNAVAILABLE");
    assert.match(short?.reason ?? "", /failed to run warmup sample 'short': .*has 8 bytes, expected 16/);
    const [outside] = await indexOf(
      `model_warmup [ { name: "out" batch_size: 1 inputs { key: "INPUT0" value: { data_type: TYPE_FP32 dims: [ 4 ] input_data_file: "../../x" } } } ]`,
    );
    assert.equal(outside?.state, "UNAVAILABLE");
    assert.match(outside?.reason ?? "", /must name a file inside the model's directory/);
  });
});
