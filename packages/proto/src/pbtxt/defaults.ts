/**
 * proto3 defaults in the object form: what protobuf's JSON printer shows with "always print fields
 * without presence" (the form of Triton's JSON model config): every scalar, enum, repeated and map field is
 * present, with 0 / "" / false / the enum's zero value / "0" for 64-bit integers / [] / {}; fields with
 * presence (sub-messages, oneof members, `optional` fields) stay absent when unset; sub-messages that are
 * set are filled the same way.
 */
import type protobuf from "protobufjs";
import { type FieldInfo, type MessageInfo, messageInfo, type ValueKind } from "./schema.js";
import type { TextMessage, TextValue } from "./text-message.js";

/** The proto3 default of one value of the given kind (an empty object for messages). */
export function defaultValue(kind: ValueKind): TextValue {
  if (kind.kind === "message") return {};
  if (kind.kind === "enum") return kind.type.valuesById[0] ?? Object.keys(kind.type.values)[0] ?? "";
  switch (kind.type) {
    case "bool":
      return false;
    case "string":
    case "bytes":
      return "";
    case "int64":
    case "uint64":
    case "sint64":
    case "fixed64":
    case "sfixed64":
      return "0";
    default:
      return 0;
  }
}

function fillValue(kind: ValueKind, value: unknown): unknown {
  return kind.kind === "message" ? fillMessage(kind.type, value) : value;
}

function fillField(field: FieldInfo, value: unknown): unknown {
  if (value == null) {
    if (field.cardinality === "repeated") return [];
    if (field.cardinality === "map") return {};
    return field.hasPresence ? undefined : defaultValue(field.value);
  }
  if (field.cardinality === "repeated" && Array.isArray(value))
    return value.map((v) => fillValue(field.value, v));
  if (field.cardinality === "map" && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, entry] of Object.entries(value)) {
      Object.defineProperty(out, key, {
        value: fillValue(field.value, entry),
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
    return out;
  }
  return fillValue(field.value, value);
}

function fillMessage(info: MessageInfo, message: unknown): unknown {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return message;
  const source = message as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const field of info.fields) {
    const filled = fillField(field, Object.hasOwn(source, field.name) ? source[field.name] : undefined);
    if (filled !== undefined) out[field.name] = filled;
  }
  // Keys the schema does not know are kept as they are rather than silently dropped.
  for (const key of Object.keys(source)) {
    if (!info.byName.has(key)) out[key] = source[key];
  }
  return out;
}

/**
 * Returns a copy of `message` (object form) with every field that has no presence filled with its proto3
 * default, the way protobuf's JSON printer shows it with always-print-primitive-fields. The input is not
 * modified; sub-messages that are unset stay absent.
 *
 * @param type - the message type, from protobufjs reflection.
 * @param message - the message in the object form.
 */
export function withDefaults(type: protobuf.Type, message: object): TextMessage {
  return fillMessage(messageInfo(type), message) as TextMessage;
}
