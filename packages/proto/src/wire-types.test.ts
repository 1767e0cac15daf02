// The generated ModelConfig types (src/gen/model-config-types.ts) against the schema: one declaration per
// message and enum of model_config.proto, one optional property per field, JSON-form value types.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import protobuf from "protobufjs";
import ts from "typescript";
import type { ConfigDataType } from "./datatypes.js";
import type { DataType } from "./gen/model-config-types.js";
import type { ModelConfig, ModelDynamicBatching } from "./index.js";
import { protoRoot } from "./proto-root.js";

// Compile-time checks (tsconfig.test.json type-checks this file).
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const dataTypeMatchesDatatypeTable: Equal<DataType, ConfigDataType> = true;
const queueDelayIsLosslessString: Equal<
  ModelDynamicBatching["max_queue_delay_microseconds"],
  string | undefined
> = true;
const schedulerIsOptional: Equal<ModelConfig["dynamic_batching"], ModelDynamicBatching | undefined> = true;

const generatedPath = new URL("./gen/model-config-types.ts", import.meta.url);

/** Declared name -> ("enum", members) or ("interface", property name -> type text). */
function declarations(): Map<
  string,
  { kind: "enum"; members: string[] } | { kind: "interface"; props: Map<string, string> }
> {
  const source = ts.createSourceFile(
    "model-config-types.ts",
    readFileSync(generatedPath, "utf8"),
    ts.ScriptTarget.ES2022,
  );
  const found = new Map<
    string,
    { kind: "enum"; members: string[] } | { kind: "interface"; props: Map<string, string> }
  >();
  for (const statement of source.statements) {
    if (ts.isInterfaceDeclaration(statement)) {
      const props = new Map<string, string>();
      for (const member of statement.members) {
        assert.ok(
          ts.isPropertySignature(member) && member.type,
          `${statement.name.text}: property signatures only`,
        );
        assert.ok(member.questionToken, `${statement.name.text}.${member.name.getText(source)} is optional`);
        props.set(member.name.getText(source), member.type.getText(source));
      }
      found.set(statement.name.text, { kind: "interface", props });
    } else if (ts.isTypeAliasDeclaration(statement)) {
      const type = statement.type;
      if (ts.isUnionTypeNode(type) || ts.isLiteralTypeNode(type)) {
        const members = (ts.isUnionTypeNode(type) ? [...type.types] : [type]).map((node) =>
          JSON.parse(node.getText(source)),
        );
        found.set(statement.name.text, { kind: "enum", members });
      } else found.set(statement.name.text, { kind: "interface", props: new Map() }); // empty message
    }
  }
  return found;
}

function schemaObjects(): (protobuf.Type | protobuf.Enum)[] {
  const out: (protobuf.Type | protobuf.Enum)[] = [];
  // model_config.proto's types are those reachable from ModelConfig, plus DataType.
  const visit = (type: protobuf.Type | protobuf.Enum): void => {
    if (out.includes(type)) return;
    out.push(type);
    if (type instanceof protobuf.Type)
      for (const field of type.fieldsArray)
        if (field.resolvedType) visit(field.resolvedType as protobuf.Type | protobuf.Enum);
  };
  visit(protoRoot().lookupType("inference.ModelConfig"));
  visit(protoRoot().lookupEnum("inference.DataType"));
  return out;
}

const tsName = (object: protobuf.ReflectionObject): string =>
  object.fullName.replace(/^\.inference\./, "").replaceAll(".", "_");

test("compile-time checks hold", () => {
  assert.deepEqual(
    [dataTypeMatchesDatatypeTable, queueDelayIsLosslessString, schedulerIsOptional],
    [true, true, true],
  );
});

test("one declaration per message and enum reachable from ModelConfig, with every field", () => {
  const declared = declarations();
  const objects = schemaObjects();
  for (const object of objects) {
    const declaration = declared.get(tsName(object));
    assert.ok(declaration, `${object.fullName} is declared as ${tsName(object)}`);
    if (object instanceof protobuf.Enum) {
      assert.deepEqual(declaration, { kind: "enum", members: Object.keys(object.values) }, object.fullName);
    } else {
      assert.equal(declaration.kind, "interface", object.fullName);
      if (declaration.kind === "interface")
        assert.deepEqual(
          [...declaration.props.keys()],
          object.fieldsArray.map((field) => field.name),
          object.fullName,
        );
    }
  }
  // Every type of model_config.proto is reachable from ModelConfig, so nothing else is declared.
  assert.deepEqual([...declared.keys()].sort(), objects.map(tsName).sort());
});

test("field value types follow the proto3 JSON mapping", () => {
  const declared = declarations();
  const propsOf = (name: string): Map<string, string> => {
    const declaration = declared.get(name);
    assert.ok(declaration?.kind === "interface", name);
    return declaration.props;
  };
  const expectations: [string, string, string][] = [
    ["ModelConfig", "max_batch_size", "number"],
    ["ModelConfig", "input", "ModelInput[]"],
    ["ModelConfig", "parameters", "Record<string, ModelParameter>"],
    ["ModelConfig", "cc_model_filenames", "Record<string, string>"],
    ["ModelConfig", "dynamic_batching", "ModelDynamicBatching"],
    ["ModelInput", "dims", "string[]"],
    ["ModelInput", "data_type", "DataType"],
    ["ModelInput", "optional", "boolean"],
    ["ModelDynamicBatching", "max_queue_delay_microseconds", "string"],
    ["ModelDynamicBatching", "preferred_batch_size", "number[]"],
    ["ModelDynamicBatching", "priority_queue_policy", "Record<string, ModelQueuePolicy>"],
    ["ModelInstanceGroup", "kind", "ModelInstanceGroup_Kind"],
    ["ModelInstanceGroup", "gpus", "number[]"],
    ["ModelEnsembling_Step", "model_version", "string"],
    ["ModelSequenceBatching_Control", "fp32_false_true", "number[]"],
    ["ModelSequenceBatching_StrategyDirect", "minimum_slot_utilization", "number"],
    ["ModelMetrics_MetricControl_HistogramOptions", "buckets", "number[]"],
    [
      "ModelOptimizationPolicy_Cuda_GraphSpec",
      "input",
      "Record<string, ModelOptimizationPolicy_Cuda_GraphSpec_Shape>",
    ],
  ];
  for (const [message, field, type] of expectations)
    assert.equal(propsOf(message).get(field), type, `${message}.${field}`);
  const kind = declared.get("ModelInstanceGroup_Kind");
  assert.deepEqual(kind, { kind: "enum", members: ["KIND_AUTO", "KIND_GPU", "KIND_CPU", "KIND_MODEL"] });
});
