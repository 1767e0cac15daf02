// Writes src/gen/model-config-types.ts: TypeScript types for the proto3 JSON form of every message and enum
// of model_config.proto, with the original (snake_case) field names, as Triton's HTTP API and config.pbtxt
// spell them. 64-bit integers are strings (lossless), enums are unions of their names, bytes are base64.
import protobuf from "protobufjs";
import { generatedHeader } from "./generated-header.js";

const SOURCE_FILE = "model_config.proto";
const PACKAGE = "inference";

const scalarTypes: Readonly<Record<string, string>> = {
  double: "number",
  float: "number",
  int32: "number",
  uint32: "number",
  sint32: "number",
  fixed32: "number",
  sfixed32: "number",
  int64: "string",
  uint64: "string",
  sint64: "string",
  fixed64: "string",
  sfixed64: "string",
  bool: "boolean",
  string: "string",
  bytes: "string",
};

const jsonNotes: Readonly<Record<string, string>> = {
  int64: "a decimal string in JSON (64-bit, lossless)",
  uint64: "a decimal string in JSON (64-bit, lossless)",
  sint64: "a decimal string in JSON (64-bit, lossless)",
  fixed64: "a decimal string in JSON (64-bit, lossless)",
  sfixed64: "a decimal string in JSON (64-bit, lossless)",
  bytes: "base64 in JSON",
};

/** `inference.ModelOptimizationPolicy.Cuda` -> `ModelOptimizationPolicy_Cuda`. */
export function typeScriptName(object: protobuf.ReflectionObject): string {
  const prefix = `.${PACKAGE}.`;
  if (!object.fullName.startsWith(prefix)) throw new Error(`${object.fullName} is not in package ${PACKAGE}`);
  return object.fullName.slice(prefix.length).replaceAll(".", "_");
}

function fromModelConfigProto(object: protobuf.ReflectionObject): boolean {
  return object.filename?.endsWith(`/${SOURCE_FILE}`) === true || object.filename === SOURCE_FILE;
}

/** Messages and enums of model_config.proto in declaration order, parents before their nested types. */
function collect(namespace: protobuf.NamespaceBase, found: (protobuf.Type | protobuf.Enum)[]): void {
  for (const nested of namespace.nestedArray) {
    if (!(nested instanceof protobuf.Type || nested instanceof protobuf.Enum)) continue;
    if (!fromModelConfigProto(nested)) continue;
    found.push(nested);
    if (nested instanceof protobuf.Type) collect(nested, found);
  }
}

function docComment(lines: string[], indent: string): string {
  const text = lines.flatMap((line) => line.split("\n")).map((line) => line.replaceAll("*/", "*\\/"));
  if (text.length === 1) return `${indent}/** ${text[0]} */\n`;
  return `${indent}/**\n${text.map((line) => `${indent} *${line ? ` ${line}` : ""}`).join("\n")}\n${indent} */\n`;
}

function valueType(field: protobuf.Field): string {
  const resolved = field.resolvedType;
  if (resolved) return typeScriptName(resolved);
  const scalar = scalarTypes[field.type];
  if (scalar === undefined) throw new Error(`unknown field type ${field.type} of ${field.fullName}`);
  return scalar;
}

function protoDeclaration(field: protobuf.Field): string {
  if (field instanceof protobuf.MapField)
    return `map<${field.keyType}, ${field.type}> ${field.name} = ${field.id}`;
  return `${field.repeated ? "repeated " : ""}${field.type} ${field.name} = ${field.id}`;
}

function fieldDoc(field: protobuf.Field): string[] {
  const lines: string[] = [];
  if (field.comment) lines.push(field.comment, "");
  let declaration = `Proto: \`${protoDeclaration(field)}\``;
  const note = jsonNotes[field.type];
  if (note)
    declaration += `; ${field instanceof protobuf.MapField || field.repeated ? "each value " : ""}${note}`;
  if (field instanceof protobuf.MapField && field.keyType !== "string")
    declaration += `; keys are ${field.keyType} values written as decimal strings`;
  lines.push(`${declaration}.`);
  if (field.partOf) {
    const members = field.partOf.fieldsArray.map((member) => `\`${member.name}\``).join(", ");
    lines.push(`Oneof \`${field.partOf.name}\`: at most one of ${members} is set.`);
  }
  return lines;
}

function emitEnum(enumeration: protobuf.Enum): string {
  const doc = [enumeration.comment ?? `Enum \`${enumeration.fullName.slice(1)}\`.`];
  doc.push("", `Proto enum \`${enumeration.fullName.slice(1)}\`, written by name in JSON and config.pbtxt.`);
  const names = Object.keys(enumeration.values).map((name) => `"${name}"`);
  const head = `export type ${typeScriptName(enumeration)} =`;
  const oneLine = `${head} ${names.join(" | ")};`;
  // Long unions one member per line, as a formatter would write them.
  const body = oneLine.length <= 110 ? oneLine : `${head}\n${names.map((name) => `  | ${name}`).join("\n")};`;
  return `${docComment(doc, "")}${body}\n`;
}

function emitMessage(type: protobuf.Type): string {
  const doc = [type.comment ?? `Message \`${type.fullName.slice(1)}\`.`];
  doc.push(
    "",
    `Proto message \`${type.fullName.slice(1)}\`, proto3 JSON form with the original field names.`,
  );
  const name = typeScriptName(type);
  if (type.fieldsArray.length === 0)
    return `${docComment(doc, "")}export type ${name} = Record<string, never>;\n`;
  const fields = type.fieldsArray.map((field) => {
    const value = valueType(field);
    let tsType: string;
    if (field instanceof protobuf.MapField) tsType = `Record<string, ${value}>`;
    else if (field.repeated) tsType = `${value}[]`;
    else tsType = value;
    return `${docComment(fieldDoc(field), "  ")}  ${field.name}?: ${tsType};\n`;
  });
  return `${docComment(doc, "")}export interface ${name} {\n${fields.join("")}}\n`;
}

/** The text of `model-config-types.ts`, and the names it exports in order. */
export function emitModelConfigTypes(root: protobuf.Root): { text: string; names: string[] } {
  const found: (protobuf.Type | protobuf.Enum)[] = [];
  collect(root.lookup(PACKAGE) as protobuf.Namespace, found);
  if (!found.some((object) => object.fullName === `.${PACKAGE}.ModelConfig`))
    throw new Error(`${SOURCE_FILE} did not yield ${PACKAGE}.ModelConfig`);
  const blocks = found.map((object) =>
    object instanceof protobuf.Type ? emitMessage(object) : emitEnum(object),
  );
  const text =
    generatedHeader(`proto/${SOURCE_FILE}`) +
    "// Types of the proto3 JSON form of ModelConfig and everything it references (original field names).\n" +
    "// Every field is optional, as in proto3 JSON where default values may be left out.\n\n" +
    blocks.join("\n");
  return { text, names: found.map(typeScriptName) };
}
