/** Auto-complete and normalization rules on plain objects (Triton's onnxruntime backend and core defaults). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ModelConfig } from "@tbench/proto";
import { silentLogger } from "../core/logger.js";
import { autoCompleteConfig, type OnnxModelInfo } from "./auto-complete.js";
import { fillModelIdentity, normalizeModelConfig } from "./config-normalize.js";
import { validateIoConfig, validateSchedulingConfig } from "./config-validate.js";

const batching: OnnxModelInfo = {
  inputs: [
    { name: "x", ortType: "float32", dims: [-1, 3, -1] },
    { name: "s", ortType: "int64", dims: [-1] },
  ],
  outputs: [{ name: "y", ortType: "string", dims: [-1, 2] }],
};

describe("auto-complete from the ONNX model", () => {
  it("fills inputs, outputs, max_batch_size 4 and dynamic_batching for a batching model", () => {
    const config: ModelConfig = { name: "m" };
    assert.equal(autoCompleteConfig(config, batching, silentLogger), undefined);
    assert.deepEqual(config, {
      name: "m",
      max_batch_size: 4,
      dynamic_batching: {},
      input: [
        { name: "x", data_type: "TYPE_FP32", dims: ["3", "-1"] },
        // A batch-only input is a scalar per row: dims [1] with an empty reshape.
        { name: "s", data_type: "TYPE_INT64", reshape: { shape: [] }, dims: ["1"] },
      ],
      output: [{ name: "y", data_type: "TYPE_STRING", dims: ["2"] }],
    });
    normalizeModelConfig(config);
    assert.deepEqual(config["dynamic_batching"], { preferred_batch_size: [4] });
    assert.equal(validateIoConfig(config), undefined);
  });

  it("keeps max_batch_size 0 for a model whose first dimension is fixed, and refuses a non-zero one", () => {
    const fixed: OnnxModelInfo = {
      inputs: [{ name: "x", ortType: "float32", dims: [2, 3] }],
      outputs: [{ name: "y", ortType: "float32", dims: [2] }],
    };
    const config: ModelConfig = { name: "m" };
    assert.equal(autoCompleteConfig(config, fixed, silentLogger), undefined);
    assert.equal(config["max_batch_size"], undefined);
    assert.deepEqual(config["input"], [{ name: "x", data_type: "TYPE_FP32", dims: ["2", "3"] }]);
    assert.equal(
      autoCompleteConfig({ name: "m", max_batch_size: 8 }, fixed, silentLogger),
      "autofill failed for model 'm': model does not support batching while non-zero max_batch_size is specified",
    );
  });

  it("does nothing when inputs and outputs are given; completes only the missing side", () => {
    const given: ModelConfig = { name: "m", input: [{ name: "x" }], output: [{ name: "y" }] };
    autoCompleteConfig(given, batching, silentLogger);
    assert.deepEqual(given, { name: "m", input: [{ name: "x" }], output: [{ name: "y" }] });
    const half: ModelConfig = {
      name: "m",
      max_batch_size: 2,
      input: [{ name: "x", data_type: "TYPE_FP32", dims: ["3", "-1"] }],
    };
    autoCompleteConfig(half, batching, silentLogger);
    assert.deepEqual(half["output"], [{ name: "y", data_type: "TYPE_STRING", dims: ["2"] }]);
    assert.deepEqual(
      half["dynamic_batching"],
      {},
      "a batching model with max_batch_size > 1 gets dynamic_batching",
    );
    const single: ModelConfig = { name: "m", max_batch_size: 1, input: [{ name: "x" }] };
    autoCompleteConfig(single, batching, silentLogger);
    assert.equal(single["dynamic_batching"], undefined, "max_batch_size 1: no dynamic_batching added");
  });
});

describe("normalization and validation", () => {
  it("fills identity, version policy, instance groups (onnxruntime on CPU: count 2)", () => {
    const config: ModelConfig = { max_batch_size: 8, instance_group: [{ count: 3 }, {}] };
    fillModelIdentity(config, "m", true);
    normalizeModelConfig(config);
    assert.equal(config["backend"], "onnxruntime");
    assert.equal(config["platform"], "onnxruntime_onnx");
    assert.equal(config["default_model_filename"], "model.onnx");
    assert.deepEqual(config["version_policy"], { latest: { num_versions: 1 } });
    assert.deepEqual(config["instance_group"], [
      { count: 3, name: "m_0", kind: "KIND_CPU" },
      { name: "m_1", kind: "KIND_CPU", count: 2 },
    ]);
  });

  it("checks priority levels, preserve_ordering conflicts and IO shapes with Triton's messages", () => {
    const base = (): ModelConfig => ({
      name: "m",
      max_batch_size: 8,
      instance_group: [{ name: "g", kind: "KIND_CPU", count: 1 }],
    });
    assert.equal(
      validateSchedulingConfig({
        ...base(),
        dynamic_batching: { priority_levels: "2", default_priority_level: "3" },
      }),
      "default priority level must be in range [1, 2] for m",
    );
    assert.equal(
      validateSchedulingConfig({
        ...base(),
        dynamic_batching: {
          preserve_ordering: true,
          default_queue_policy: { timeout_action: "DELAY", default_timeout_microseconds: "5" },
        },
      }),
      "Queue policy can not have DELAY as timeout action when 'preserve_ordering' is true for m",
    );
    assert.equal(
      validateSchedulingConfig({ ...base(), dynamic_batching: { preferred_batch_size: [0] } }),
      "dynamic batching preferred size must be positive for m",
    );
    assert.equal(
      validateIoConfig({ ...base(), input: [{ name: "x", data_type: "TYPE_FP32", dims: ["0"] }] }),
      "model input 'x' dimension must be integer >= 1, or -1 to indicate a variable-size dimension for m",
    );
    assert.equal(
      validateIoConfig({ ...base(), input: [{ name: "x", data_type: "TYPE_FP32" }] }),
      "model input 'x' must specify 'dims' for m",
    );
    assert.equal(
      validateIoConfig({
        ...base(),
        output: [{ name: "y", data_type: "TYPE_FP32", dims: ["4"], reshape: { shape: ["3"] } }],
      }),
      "model output 'y' has different size for dims and reshape for m",
    );
  });
});
