// The golden messages: each fixture file (protobuf text format, written by hand against
// proto/grpc_service.proto in protoc's canonical layout) with the values our generated code must read
// from protoc's bytes, in the lossless plain-object form (64-bit integers as decimal strings, enums by
// name, bytes as Uint8Array).
import { inference } from "../../index.js";

/** What the golden tests need of a generated message class. */
export interface GeneratedMessageType {
  encode(message: never): { finish(): Uint8Array };
  decode(bytes: Uint8Array): unknown;
  fromObject(object: Record<string, unknown>): unknown;
  toObject(message: never, options: Record<string, unknown>): Record<string, unknown>;
}

export interface GoldenCase {
  /** File name under golden/fixtures/. */
  readonly fixture: string;
  /** Fully qualified name for protoc. */
  readonly typeName: string;
  readonly type: GeneratedMessageType;
  readonly expected: Record<string, unknown>;
}

/** Bytes from hex digits (spaces ignored). */
export const hexBytes = (hex: string): Uint8Array =>
  new Uint8Array(Buffer.from(hex.replace(/\s+/g, ""), "hex"));
const utf8 = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, "utf8"));
const as = (type: unknown): GeneratedMessageType => type as GeneratedMessageType;

const I64_MAX = "9223372036854775807";
const I64_MIN = "-9223372036854775808";
const U64_MAX = "18446744073709551615";

export const GOLDEN_CASES: readonly GoldenCase[] = [
  {
    fixture: "model-infer-request-typed.txtpb",
    typeName: "inference.ModelInferRequest",
    type: as(inference.ModelInferRequest),
    expected: {
      model_name: "golden_typed",
      model_version: "3",
      id: "typed-1",
      parameters: {
        // A oneof member set to its zero value still travels (it has presence).
        binary_data_output: { bool_param: false },
        priority: { uint64_param: U64_MAX },
        sequence_id: { int64_param: I64_MAX },
        tag: { string_param: 'a "quoted" tag\n' },
        temperature: { double_param: 0.25 },
        timeout: { int64_param: I64_MIN },
      },
      inputs: [
        { name: "BOOL", datatype: "BOOL", shape: ["3"], contents: { bool_contents: [true, false, true] } },
        {
          name: "INT32",
          datatype: "INT32",
          shape: ["2", "2"],
          contents: { int_contents: [-1, -2147483648, 2147483647, 0] },
        },
        {
          name: "INT64",
          datatype: "INT64",
          shape: ["3"],
          contents: { int64_contents: [I64_MAX, I64_MIN, "9007199254740993"] },
        },
        { name: "UINT32", datatype: "UINT32", shape: ["2"], contents: { uint_contents: [4294967295, 1] } },
        {
          name: "UINT64",
          datatype: "UINT64",
          shape: ["2"],
          contents: { uint64_contents: [U64_MAX, "9223372036854775808"] },
        },
        {
          name: "FP32",
          datatype: "FP32",
          shape: ["5"],
          contents: { fp32_contents: [0.5, -1.25, 3.4028234663852886e38, -0, Number.POSITIVE_INFINITY] },
        },
        {
          name: "FP64",
          datatype: "FP64",
          shape: ["3"],
          contents: { fp64_contents: [0.1, -2.5e-300, Number.NEGATIVE_INFINITY] },
        },
        {
          name: "BYTES",
          datatype: "BYTES",
          shape: ["3"],
          parameters: { binary_data_size: { int64_param: "0" } },
          contents: { bytes_contents: [utf8("hello"), hexBytes("0001ff"), new Uint8Array(0)] },
        },
      ],
      outputs: [{ name: "SCORES", parameters: { classification: { int64_param: "3" } } }, { name: "INT64" }],
    },
  },
  {
    fixture: "model-infer-request-raw.txtpb",
    typeName: "inference.ModelInferRequest",
    type: as(inference.ModelInferRequest),
    expected: {
      model_name: "golden_raw",
      id: "raw-1",
      parameters: { triton_enable_empty_final_response: { bool_param: true } },
      inputs: [
        { name: "INPUT0", datatype: "INT32", shape: ["1", "2"] },
        { name: "INPUT1", datatype: "BYTES", shape: ["2"] },
        { name: "INPUT2", datatype: "FP16", shape: ["2"] },
      ],
      outputs: [{ name: "OUTPUT0" }],
      raw_input_contents: [
        hexBytes("01000000 feffffff"), // INT32 1, -2
        hexBytes("02000000 6162 00000000"), // BYTES "ab", ""
        hexBytes("003c 00c0"), // FP16 1.0, -2.0
      ],
    },
  },
  {
    fixture: "model-infer-response.txtpb",
    typeName: "inference.ModelInferResponse",
    type: as(inference.ModelInferResponse),
    expected: {
      model_name: "golden_raw",
      model_version: "1",
      id: "raw-1",
      parameters: {
        sequence_id: { string_param: "corr-7" },
        triton_final_response: { bool_param: true },
      },
      outputs: [
        { name: "OUTPUT0", datatype: "INT64", shape: ["1", "2"] },
        {
          name: "SCORES",
          datatype: "BYTES",
          shape: ["1", "1"],
          parameters: { binary_data_size: { int64_param: "16" } },
        },
      ],
      raw_output_contents: [
        hexBytes("ffffffffffffff7f 0000000000000080"), // INT64 2^63-1, -2^63
        new Uint8Array([12, 0, 0, 0, ...utf8("0.875000:3:7")]), // a classification entry value:index:label
      ],
    },
  },
  {
    fixture: "model-stream-infer-response.txtpb",
    typeName: "inference.ModelStreamInferResponse",
    type: as(inference.ModelStreamInferResponse),
    expected: {
      error_message: "Request for unknown model: 'nope' is not found",
      infer_response: { id: "stream-2" },
    },
  },
  {
    fixture: "repository-index-response.txtpb",
    typeName: "inference.RepositoryIndexResponse",
    type: as(inference.RepositoryIndexResponse),
    expected: {
      models: [
        {
          name: "broken",
          version: "1",
          state: "UNAVAILABLE",
          reason: "failed to load 'broken' version 1: Invalid argument: unexpected inference input 'X'",
        },
        { name: "simple", version: "1", state: "READY" },
        { name: "unloaded" },
      ],
    },
  },
  {
    fixture: "repository-model-load-request.txtpb",
    typeName: "inference.RepositoryModelLoadRequest",
    type: as(inference.RepositoryModelLoadRequest),
    expected: {
      model_name: "simple",
      parameters: {
        config: { string_param: '{"max_batch_size": 8, "backend": "onnxruntime"}' },
        "file:1/model.onnx": { bytes_param: hexBytes("0807 1204 6f6e6e78 00ff") },
      },
    },
  },
  {
    fixture: "model-statistics-response.txtpb",
    typeName: "inference.ModelStatisticsResponse",
    type: as(inference.ModelStatisticsResponse),
    expected: {
      model_stats: [
        {
          name: "simple",
          version: "1",
          last_inference: "1764780000123",
          inference_count: U64_MAX,
          execution_count: "3",
          inference_stats: {
            success: { count: "10", ns: "123456789" },
            fail: { count: "1", ns: "5000" },
            queue: { count: "10", ns: "9007199254740993" },
            compute_input: { count: "10", ns: "1000" },
            compute_infer: { count: "10", ns: "20000" },
            compute_output: { count: "10", ns: "300" },
          },
          batch_stats: [
            {
              batch_size: "1",
              compute_input: { count: "2", ns: "200" },
              compute_infer: { count: "2", ns: "4000" },
              compute_output: { count: "2", ns: "60" },
            },
            {
              batch_size: "8",
              compute_input: { count: "1", ns: "100" },
              compute_infer: { count: "1", ns: U64_MAX },
              compute_output: { count: "1", ns: "30" },
            },
          ],
          memory_usage: [{ type: "CPU", id: "-1", byte_size: "4096" }],
          response_stats: { "0": { success: { count: "10", ns: "7000" } } },
        },
        // An empty nested message is still present (protoc prints `success {\n}`).
        { name: "unused", version: "2", inference_stats: { success: {} } },
      ],
    },
  },
  {
    fixture: "server-metadata-response.txtpb",
    typeName: "inference.ServerMetadataResponse",
    type: as(inference.ServerMetadataResponse),
    expected: {
      name: "triton",
      version: "2.73.0dev",
      extensions: [
        "classification",
        "sequence",
        "model_repository",
        "model_repository(unload_dependents)",
        "schedule_policy",
        "model_configuration",
        "system_shared_memory",
        "cuda_shared_memory",
        "binary_tensor_data",
        "parameters",
        "statistics",
        "trace",
        "logging",
      ],
    },
  },
  {
    fixture: "model-metadata-response.txtpb",
    typeName: "inference.ModelMetadataResponse",
    type: as(inference.ModelMetadataResponse),
    expected: {
      name: "simple",
      versions: ["1", "3"],
      platform: "onnxruntime_onnx",
      inputs: [{ name: "INPUT0", datatype: "INT32", shape: ["-1", "16"] }],
      outputs: [{ name: "OUTPUT0", datatype: "INT32", shape: ["-1", "16"] }],
    },
  },
  {
    fixture: "model-config-response-dynamic-batching.txtpb",
    typeName: "inference.ModelConfigResponse",
    type: as(inference.ModelConfigResponse),
    expected: {
      config: {
        name: "heavy",
        platform: "onnxruntime_onnx",
        version_policy: { latest: { num_versions: 2 } },
        max_batch_size: 64,
        input: [{ name: "INPUT0", data_type: "TYPE_FP32", dims: ["256"] }],
        output: [{ name: "OUTPUT0", data_type: "TYPE_FP32", dims: ["10"] }],
        instance_group: [
          { name: "heavy_cpu", count: 2, kind: "KIND_CPU" },
          { name: "heavy_gpu", count: 1, gpus: [0, 1], kind: "KIND_GPU" },
        ],
        default_model_filename: "model.onnx",
        dynamic_batching: {
          preferred_batch_size: [16, 32],
          max_queue_delay_microseconds: "500",
          preserve_ordering: true,
          priority_levels: "2",
          default_priority_level: "1",
          default_queue_policy: {
            timeout_action: "DELAY",
            default_timeout_microseconds: "100000",
            allow_timeout_override: true,
            max_queue_size: 128,
          },
          // REJECT is the enum's zero value: not on the wire, not in protoc's text.
          priority_queue_policy: {
            "1": { max_queue_size: 8 },
            "2": { timeout_action: "DELAY", max_queue_size: 64 },
          },
        },
        parameters: { intra_op_thread_count: { string_value: "1" } },
        backend: "onnxruntime",
      },
    },
  },
  {
    fixture: "model-config-response-ensemble.txtpb",
    typeName: "inference.ModelConfigResponse",
    type: as(inference.ModelConfigResponse),
    expected: {
      config: {
        name: "ensemble_pipeline",
        platform: "ensemble",
        max_batch_size: 8,
        input: [{ name: "RAW", data_type: "TYPE_UINT8", dims: ["-1"] }],
        output: [{ name: "SCORES", data_type: "TYPE_FP32", dims: ["10"] }],
        ensemble_scheduling: {
          step: [
            {
              model_name: "preprocess",
              model_version: "-1",
              input_map: { INPUT0: "RAW" },
              output_map: { OUTPUT0: "features" },
            },
            {
              model_name: "heavy",
              model_version: "2",
              input_map: { INPUT0: "features" },
              output_map: { OUTPUT0: "SCORES" },
            },
          ],
        },
      },
    },
  },
];

/** The plain-object form the cases are written in. */
export const JSON_FORM = { longs: String, enums: String } as const;

/** Copies every Uint8Array (Buffer included) into a plain Uint8Array so deepEqual compares bytes only. */
export function plainBytes(value: unknown): unknown {
  if (value instanceof Uint8Array) return new Uint8Array(value);
  if (Array.isArray(value)) return value.map(plainBytes);
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plainBytes(v)]));
  return value;
}
