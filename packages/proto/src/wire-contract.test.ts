// The wire contract as the real protoc sees it: proto/*.proto compiled to a FileDescriptorSet, compared
// with Triton's RPC list and field numbers (taken from triton-inference-server/common protobuf/*.proto)
// and with the generated reflection descriptor that the package ships.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";
import { skipWithout } from "../../../scripts/testing/system-tools.js";
import { grpc, grpcInferenceServiceMethods, healthServiceMethods, inference } from "./index.js";
import { protoRoot } from "./proto-root.js";

const withoutProtoc = skipWithout("protoc");

const protoDir = fileURLToPath(new URL("../../../proto/", import.meta.url));
const protoFiles = ["model_config.proto", "grpc_service.proto", "health.proto"];

/** Loose view of descriptor.proto messages as protobufjs's toObject gives them (camelCase names). */
interface FieldProto {
  name: string;
  number: number;
  label: string;
  type: string;
  typeName?: string;
  oneofIndex?: number;
}
interface MessageProto {
  name: string;
  field?: FieldProto[];
  nestedType?: MessageProto[];
  enumType?: EnumProto[];
  oneofDecl?: { name: string }[];
  options?: { mapEntry?: boolean };
}
interface EnumProto {
  name: string;
  value?: { name: string; number: number }[];
}
interface MethodProto {
  name: string;
  inputType: string;
  outputType: string;
  clientStreaming?: boolean;
  serverStreaming?: boolean;
}
interface FileProto {
  name: string;
  package: string;
  dependency?: string[];
  messageType?: MessageProto[];
  enumType?: EnumProto[];
  service?: { name: string; method?: MethodProto[] }[];
}

/** Runs protoc on every proto and decodes the descriptor set with descriptor.proto from protobufjs. */
function protocDescriptorSet(): FileProto[] {
  const work = mkdtempSync(join(tmpdir(), "tbench-wire-"));
  try {
    const out = join(work, "set.pb");
    const result = spawnSync(
      "protoc",
      [`--proto_path=${protoDir}`, `--descriptor_set_out=${out}`, "--include_imports", ...protoFiles],
      { encoding: "utf8" },
    );
    if (result.error)
      throw new Error(
        `protoc is required for the wire tests (apt-get install protobuf-compiler): ${result.error.message}`,
      );
    assert.equal(result.status, 0, `protoc failed: ${result.stderr}`);
    const require = createRequire(import.meta.url);
    const descriptorRoot = protobuf.Root.fromJSON(require("protobufjs/google/protobuf/descriptor.json"));
    const setType = descriptorRoot.lookupType("google.protobuf.FileDescriptorSet");
    const set = setType.toObject(setType.decode(readFileSync(out)), { enums: String, longs: Number }) as {
      file: FileProto[];
    };
    return set.file;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// A normalised schema, one entry per message or enum full name, built once from protoc's descriptors and
// once from the protobufjs reflection root; the two must be deep-equal.
type FieldView = {
  name: string;
  number: number;
  type: string;
  label: "repeated" | "single" | "map";
  keyType?: string;
  oneof?: string;
};
type SchemaView = Record<string, { fields: FieldView[] } | { values: Record<string, number> }>;

const protocScalar: Record<string, string> = {
  TYPE_DOUBLE: "double",
  TYPE_FLOAT: "float",
  TYPE_INT64: "int64",
  TYPE_UINT64: "uint64",
  TYPE_INT32: "int32",
  TYPE_FIXED64: "fixed64",
  TYPE_FIXED32: "fixed32",
  TYPE_BOOL: "bool",
  TYPE_STRING: "string",
  TYPE_BYTES: "bytes",
  TYPE_UINT32: "uint32",
  TYPE_SFIXED32: "sfixed32",
  TYPE_SFIXED64: "sfixed64",
  TYPE_SINT32: "sint32",
  TYPE_SINT64: "sint64",
};

function protocView(files: FileProto[]): SchemaView {
  const view: SchemaView = {};
  const mapEntries = new Map<string, MessageProto>();
  const collectEntries = (prefix: string, messages: MessageProto[] = []): void => {
    for (const message of messages) {
      const name = `${prefix}.${message.name}`;
      if (message.options?.mapEntry) mapEntries.set(name, message);
      collectEntries(name, message.nestedType);
    }
  };
  for (const file of files) collectEntries(`.${file.package}`, file.messageType);

  const typeOf = (field: FieldProto): string =>
    field.typeName !== undefined ? field.typeName : (protocScalar[field.type] ?? field.type);
  const addEnum = (prefix: string, enumeration: EnumProto): void => {
    view[`${prefix}.${enumeration.name}`] = {
      values: Object.fromEntries((enumeration.value ?? []).map((value) => [value.name, value.number])),
    };
  };
  const addMessage = (prefix: string, message: MessageProto): void => {
    const name = `${prefix}.${message.name}`;
    if (message.options?.mapEntry) return;
    view[name] = {
      fields: (message.field ?? []).map((field): FieldView => {
        const entry = field.typeName !== undefined ? mapEntries.get(field.typeName) : undefined;
        const base: FieldView = entry
          ? {
              name: field.name,
              number: field.number,
              label: "map",
              keyType: typeOf(entry.field?.[0] as FieldProto),
              type: typeOf(entry.field?.[1] as FieldProto),
            }
          : {
              name: field.name,
              number: field.number,
              label: field.label === "LABEL_REPEATED" ? "repeated" : "single",
              type: typeOf(field),
            };
        if (field.oneofIndex !== undefined)
          base.oneof = message.oneofDecl?.[field.oneofIndex]?.name as string;
        return base;
      }),
    };
    for (const nested of message.nestedType ?? []) addMessage(name, nested);
    for (const enumeration of message.enumType ?? []) addEnum(name, enumeration);
  };
  for (const file of files) {
    for (const message of file.messageType ?? []) addMessage(`.${file.package}`, message);
    for (const enumeration of file.enumType ?? []) addEnum(`.${file.package}`, enumeration);
  }
  return view;
}

function reflectionView(root: protobuf.Root): SchemaView {
  const view: SchemaView = {};
  const visit = (namespace: protobuf.NamespaceBase): void => {
    for (const nested of namespace.nestedArray) {
      if (nested instanceof protobuf.Enum) view[nested.fullName] = { values: { ...nested.values } };
      else if (nested instanceof protobuf.Type) {
        view[nested.fullName] = {
          fields: nested.fieldsArray.map((field): FieldView => {
            const type = field.resolvedType ? field.resolvedType.fullName : field.type;
            const base: FieldView =
              field instanceof protobuf.MapField
                ? { name: field.name, number: field.id, label: "map", keyType: field.keyType, type }
                : { name: field.name, number: field.id, label: field.repeated ? "repeated" : "single", type };
            if (field.partOf) base.oneof = field.partOf.name;
            return base;
          }),
        };
      }
      if (nested instanceof protobuf.Namespace || nested instanceof protobuf.Type) visit(nested);
    }
  };
  visit(root);
  return view;
}

let files: FileProto[] = [];
before(() => {
  if (withoutProtoc === false) files = protocDescriptorSet();
});
after(() => {
  files = [];
});

function fileNamed(name: string): FileProto {
  const file = files.find((candidate) => candidate.name === name);
  assert.ok(file, `protoc's descriptor set has ${name}`);
  return file;
}

function serviceMethods(fileName: string, service: string): [string, string, string, boolean, boolean][] {
  const found = fileNamed(fileName).service?.find((candidate) => candidate.name === service);
  assert.ok(found, `${fileName} declares service ${service}`);
  return (found.method ?? []).map((method) => [
    method.name,
    method.inputType,
    method.outputType,
    method.clientStreaming === true,
    method.serverStreaming === true,
  ]);
}

describe("proto/*.proto compiled by protoc", { skip: withoutProtoc }, () => {
  test("packages and imports are Triton's", () => {
    assert.deepEqual(
      files.map((file) => [file.name, file.package, file.dependency ?? []]),
      [
        ["model_config.proto", "inference", []],
        ["grpc_service.proto", "inference", ["model_config.proto"]],
        ["health.proto", "grpc.health.v1", []],
      ],
    );
  });

  test("GRPCInferenceService has exactly Triton's RPCs, types and streaming flags, in Triton's order", () => {
    const rpc = (
      name: string,
      request: string,
      response: string,
      clientStream = false,
      serverStream = false,
    ) =>
      [name, `.inference.${request}`, `.inference.${response}`, clientStream, serverStream] as [
        string,
        string,
        string,
        boolean,
        boolean,
      ];
    assert.deepEqual(serviceMethods("grpc_service.proto", "GRPCInferenceService"), [
      rpc("ServerLive", "ServerLiveRequest", "ServerLiveResponse"),
      rpc("ServerReady", "ServerReadyRequest", "ServerReadyResponse"),
      rpc("ModelReady", "ModelReadyRequest", "ModelReadyResponse"),
      rpc("ServerMetadata", "ServerMetadataRequest", "ServerMetadataResponse"),
      rpc("ModelMetadata", "ModelMetadataRequest", "ModelMetadataResponse"),
      rpc("ModelInfer", "ModelInferRequest", "ModelInferResponse"),
      rpc("ModelStreamInfer", "ModelInferRequest", "ModelStreamInferResponse", true, true),
      rpc("ModelConfig", "ModelConfigRequest", "ModelConfigResponse"),
      rpc("ModelStatistics", "ModelStatisticsRequest", "ModelStatisticsResponse"),
      rpc("RepositoryIndex", "RepositoryIndexRequest", "RepositoryIndexResponse"),
      rpc("RepositoryModelLoad", "RepositoryModelLoadRequest", "RepositoryModelLoadResponse"),
      rpc("RepositoryModelUnload", "RepositoryModelUnloadRequest", "RepositoryModelUnloadResponse"),
      rpc("SystemSharedMemoryStatus", "SystemSharedMemoryStatusRequest", "SystemSharedMemoryStatusResponse"),
      rpc(
        "SystemSharedMemoryRegister",
        "SystemSharedMemoryRegisterRequest",
        "SystemSharedMemoryRegisterResponse",
      ),
      rpc(
        "SystemSharedMemoryUnregister",
        "SystemSharedMemoryUnregisterRequest",
        "SystemSharedMemoryUnregisterResponse",
      ),
      rpc("CudaSharedMemoryStatus", "CudaSharedMemoryStatusRequest", "CudaSharedMemoryStatusResponse"),
      rpc("CudaSharedMemoryRegister", "CudaSharedMemoryRegisterRequest", "CudaSharedMemoryRegisterResponse"),
      rpc(
        "CudaSharedMemoryUnregister",
        "CudaSharedMemoryUnregisterRequest",
        "CudaSharedMemoryUnregisterResponse",
      ),
      rpc("TraceSetting", "TraceSettingRequest", "TraceSettingResponse"),
      rpc("LogSettings", "LogSettingsRequest", "LogSettingsResponse"),
    ]);
  });

  test("grpc.health.v1.Health has unary Check and server-streaming Watch", () => {
    assert.deepEqual(serviceMethods("health.proto", "Health"), [
      ["Check", ".grpc.health.v1.HealthCheckRequest", ".grpc.health.v1.HealthCheckResponse", false, false],
      ["Watch", ".grpc.health.v1.HealthCheckRequest", ".grpc.health.v1.HealthCheckResponse", false, true],
    ]);
    const status = protocView(files)[".grpc.health.v1.HealthCheckResponse.ServingStatus"];
    assert.deepEqual(status, { values: { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } });
  });

  test("the generated reflection descriptor agrees with protoc on every message, field and enum value", () => {
    const fromProtoc = protocView(files);
    const fromDescriptor = reflectionView(protoRoot());
    assert.deepEqual(Object.keys(fromDescriptor).sort(), Object.keys(fromProtoc).sort());
    for (const name of Object.keys(fromProtoc))
      assert.deepEqual(fromDescriptor[name], fromProtoc[name], name);
    // Sanity: the comparison covers the whole contract, not an empty set.
    assert.ok(Object.keys(fromProtoc).length >= 100, `${Object.keys(fromProtoc).length} types`);
  });

  test("the generated reflection root keeps the proto services", () => {
    const service = protoRoot().lookupService("inference.GRPCInferenceService");
    assert.equal(service.methodsArray.length, 20);
    const stream = service.methods["ModelStreamInfer"];
    assert.equal(stream?.requestStream, true);
    assert.equal(stream?.responseStream, true);
    assert.equal(protoRoot().lookupService("grpc.health.v1.Health").methods["Watch"]?.responseStream, true);
  });
});

describe("generated gRPC method tables", { skip: withoutProtoc }, () => {
  const tables = [
    ["grpc_service.proto", "inference", "GRPCInferenceService", grpcInferenceServiceMethods, inference],
    ["health.proto", "grpc.health.v1", "Health", healthServiceMethods, grpc.health.v1],
  ] as const;
  for (const [fileName, pkg, service, table, namespace] of tables) {
    test(`${service}: paths, streaming flags and static classes agree with protoc`, () => {
      const classes = namespace as unknown as Record<string, unknown>;
      const fromTable = Object.entries(table).map(([key, method]) => {
        assert.equal(key, method.name);
        const requestName = Object.keys(classes).find((name) => classes[name] === method.requestType);
        const responseName = Object.keys(classes).find((name) => classes[name] === method.responseType);
        return [
          method.path,
          `.${pkg}.${requestName}`,
          `.${pkg}.${responseName}`,
          method.requestStream,
          method.responseStream,
        ];
      });
      const fromProtoc = serviceMethods(fileName, service).map(
        ([name, request, response, client, server]) => [
          `/${pkg}.${service}/${name}`,
          request,
          response,
          client,
          server,
        ],
      );
      assert.deepEqual(fromTable, fromProtoc);
    });
  }

  test("ModelInfer's path is the one Triton serves", () => {
    assert.equal(grpcInferenceServiceMethods.ModelInfer.path, "/inference.GRPCInferenceService/ModelInfer");
    assert.equal(grpcInferenceServiceMethods.ModelInfer.requestType, inference.ModelInferRequest);
  });
});

// Field numbers checked by hand against triton-inference-server/common protobuf/grpc_service.proto and
// protobuf/model_config.proto (main, 2026). [message, field, number, type, label].
const wellKnownFields: [string, string, number, string, FieldView["label"]][] = [
  [".inference.ModelInferRequest", "model_name", 1, "string", "single"],
  [".inference.ModelInferRequest", "model_version", 2, "string", "single"],
  [".inference.ModelInferRequest", "id", 3, "string", "single"],
  [".inference.ModelInferRequest", "parameters", 4, ".inference.InferParameter", "map"],
  [".inference.ModelInferRequest", "inputs", 5, ".inference.ModelInferRequest.InferInputTensor", "repeated"],
  [
    ".inference.ModelInferRequest",
    "outputs",
    6,
    ".inference.ModelInferRequest.InferRequestedOutputTensor",
    "repeated",
  ],
  [".inference.ModelInferRequest", "raw_input_contents", 7, "bytes", "repeated"],
  [".inference.ModelInferRequest.InferInputTensor", "shape", 3, "int64", "repeated"],
  [
    ".inference.ModelInferRequest.InferInputTensor",
    "contents",
    5,
    ".inference.InferTensorContents",
    "single",
  ],
  [
    ".inference.ModelInferResponse",
    "outputs",
    5,
    ".inference.ModelInferResponse.InferOutputTensor",
    "repeated",
  ],
  [".inference.ModelInferResponse", "raw_output_contents", 6, "bytes", "repeated"],
  [".inference.ModelStreamInferResponse", "error_message", 1, "string", "single"],
  [".inference.ModelStreamInferResponse", "infer_response", 2, ".inference.ModelInferResponse", "single"],
  [".inference.InferTensorContents", "bool_contents", 1, "bool", "repeated"],
  [".inference.InferTensorContents", "int_contents", 2, "int32", "repeated"],
  [".inference.InferTensorContents", "int64_contents", 3, "int64", "repeated"],
  [".inference.InferTensorContents", "uint_contents", 4, "uint32", "repeated"],
  [".inference.InferTensorContents", "uint64_contents", 5, "uint64", "repeated"],
  [".inference.InferTensorContents", "fp32_contents", 6, "float", "repeated"],
  [".inference.InferTensorContents", "fp64_contents", 7, "double", "repeated"],
  [".inference.InferTensorContents", "bytes_contents", 8, "bytes", "repeated"],
  [".inference.InferParameter", "uint64_param", 5, "uint64", "single"],
  [".inference.ModelStatistics", "inference_count", 4, "uint64", "single"],
  [".inference.ModelStatistics", "execution_count", 5, "uint64", "single"],
  [".inference.ModelStatistics", "batch_stats", 7, ".inference.InferBatchStatistics", "repeated"],
  [".inference.InferStatistics", "compute_infer", 5, ".inference.StatisticDuration", "single"],
  [".inference.ModelConfig", "max_batch_size", 4, "int32", "single"],
  [".inference.ModelConfig", "input", 5, ".inference.ModelInput", "repeated"],
  [".inference.ModelConfig", "instance_group", 7, ".inference.ModelInstanceGroup", "repeated"],
  [".inference.ModelConfig", "dynamic_batching", 11, ".inference.ModelDynamicBatching", "single"],
  [".inference.ModelConfig", "sequence_batching", 13, ".inference.ModelSequenceBatching", "single"],
  [".inference.ModelConfig", "parameters", 14, ".inference.ModelParameter", "map"],
  [".inference.ModelConfig", "ensemble_scheduling", 15, ".inference.ModelEnsembling", "single"],
  [".inference.ModelConfig", "backend", 17, "string", "single"],
  [".inference.ModelConfig", "runtime", 25, "string", "single"],
  [".inference.ModelConfig", "model_metrics", 26, ".inference.ModelMetrics", "single"],
  [".inference.ModelDynamicBatching", "max_queue_delay_microseconds", 2, "uint64", "single"],
  [".inference.ModelDynamicBatching", "priority_queue_policy", 7, ".inference.ModelQueuePolicy", "map"],
  [".inference.ModelInstanceGroup", "kind", 4, ".inference.ModelInstanceGroup.Kind", "single"],
  [".inference.ModelInstanceGroup", "gpus", 3, "int32", "repeated"],
  [".inference.ModelInput", "dims", 4, "int64", "repeated"],
  [".inference.ModelOutput", "label_filename", 4, "string", "single"],
  [".inference.ModelEnsembling.Step", "input_map", 3, "string", "map"],
];

describe("Triton's well-known field numbers", { skip: withoutProtoc }, () => {
  for (const [message, name, number, type, label] of wellKnownFields) {
    test(`${message.slice(1)}.${name} = ${number}`, () => {
      const entry = protocView(files)[message];
      assert.ok(entry && "fields" in entry, `${message} is a message`);
      const field = entry.fields.find((candidate) => candidate.name === name);
      assert.ok(field, `${message} has ${name}`);
      assert.deepEqual([field.number, field.type, field.label], [number, type, label]);
    });
  }

  test("ModelConfig.scheduling_choice is the oneof of the three schedulers", () => {
    const entry = protocView(files)[".inference.ModelConfig"];
    assert.ok(entry && "fields" in entry);
    assert.deepEqual(
      entry.fields.filter((field) => field.oneof === "scheduling_choice").map((field) => field.name),
      ["dynamic_batching", "sequence_batching", "ensemble_scheduling"],
    );
  });

  test("DataType numbers", () => {
    const dataType = protocView(files)[".inference.DataType"];
    assert.ok(dataType && "values" in dataType);
    assert.deepEqual(dataType.values, {
      TYPE_INVALID: 0,
      TYPE_BOOL: 1,
      TYPE_UINT8: 2,
      TYPE_UINT16: 3,
      TYPE_UINT32: 4,
      TYPE_UINT64: 5,
      TYPE_INT8: 6,
      TYPE_INT16: 7,
      TYPE_INT32: 8,
      TYPE_INT64: 9,
      TYPE_FP16: 10,
      TYPE_FP32: 11,
      TYPE_FP64: 12,
      TYPE_STRING: 13,
      TYPE_BF16: 14,
    });
  });
});
