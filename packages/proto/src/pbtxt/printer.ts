/**
 * Prints a message in the object form as canonical protobuf text format, the way a Triton user writes a
 * config.pbtxt: fields in declaration order, 2-space indent, nested messages as `name {` blocks, repeated
 * scalars as one `name: [ a, b ]` line, repeated messages as one block per element, map entries as
 * `name { key: .. value .. }` blocks. The object is validated while printing; what the printer writes,
 * the parser reads back to a deep-equal object.
 */
import type protobuf from "protobufjs";
import { TextFormatValueError } from "./errors.js";
import { quoteBytes, quoteString } from "./escapes.js";
import { INTEGER_RANGES } from "./scalar-values.js";
import { type FieldInfo, type MessageInfo, messageInfo, type ScalarType, type ValueKind } from "./schema.js";
import { suggestName } from "./suggest.js";

const INDENT = "  ";
const CANONICAL_INTEGER = /^-?(?:0|[1-9][0-9]*)$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2,3})?$/;

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string")
    return `string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value)}`;
  if (typeof value === "object") return "an object";
  if (typeof value === "bigint") return `bigint ${value}`;
  return `${typeof value} ${String(value)}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)
  );
}

function ownValue(message: Record<string, unknown>, name: string): unknown {
  return Object.hasOwn(message, name) ? message[name] : undefined;
}

function formatFloat(value: unknown, path: string, type: string): string {
  if (typeof value === "number") {
    if (Number.isNaN(value)) return "nan";
    if (value === Number.POSITIVE_INFINITY) return "inf";
    if (value === Number.NEGATIVE_INFINITY) return "-inf";
    // Number's own toString is the shortest text that reads back to the same double.
    return Object.is(value, -0) ? "-0" : String(value);
  }
  if (value === "NaN") return "nan";
  if (value === "Infinity") return "inf";
  if (value === "-Infinity") return "-inf";
  throw new TextFormatValueError(path, `expected a number for ${type} field, got ${describe(value)}`);
}

function formatInteger(value: unknown, path: string, type: ScalarType): string {
  const range = INTEGER_RANGES[type];
  if (range === undefined) throw new Error(`not an integer type: ${type}`);
  let integer: bigint | undefined;
  if (typeof value === "number" && Number.isSafeInteger(value)) integer = BigInt(value);
  else if (typeof value === "bigint") integer = value;
  else if (range.wide && typeof value === "string" && /^-?[0-9]+$/.test(value)) integer = BigInt(value);
  if (integer === undefined) {
    const wanted = range.wide ? "a decimal string (or safe integer)" : "an integer number";
    throw new TextFormatValueError(path, `expected ${wanted} for ${type} field, got ${describe(value)}`);
  }
  if (integer < range.min || integer > range.max) {
    throw new TextFormatValueError(
      path,
      `value ${integer} is out of range for ${type} (${range.min} to ${range.max})`,
    );
  }
  return integer.toString();
}

function formatScalar(value: unknown, type: ScalarType, path: string): string {
  switch (type) {
    case "double":
    case "float":
      return formatFloat(value, path, type);
    case "bool":
      if (typeof value !== "boolean") {
        throw new TextFormatValueError(path, `expected a boolean for bool field, got ${describe(value)}`);
      }
      return value ? "true" : "false";
    case "string": {
      if (typeof value !== "string") {
        throw new TextFormatValueError(path, `expected a string for string field, got ${describe(value)}`);
      }
      const quoted = quoteString(value);
      if (quoted === undefined) {
        throw new TextFormatValueError(
          path,
          "string holds an unpaired UTF-16 surrogate, which has no UTF-8 form",
        );
      }
      return quoted;
    }
    case "bytes":
      if (value instanceof Uint8Array) return quoteBytes(value);
      if (typeof value !== "string" || !BASE64.test(value.replaceAll("-", "+").replaceAll("_", "/"))) {
        throw new TextFormatValueError(
          path,
          `expected a base64 string for bytes field, got ${describe(value)}`,
        );
      }
      return quoteBytes(Buffer.from(value, "base64"));
    default:
      return formatInteger(value, path, type);
  }
}

function formatEnum(value: unknown, type: protobuf.Enum, path: string): string {
  if (typeof value === "string" && Object.hasOwn(type.values, value)) return value;
  if (typeof value === "number" && type.valuesById[value] !== undefined) return type.valuesById[value];
  const names = Object.keys(type.values);
  const hint = typeof value === "string" ? suggestName(value, names) : undefined;
  throw new TextFormatValueError(
    path,
    `unknown value ${describe(value)} for enum ${type.fullName.replace(/^\./, "")}${hint === undefined ? "" : ` (did you mean ${hint}?)`}; allowed: ${names.join(", ")}`,
  );
}

/** Converts a map key from its string form back to the text of the key's type. */
function formatMapKey(key: string, kind: ValueKind, path: string): string {
  if (kind.kind !== "scalar") throw new Error("map keys are scalars");
  if (kind.type === "string") return formatScalar(key, "string", path);
  if (kind.type === "bool") {
    if (key === "true" || key === "false") return key;
    throw new TextFormatValueError(
      path,
      `map key must be "true" or "false" for bool keys, got ${JSON.stringify(key)}`,
    );
  }
  if (!CANONICAL_INTEGER.test(key)) {
    throw new TextFormatValueError(
      path,
      `map key must be a decimal integer for ${kind.type} keys, got ${JSON.stringify(key)}`,
    );
  }
  return formatInteger(BigInt(key), path, kind.type);
}

class Printer {
  readonly lines: string[] = [];

  printMessage(info: MessageInfo, message: unknown, indent: string, path: string): void {
    if (!isPlainObject(message)) {
      throw new TextFormatValueError(
        path,
        `expected an object for message ${info.fullName}, got ${describe(message)}`,
      );
    }
    for (const key of Object.keys(message)) {
      if (info.byName.has(key) || message[key] === undefined) continue;
      const hint = suggestName(
        key,
        info.fields.map((f) => f.name),
      );
      throw new TextFormatValueError(
        path,
        `unknown field "${key}" in message ${info.fullName}${hint === undefined ? "" : ` (did you mean "${hint}"?)`}`,
      );
    }
    for (const [oneof, members] of info.oneofs) {
      const set = members.filter((name) => ownValue(message, name) != null);
      if (set.length > 1) {
        throw new TextFormatValueError(
          path,
          `fields ${set.map((n) => `"${n}"`).join(" and ")} of oneof "${oneof}" are both set`,
        );
      }
    }
    for (const field of info.fields) {
      const value = ownValue(message, field.name);
      if (value == null) continue;
      this.printField(field, value, indent, path === "" ? field.name : `${path}.${field.name}`);
    }
  }

  private printField(field: FieldInfo, value: unknown, indent: string, path: string): void {
    if (field.cardinality === "single") {
      this.printValue(field.name, field.value, value, indent, path);
    } else if (field.cardinality === "repeated") {
      if (!Array.isArray(value)) {
        throw new TextFormatValueError(path, `expected an array for repeated field, got ${describe(value)}`);
      }
      if (value.length === 0) this.lines.push(`${indent}${field.name}: []`);
      else if (field.value.kind === "message") {
        for (const [i, element] of value.entries()) {
          this.printValue(field.name, field.value, element, indent, `${path}[${i}]`);
        }
      } else {
        const kind = field.value;
        const items = value.map((element, i) => this.scalarText(kind, element, `${path}[${i}]`));
        this.lines.push(`${indent}${field.name}: [ ${items.join(", ")} ]`);
      }
    } else {
      this.printMap(field, value, indent, path);
    }
  }

  private printMap(field: FieldInfo, value: unknown, indent: string, path: string): void {
    if (!isPlainObject(value)) {
      throw new TextFormatValueError(path, `expected an object for map field, got ${describe(value)}`);
    }
    const keys = Object.keys(value);
    if (keys.length === 0) this.lines.push(`${indent}${field.name}: []`);
    const [keyField] = (field.mapEntry as MessageInfo).fields as [FieldInfo];
    const inner = indent + INDENT;
    for (const key of keys) {
      const entryPath = `${path}[${JSON.stringify(key)}]`;
      this.lines.push(
        `${indent}${field.name} {`,
        `${inner}key: ${formatMapKey(key, keyField.value, entryPath)}`,
      );
      this.printValue("value", field.value, value[key], inner, entryPath);
      this.lines.push(`${indent}}`);
    }
  }

  private printValue(name: string, kind: ValueKind, value: unknown, indent: string, path: string): void {
    if (kind.kind !== "message") {
      this.lines.push(`${indent}${name}: ${this.scalarText(kind, value, path)}`);
      return;
    }
    const start = this.lines.push(`${indent}${name} {`);
    this.printMessage(kind.type, value, indent + INDENT, path);
    if (this.lines.length === start) this.lines[start - 1] = `${indent}${name} { }`;
    else this.lines.push(`${indent}}`);
  }

  private scalarText(kind: ValueKind, value: unknown, path: string): string {
    if (kind.kind === "enum") return formatEnum(value, kind.type, path);
    if (kind.kind === "scalar") return formatScalar(value, kind.type, path);
    throw new Error("message values are printed as blocks");
  }
}

/**
 * Prints a message in the object form (see {@link TextMessage}) as protobuf text format.
 *
 * @param type - the message type, from protobufjs reflection.
 * @param message - the message; fields that are undefined or null are skipped. 64-bit integers may also be
 *   given as safe-integer numbers or bigints, bytes as a Uint8Array, enums by number.
 * @returns the text, one field per line, ending with a newline (empty for an empty message).
 * @throws {@link TextFormatValueError} naming the path of a value that does not fit the schema.
 */
export function printTextFormat(type: protobuf.Type, message: object): string {
  const printer = new Printer();
  printer.printMessage(messageInfo(type), message, "", "");
  return printer.lines.length === 0 ? "" : `${printer.lines.join("\n")}\n`;
}
