/**
 * A sequence model's initial_state from a file (`<model>/initial_state/<data_file>`, as Triton reads it):
 * every running sum of the accumulator starts from the file's value (qa L0_implicit_state: +100), a file
 * shorter than the state fails the load with Triton's words, and a path out of the model directory is
 * refused before anything is read.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { bundledConfig, createFixtureRepository, createRecordingLogger } from "../testing/test-fixtures.js";
import { createInferenceCore } from "./create-inference-core.js";

/** The accumulator's config with its zero initial state replaced by a file. */
function fromFile(file: string): string {
  return bundledConfig("sequence_accumulator").replace("zero_data: true", `data_file: "${file}"`);
}

async function withCore<T>(
  file: string,
  contents: Record<string, string>,
  use: (core: Awaited<ReturnType<typeof createInferenceCore>>) => Promise<T>,
): Promise<T> {
  const repo = createFixtureRepository({
    sequence_accumulator: { config: fromFile(file), extraDirs: ["initial_state"], extraFiles: contents },
  });
  const core = await createInferenceCore({ modelRepository: repo.dir, logger: createRecordingLogger() });
  try {
    return await use(core);
  } finally {
    await core.close();
    repo.remove();
  }
}

const step = (value: number, id: bigint, start: boolean, end: boolean) => ({
  model: "sequence_accumulator",
  inputs: [{ name: "INPUT", datatype: "INT32" as const, shape: [1, 1], data: new Int32Array([value]) }],
  sequence: { id, start, end },
});

describe("initial_state from a file", () => {
  test("each sequence starts from the file's value: 100 + 1 + 2 + 3", async () => {
    // INT32 100, little-endian (fixture files are written as text).
    await withCore("hundred", { "initial_state/hundred": "d\u0000\u0000\u0000" }, async (core) => {
      const sums: number[] = [];
      for (const [i, value] of [1, 2, 3].entries()) {
        const response = await core.infer(step(value, 9n, i === 0, i === 2));
        sums.push((response.outputs[0]!.data as Int32Array)[0]!);
      }
      assert.deepEqual(sums, [101, 103, 106]);
    });
  });

  test("a file shorter than the state fails the load with Triton's words", async () => {
    await withCore("short", { "initial_state/short": "d\u0000" }, async (core) => {
      const [row] = await core.repositoryIndex();
      assert.equal(row?.state, "UNAVAILABLE");
      assert.match(
        row?.reason ?? "",
        /initial_state setting expects 4 bytes, but the data provided from shortonly has 2 bytes\./,
      );
    });
  });

  test("a data_file that leaves the model directory is refused", async () => {
    await withCore("../../etc/passwd", {}, async (core) => {
      const [row] = await core.repositoryIndex();
      assert.equal(row?.state, "UNAVAILABLE");
      assert.match(row?.reason ?? "", /initial_state data_file/);
    });
  });
});
