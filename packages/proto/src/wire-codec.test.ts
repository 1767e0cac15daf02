// The generated static code on the wire: encode/decode round trips, and byte-for-byte agreement with the
// real protoc (`protoc --encode`) and with the reflection root the pbtxt codec uses.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { skipWithout } from "../../../scripts/testing/system-tools.js";
import { inference, type ModelConfig, modelConfigType, protoRoot } from "./index.js";

const withoutProtoc = skipWithout("protoc");

const protoDir = fileURLToPath(new URL("../../../proto/", import.meta.url));

/** `protoc --encode=<type>`: protobuf text format in, binary out. */
function protocEncode(typeName: string, text: string): Uint8Array {
  const result = spawnSync(
    "protoc",
    [`--proto_path=${protoDir}`, `--encode=${typeName}`, "grpc_service.proto", "health.proto"],
    { input: text },
  );
  if (result.error)
    throw new Error(
      `protoc is required for the wire tests (apt-get install protobuf-compiler): ${result.error.message}`,
    );
  assert.equal(result.status, 0, `protoc --encode failed: ${result.stderr.toString()}`);
  return new Uint8Array(result.stdout);
}

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");

// A config exercising 64-bit and negative ints, enums, a oneof, nested messages, repeated and packed
// fields and single-entry maps (one entry, so map order cannot differ between encoders).
const configText = `
name: "heavy"
backend: "onnxruntime"
max_batch_size: 32
version_policy { specific { versions: [1, 3] } }
input { name: "INPUT0" data_type: TYPE_FP32 dims: [-1, 16] reshape { shape: [16] } }
output { name: "OUTPUT0" data_type: TYPE_INT64 dims: [1] label_filename: "labels.txt" }
instance_group { name: "cpu" kind: KIND_CPU count: 2 gpus: [0, 1] }
dynamic_batching {
  preferred_batch_size: [8, 16]
  max_queue_delay_microseconds: 18446744073709551615
  priority_levels: 2
  default_priority_level: 2
  default_queue_policy { timeout_action: DELAY default_timeout_microseconds: 9007199254740993 max_queue_size: 64 }
  priority_queue_policy { key: 1 value { timeout_action: REJECT max_queue_size: 8 } }
}
parameters { key: "intra_op_thread_count" value { string_value: "1" } }
model_warmup { name: "zeros" batch_size: 4 inputs { key: "INPUT0" value { data_type: TYPE_FP32 dims: [16] zero_data: true } } }
`;

const configJson: ModelConfig = {
  name: "heavy",
  backend: "onnxruntime",
  max_batch_size: 32,
  version_policy: { specific: { versions: ["1", "3"] } },
  input: [{ name: "INPUT0", data_type: "TYPE_FP32", dims: ["-1", "16"], reshape: { shape: ["16"] } }],
  output: [{ name: "OUTPUT0", data_type: "TYPE_INT64", dims: ["1"], label_filename: "labels.txt" }],
  instance_group: [{ name: "cpu", kind: "KIND_CPU", count: 2, gpus: [0, 1] }],
  dynamic_batching: {
    preferred_batch_size: [8, 16],
    max_queue_delay_microseconds: "18446744073709551615",
    priority_levels: "2",
    default_priority_level: "2",
    default_queue_policy: {
      timeout_action: "DELAY",
      default_timeout_microseconds: "9007199254740993",
      max_queue_size: 64,
    },
    // timeout_action REJECT is the enum's zero value: proto3 leaves it off the wire, as protoc does.
    priority_queue_policy: { "1": { max_queue_size: 8 } },
  },
  parameters: { intra_op_thread_count: { string_value: "1" } },
  model_warmup: [
    {
      name: "zeros",
      batch_size: 4,
      inputs: { INPUT0: { data_type: "TYPE_FP32", dims: ["16"], zero_data: true } },
    },
  ],
};

/** Lossless plain-object form: 64-bit as strings, enums by name (the JSON form ModelConfig types). */
const jsonForm = { longs: String, enums: String } as const;

describe("ModelConfig through the generated static code", { skip: withoutProtoc }, () => {
  test("the JSON-form object encodes to exactly protoc's bytes for the same config.pbtxt", () => {
    const ours = inference.ModelConfig.encode(inference.ModelConfig.fromObject(configJson)).finish();
    assert.equal(hex(ours), hex(protocEncode("inference.ModelConfig", configText)));
  });

  test("protoc's bytes decode to the same JSON form, 64-bit values intact beyond 2^53", () => {
    const decoded = inference.ModelConfig.decode(protocEncode("inference.ModelConfig", configText));
    assert.deepEqual(inference.ModelConfig.toObject(decoded, jsonForm), configJson);
    assert.equal(decoded.scheduling_choice, "dynamic_batching");
  });

  test("encode then decode gives back the config", () => {
    const bytes = inference.ModelConfig.encode(inference.ModelConfig.fromObject(configJson)).finish();
    assert.deepEqual(
      inference.ModelConfig.toObject(inference.ModelConfig.decode(bytes), jsonForm),
      configJson,
    );
  });

  test("the reflection type (modelConfigType) encodes the same bytes as the static code", () => {
    const type = modelConfigType();
    const viaReflection = type.encode(type.fromObject(configJson)).finish();
    assert.equal(hex(viaReflection), hex(protocEncode("inference.ModelConfig", configText)));
    assert.deepEqual(type.toObject(type.decode(viaReflection), jsonForm), configJson);
  });

  test("ModelConfigResponse carries the config as field 1", () => {
    const config = inference.ModelConfig.fromObject({ name: "simple", max_batch_size: 8 });
    const response = inference.ModelConfigResponse.encode({ config }).finish();
    const inner = inference.ModelConfig.encode(config).finish();
    assert.equal(hex(response), `0a${inner.length.toString(16).padStart(2, "0")}${hex(inner)}`);
  });
});

describe("ModelInferRequest / ModelInferResponse through the generated static code", {
  skip: withoutProtoc,
}, () => {
  const input0 = new Uint8Array(new Int32Array([1, -2, 3, 2147483647]).buffer);
  const input1 = new Uint8Array([0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, 0x80, 0, 0, 0x80, 1, 2, 3, 4]);
  const request = {
    model_name: "simple",
    model_version: "1",
    id: "req-42",
    parameters: { sequence_id: { uint64_param: "18446744073709551615" } },
    inputs: [
      { name: "INPUT0", datatype: "INT32", shape: ["1", "4"] },
      { name: "INPUT1", datatype: "INT32", shape: ["1", "4"] },
    ],
    outputs: [{ name: "OUTPUT0", parameters: { binary_data: { bool_param: true } } }],
    raw_input_contents: [input0, input1],
  };
  const requestText = `
model_name: "simple"
model_version: "1"
id: "req-42"
parameters { key: "sequence_id" value { uint64_param: 18446744073709551615 } }
inputs { name: "INPUT0" datatype: "INT32" shape: [1, 4] }
inputs { name: "INPUT1" datatype: "INT32" shape: [1, 4] }
outputs { name: "OUTPUT0" parameters { key: "binary_data" value { bool_param: true } } }
raw_input_contents: "${[...input0].map((b) => `\\${b.toString(8).padStart(3, "0")}`).join("")}"
raw_input_contents: "${[...input1].map((b) => `\\${b.toString(8).padStart(3, "0")}`).join("")}"
`;

  test("a request with raw_input_contents encodes to exactly protoc's bytes", () => {
    const ours = inference.ModelInferRequest.encode(inference.ModelInferRequest.fromObject(request)).finish();
    assert.equal(hex(ours), hex(protocEncode("inference.ModelInferRequest", requestText)));
  });

  test("decode gives back the raw tensor bytes unchanged and in input order", () => {
    const bytes = inference.ModelInferRequest.encode(
      inference.ModelInferRequest.fromObject(request),
    ).finish();
    const decoded = inference.ModelInferRequest.decode(bytes);
    assert.equal(decoded.raw_input_contents.length, 2);
    assert.deepEqual(new Uint8Array(decoded.raw_input_contents[0] as Uint8Array), input0);
    assert.deepEqual(new Uint8Array(decoded.raw_input_contents[1] as Uint8Array), input1);
    assert.deepEqual(
      inference.ModelInferRequest.toObject(decoded, { longs: String, bytes: String }).inputs,
      request.inputs,
    );
    const back = inference.ModelInferRequest.toObject(decoded, { longs: String });
    assert.deepEqual(back["parameters"], request.parameters);
  });

  test("a response with raw_output_contents and typed contents round-trips", () => {
    const output = new Uint8Array(new Float32Array([0.5, -1.25]).buffer);
    const response = {
      model_name: "simple",
      model_version: "1",
      outputs: [
        { name: "OUTPUT0", datatype: "FP32", shape: ["2"] },
        {
          name: "OUTPUT1",
          datatype: "INT64",
          shape: ["2"],
          contents: { int64_contents: ["-1", "9007199254740993"] },
        },
      ],
      raw_output_contents: [output],
    };
    const bytes = inference.ModelInferResponse.encode(
      inference.ModelInferResponse.fromObject(response),
    ).finish();
    const decoded = inference.ModelInferResponse.decode(bytes);
    assert.deepEqual(new Uint8Array(decoded.raw_output_contents[0] as Uint8Array), output);
    const back = inference.ModelInferResponse.toObject(decoded, { longs: String });
    assert.deepEqual(back["outputs"], response.outputs);
  });

  test("the reflection root encodes a request the same way as the static code", () => {
    const type = protoRoot().lookupType("inference.ModelInferRequest");
    assert.equal(
      hex(type.encode(type.fromObject(request)).finish()),
      hex(inference.ModelInferRequest.encode(inference.ModelInferRequest.fromObject(request)).finish()),
    );
  });
});
