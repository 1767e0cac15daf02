import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_SEQUENCE_OPTIONS } from "../load/sequence-manager.js";
import { runTbench } from "../testing/cli-harness.js";
import { resolveBenchConfig } from "./bench-config.js";
import {
  type RawSequenceFlags,
  resolveSequenceFlags,
  SEQUENCE_LENGTH_WARNING,
  START_SEQUENCE_ID_WARNING,
} from "./sequence-flags.js";

function resolve(raw: RawSequenceFlags) {
  const warnings: string[] = [];
  const options = resolveSequenceFlags(raw, (line) => warnings.push(line));
  return { options, warnings };
}

function refused(raw: RawSequenceFlags): string {
  try {
    resolveSequenceFlags(raw, () => {});
  } catch (error) {
    assert.equal((error as { exitCode?: number }).exitCode, 2, "a usage error");
    return (error as Error).message;
  }
  assert.fail("expected a usage error");
}

describe("perf_analyzer's sequence flags", () => {
  it("defaults: length 20, variation 20%, ids from 1 (2^32-1 of them), 4 sequences, not serial", () => {
    assert.deepEqual(resolve({}), {
      options: {
        length: 20,
        lengthSpecified: false,
        lengthVariationPercent: 20,
        idStart: 1,
        idRange: 4294967295,
        numOfSequences: 4,
        serial: false,
      },
      warnings: [],
    });
  });

  it("takes each flag's value", () => {
    const { options, warnings } = resolve({
      sequenceLength: "5",
      sequenceLengthVariation: "12.5",
      sequenceIdRange: "100:110",
      numOfSequences: "8",
      serialSequences: true,
    });
    assert.deepEqual(options, {
      length: 5,
      lengthSpecified: true,
      lengthVariationPercent: 12.5,
      idStart: 100,
      idRange: 10,
      numOfSequences: 8,
      serial: true,
    });
    assert.deepEqual(warnings, []);
    assert.deepEqual(
      [resolve({ sequenceIdRange: "7" }).options.idStart, resolve({ sequenceIdRange: "7" }).options.idRange],
      [7, 4294967295],
      "start only: the range stays unbounded",
    );
    assert.equal(resolve({ sequenceLengthVariation: "0" }).options.lengthVariationPercent, 0);
  });

  it("--sequence-length <= 0: perf_analyzer's warning, the default stays, and it counts as given", () => {
    for (const text of ["0", "-3"]) {
      const { options, warnings } = resolve({ sequenceLength: text });
      assert.deepEqual([options.length, options.lengthSpecified], [20, true]);
      assert.deepEqual(warnings, [
        "WARNING: The sequence length must be > 0. Perf Analyzer will use default value if it is measuring on sequence model.",
      ]);
    }
    assert.equal(SEQUENCE_LENGTH_WARNING, resolve({ sequenceLength: "0" }).warnings[0]);
  });

  it("start id 0: perf_analyzer's warning, start 1, the range still counted from 0", () => {
    const { options, warnings } = resolve({ sequenceIdRange: "0:10" });
    assert.deepEqual([options.idStart, options.idRange], [1, 10]);
    assert.deepEqual(warnings, [
      "WARNING: using an invalid start sequence id. Perf Analyzer will use default value if it is measuring on sequence model.",
    ]);
    assert.equal(START_SEQUENCE_ID_WARNING, warnings[0]);
  });

  it("refuses with perf_analyzer's messages", () => {
    assert.equal(
      refused({ sequenceLengthVariation: "-1" }),
      "Failed to parse --sequence-length-variation. The value must be >= 0.0.",
    );
    for (const text of ["0", "-2"]) {
      assert.equal(
        refused({ numOfSequences: text }),
        "Failed to parse --num-of-sequences. The value must be > 0.",
      );
    }
    assert.equal(
      refused({ sequenceIdRange: "1:2:3" }),
      "Failed to parse --sequence-id-range. The value does not match <start:end>.",
    );
    for (const text of ["-1:5", "2:-5"]) {
      assert.equal(
        refused({ sequenceIdRange: text }),
        "Failed to parse --sequence-id-range. The range values must be >= 0.",
      );
    }
    for (const text of ["9:3", "4:4"]) {
      assert.equal(
        refused({ sequenceIdRange: text }),
        "Failed to parse --sequence-id-range. The 'end' value must be greater than 'start' value.",
      );
    }
  });

  it("a value that is no number: perf_analyzer's 'Invalid value provided' with the whole value", () => {
    assert.equal(
      refused({ sequenceLength: "many" }),
      "Failed to parse --sequence-length. Invalid value provided: many",
    );
    assert.equal(
      refused({ sequenceLength: "5.5" }),
      "Failed to parse --sequence-length. Invalid value provided: 5.5",
    );
    assert.equal(
      refused({ sequenceLengthVariation: "wide" }),
      "Failed to parse --sequence-length-variation. Invalid value provided: wide",
    );
    assert.equal(
      refused({ numOfSequences: "" }),
      "Failed to parse --num-of-sequences. Invalid value provided: ",
    );
    assert.equal(
      refused({ sequenceIdRange: "5:" }),
      "Failed to parse --sequence-id-range. Invalid value provided: 5:",
    );
    assert.equal(
      refused({ sequenceIdRange: "3000000000" }),
      "Failed to parse --sequence-id-range. Invalid value provided: 3000000000",
      "beyond std::stoi's int",
    );
  });

  it("on the command line: one line on stderr, exit code 2; warnings go to stderr and the run goes on", async () => {
    const noServer = {
      createClient: () => {
        throw new Error("no server call is expected");
      },
    };
    const run = await runTbench(["-m", "acc", "--num-of-sequences", "0"], noServer);
    assert.deepEqual(run, {
      code: 2,
      stderr: "tbench: error: Failed to parse --num-of-sequences. The value must be > 0.\n",
    });
    const warned = await runTbench(["-m", "acc", "--sequence-length", "0", "--serial-sequences"], noServer);
    assert.equal(warned.code, 1, "got past the flags (then no server)");
    assert.ok(warned.stderr.startsWith(`${SEQUENCE_LENGTH_WARNING}\n`), warned.stderr);
    const config = resolveBenchConfig({
      model: "acc",
      sequenceIdRange: "5:9",
      numOfSequences: "3",
      serialSequences: true,
    });
    assert.deepEqual(config.sequence, {
      ...DEFAULT_SEQUENCE_OPTIONS,
      idStart: 5,
      idRange: 4,
      numOfSequences: 3,
      serial: true,
    });
  });
});
