/**
 * A compact view of protobufjs reflection for the codec: fields by their .proto (snake_case) name, in
 * declaration order, with value kinds resolved once. Map entries become synthetic `key`/`value` messages.
 * Built lazily per protobufjs Type and cached, so a schema loaded once serves every parse and print.
 */
import protobuf from "protobufjs";

/** Scalar .proto types the codec handles. */
export type ScalarType =
  | "double"
  | "float"
  | "int32"
  | "uint32"
  | "sint32"
  | "fixed32"
  | "sfixed32"
  | "int64"
  | "uint64"
  | "sint64"
  | "fixed64"
  | "sfixed64"
  | "bool"
  | "string"
  | "bytes";

/** How a field's values are written. */
export type ValueKind =
  | { readonly kind: "scalar"; readonly type: ScalarType }
  | { readonly kind: "enum"; readonly type: protobuf.Enum }
  | { readonly kind: "message"; readonly type: MessageInfo };

/** One field as the codec sees it. */
export interface FieldInfo {
  /** The field name as declared in the .proto file. */
  readonly name: string;
  /** "repeated" for repeated fields, "map" for map fields, "single" otherwise. */
  readonly cardinality: "single" | "repeated" | "map";
  /** The value kind (for maps: the value's kind). */
  readonly value: ValueKind;
  /** For maps: the synthetic entry message with fields `key` and `value`. */
  readonly mapEntry: MessageInfo | undefined;
  /** Name of the real (non-synthetic) oneof the field belongs to. */
  readonly oneof: string | undefined;
  /** Whether an unset field is distinguishable from its default (message fields, oneofs, `optional`). */
  readonly hasPresence: boolean;
}

/** One message type as the codec sees it. */
export interface MessageInfo {
  /** Fully qualified name without the leading dot, for example `inference.ModelConfig`. */
  readonly fullName: string;
  /** Fields in declaration order. */
  readonly fields: readonly FieldInfo[];
  /** Fields by .proto name. */
  readonly byName: ReadonlyMap<string, FieldInfo>;
  /** Fields of each real oneof. */
  readonly oneofs: ReadonlyMap<string, readonly string[]>;
}

const SCALAR_TYPES = new Set<string>([
  "double",
  "float",
  "int32",
  "uint32",
  "sint32",
  "fixed32",
  "sfixed32",
  "int64",
  "uint64",
  "sint64",
  "fixed64",
  "sfixed64",
  "bool",
  "string",
  "bytes",
]);

const cache = new WeakMap<protobuf.Type, MessageInfo>();

function trimDot(name: string): string {
  return name.startsWith(".") ? name.slice(1) : name;
}

function valueKindOf(typeName: string, resolved: protobuf.ReflectionObject | null, where: string): ValueKind {
  if (
    SCALAR_TYPES.has(typeName) &&
    !(resolved instanceof protobuf.Type || resolved instanceof protobuf.Enum)
  ) {
    return { kind: "scalar", type: typeName as ScalarType };
  }
  if (resolved instanceof protobuf.Enum) return { kind: "enum", type: resolved };
  if (resolved instanceof protobuf.Type) return { kind: "message", type: messageInfo(resolved) };
  throw new Error(`text format: cannot resolve type "${typeName}" of ${where}`);
}

function buildFieldInfo(field: protobuf.Field, parent: protobuf.Type): FieldInfo {
  field.resolve();
  const name = field.protoName ?? field.name;
  const where = `field ${trimDot(parent.fullName)}.${name}`;
  const oneof = field.partOf && !field.partOf.isProto3Optional ? field.partOf.name : undefined;
  const proto3Optional =
    field.partOf?.isProto3Optional === true || field.options?.["proto3_optional"] === true;
  if (field.map) {
    const mapField = field as unknown as protobuf.MapField;
    // protoc's name for the synthetic entry type: the field name in PascalCase plus "Entry".
    const pascal = name.replace(/(?:^|_)([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
    const entryName = `${trimDot(parent.fullName)}.${pascal}Entry`;
    const key: FieldInfo = {
      name: "key",
      cardinality: "single",
      value: valueKindOf(mapField.keyType, null, `${where} (map key)`),
      mapEntry: undefined,
      oneof: undefined,
      hasPresence: false,
    };
    const value: FieldInfo = {
      name: "value",
      cardinality: "single",
      value: valueKindOf(field.type, field.resolvedType, `${where} (map value)`),
      mapEntry: undefined,
      oneof: undefined,
      hasPresence: false,
    };
    const entry: MessageInfo = {
      fullName: entryName,
      fields: [key, value],
      byName: new Map([
        ["key", key],
        ["value", value],
      ]),
      oneofs: new Map(),
    };
    return {
      name,
      cardinality: "map",
      value: value.value,
      mapEntry: entry,
      oneof: undefined,
      hasPresence: false,
    };
  }
  const value = valueKindOf(field.type, field.resolvedType, where);
  return {
    name,
    cardinality: field.repeated ? "repeated" : "single",
    value,
    mapEntry: undefined,
    oneof,
    hasPresence: !field.repeated && (value.kind === "message" || oneof !== undefined || proto3Optional),
  };
}

/**
 * The codec's view of a protobufjs message type (cached). Field types are resolved on first use, so the
 * type must belong to a root where every referenced type can be found.
 */
export function messageInfo(type: protobuf.Type): MessageInfo {
  const cached = cache.get(type);
  if (cached !== undefined) return cached;
  const fields: FieldInfo[] = [];
  const byName = new Map<string, FieldInfo>();
  const oneofs = new Map<string, string[]>();
  // Registered before the fields are built, so recursive message types terminate.
  const info: MessageInfo = { fullName: trimDot(type.fullName), fields, byName, oneofs };
  cache.set(type, info);
  try {
    for (const field of type.fieldsArray) {
      if (field.extend !== undefined) continue;
      const built = buildFieldInfo(field, type);
      fields.push(built);
      byName.set(built.name, built);
      if (built.oneof !== undefined) {
        const members = oneofs.get(built.oneof) ?? [];
        members.push(built.name);
        oneofs.set(built.oneof, members);
      }
    }
  } catch (error) {
    cache.delete(type);
    throw error;
  }
  return info;
}
