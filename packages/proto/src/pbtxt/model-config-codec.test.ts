import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { describe, test } from "node:test";
import {
  applyModelConfigDefaults,
  type ModelConfig,
  parseModelConfig,
  printModelConfig,
  TextFormatError,
  TextFormatValueError,
} from "../index.js";

const SIMPLE = `# Triton's quickstart model
name: "simple"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [
  {
    name: "INPUT0"
    data_type: TYPE_INT32
    dims: [ 16 ]
  },
  {
    name: "INPUT1"
    data_type: TYPE_INT32
    dims: [ 16 ]
  }
]
output [ { name: "OUTPUT0", data_type: TYPE_INT32, dims: [ 16 ] } ]
dynamic_batching { preferred_batch_size: [ 4, 8 ] max_queue_delay_microseconds: 100 }
instance_group [ { count: 2 kind: KIND_CPU } ]
parameters { key: "threads" value: { string_value: "1" } }
`;

const SIMPLE_OBJECT: ModelConfig = {
  name: "simple",
  platform: "onnxruntime_onnx",
  max_batch_size: 8,
  input: [
    { name: "INPUT0", data_type: "TYPE_INT32", dims: ["16"] },
    { name: "INPUT1", data_type: "TYPE_INT32", dims: ["16"] },
  ],
  output: [{ name: "OUTPUT0", data_type: "TYPE_INT32", dims: ["16"] }],
  dynamic_batching: { preferred_batch_size: [4, 8], max_queue_delay_microseconds: "100" },
  instance_group: [{ count: 2, kind: "KIND_CPU" }],
  parameters: { threads: { string_value: "1" } },
};

describe("model config entry points", () => {
  test("parseModelConfig gives the proto3 JSON form with .proto field names", () => {
    assert.deepStrictEqual(parseModelConfig(SIMPLE), SIMPLE_OBJECT);
  });

  test("parse errors name config.pbtxt unless told another file name", () => {
    assert.throws(() => parseModelConfig("max_batchsize: 8"), {
      name: "TextFormatError",
      message:
        'config.pbtxt:1:1: unknown field "max_batchsize" in message inference.ModelConfig (did you mean "max_batch_size"?)',
    });
    assert.throws(
      () => parseModelConfig('name: "a"\n  input { dims: [ 1 2 ] }', { fileName: "models/a/config.pbtxt" }),
      (error: unknown) =>
        error instanceof TextFormatError &&
        error.message ===
          `models/a/config.pbtxt:2:21: expected ',' or ']' in the list of field "dims", found number 2` &&
        error.line === 2 &&
        error.column === 21,
    );
  });

  test("printModelConfig writes the config as a Triton user does", () => {
    assert.equal(
      printModelConfig(SIMPLE_OBJECT),
      `name: "simple"
platform: "onnxruntime_onnx"
max_batch_size: 8
input {
  name: "INPUT0"
  data_type: TYPE_INT32
  dims: [ 16 ]
}
input {
  name: "INPUT1"
  data_type: TYPE_INT32
  dims: [ 16 ]
}
output {
  name: "OUTPUT0"
  data_type: TYPE_INT32
  dims: [ 16 ]
}
dynamic_batching {
  preferred_batch_size: [ 4, 8 ]
  max_queue_delay_microseconds: 100
}
instance_group {
  kind: KIND_CPU
  count: 2
}
parameters {
  key: "threads"
  value {
    string_value: "1"
  }
}
`,
    );
  });

  test("printModelConfig rejects values that do not fit, naming the path", () => {
    const bad = { input: [{ name: "x", data_type: "TYPE_FLOAT" }] } as unknown as ModelConfig;
    assert.throws(
      () => printModelConfig(bad),
      (error: unknown) => {
        assert.ok(error instanceof TextFormatValueError);
        assert.equal(error.path, "input[0].data_type");
        assert.match(
          error.message,
          /^input\[0\]\.data_type: unknown value string "TYPE_FLOAT" for enum inference\.DataType/,
        );
        return true;
      },
    );
  });

  test("applyModelConfigDefaults fills fields without presence the way Triton's JSON config shows them", () => {
    const config = parseModelConfig(`
      name: "m"
      input { name: "x" data_type: TYPE_FP32 dims: [ -1 ] }
      dynamic_batching { }
      version_policy { latest { } }
      parameters { key: "p" value { } }
    `);
    const filled = applyModelConfigDefaults(config);
    assert.deepStrictEqual(filled, {
      name: "m",
      platform: "",
      backend: "",
      runtime: "",
      version_policy: { latest: { num_versions: 0 } },
      max_batch_size: 0,
      input: [
        {
          name: "x",
          data_type: "TYPE_FP32",
          format: "FORMAT_NONE",
          dims: ["-1"],
          is_shape_tensor: false,
          allow_ragged_batch: false,
          optional: false,
          is_non_linear_format_io: false,
        },
      ],
      output: [],
      batch_input: [],
      batch_output: [],
      dynamic_batching: {
        preferred_batch_size: [],
        max_queue_delay_microseconds: "0",
        preserve_ordering: false,
        priority_levels: "0",
        default_priority_level: "0",
        priority_queue_policy: {},
      },
      instance_group: [],
      default_model_filename: "",
      cc_model_filenames: {},
      metric_tags: {},
      parameters: { p: { string_value: "" } },
      model_warmup: [],
    });
    // The input is not modified, and filling is idempotent.
    assert.deepStrictEqual(config, {
      name: "m",
      input: [{ name: "x", data_type: "TYPE_FP32", dims: ["-1"] }],
      dynamic_batching: {},
      version_policy: { latest: {} },
      parameters: { p: {} },
    });
    assert.deepStrictEqual(applyModelConfigDefaults(filled), filled);
    // The filled form prints and parses back unchanged too.
    assert.deepStrictEqual(parseModelConfig(printModelConfig(filled)), filled);
  });
});

describe("the bundled model repository (examples/models)", () => {
  const modelsDir = new URL("../../../../examples/models/", import.meta.url);
  const models = existsSync(modelsDir)
    ? readdirSync(modelsDir, { withFileTypes: true })
        .filter(
          (entry) => entry.isDirectory() && existsSync(new URL(`${entry.name}/config.pbtxt`, modelsDir)),
        )
        .map((entry) => entry.name)
        .sort()
    : [];

  test("has config.pbtxt files to check", () => {
    assert.ok(
      models.includes("simple"),
      `examples/models has no simple/config.pbtxt (found: ${models.join(", ")})`,
    );
  });

  for (const model of models) {
    test(`${model}/config.pbtxt parses, names its directory, and round-trips`, () => {
      const text = readFileSync(new URL(`${model}/config.pbtxt`, modelsDir), "utf8");
      const config = parseModelConfig(text, { fileName: `examples/models/${model}/config.pbtxt` });
      assert.equal(config.name, model);
      assert.deepStrictEqual(parseModelConfig(printModelConfig(config)), config);
    });
  }
});
