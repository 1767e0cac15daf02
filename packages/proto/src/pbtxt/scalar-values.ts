/**
 * Reads one scalar value (number, bool, enum, string, bytes) from the token stream and converts it to the
 * object form: 64-bit integers as decimal strings, 32-bit integers and floats as numbers, enums by name,
 * strings as JS strings, bytes as base64.
 */
import type protobuf from "protobufjs";
import { decodeLiteral, isPlainAsciiLiteral } from "./escapes.js";
import type { ScalarType } from "./schema.js";
import { suggestName } from "./suggest.js";
import type { Token, Tokenizer } from "./tokenizer.js";

/** Inclusive range of an integer scalar type. */
interface IntegerRange {
  readonly min: bigint;
  readonly max: bigint;
  readonly wide: boolean;
}

const INT32: IntegerRange = { min: -(2n ** 31n), max: 2n ** 31n - 1n, wide: false };
const UINT32: IntegerRange = { min: 0n, max: 2n ** 32n - 1n, wide: false };
const INT64: IntegerRange = { min: -(2n ** 63n), max: 2n ** 63n - 1n, wide: true };
const UINT64: IntegerRange = { min: 0n, max: 2n ** 64n - 1n, wide: true };

/** Value range of each integer type. */
export const INTEGER_RANGES: Readonly<Partial<Record<ScalarType, IntegerRange>>> = {
  int32: INT32,
  sint32: INT32,
  sfixed32: INT32,
  uint32: UINT32,
  fixed32: UINT32,
  int64: INT64,
  sint64: INT64,
  sfixed64: INT64,
  uint64: UINT64,
  fixed64: UINT64,
};

const TRUE_NAMES = new Set(["true", "True", "t"]);
const FALSE_NAMES = new Set(["false", "False", "f"]);

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Describes a token for "found ..." in error messages. */
export function describeToken(token: Token): string {
  switch (token.kind) {
    case "end":
      return "end of input";
    case "symbol":
      return `'${token.text}'`;
    case "identifier":
      return `identifier "${token.text}"`;
    case "integer":
    case "float":
      return `number ${token.text}`;
    case "string":
      return `string ${token.text.length > 40 ? `${token.text.slice(0, 37)}...` : token.text}`;
  }
}

/** Integer literal (decimal, hex or octal) to its value. */
function integerValue(text: string): bigint {
  if (text.length > 1 && text.charCodeAt(0) === 48) {
    const c = text.charCodeAt(1);
    return c === 120 || c === 88 ? BigInt(text) : BigInt(`0o${text.slice(1)}`);
  }
  return BigInt(text);
}

function isDecimalInteger(text: string): boolean {
  return !(text.length > 1 && text.charCodeAt(0) === 48);
}

function rangeText(range: IntegerRange): string {
  return `${range.min} to ${range.max}`;
}

/** Reads a scalar of the given type for the named field. */
export function readScalar(
  tokens: Tokenizer,
  type: ScalarType,
  fieldName: string,
): string | number | boolean {
  switch (type) {
    case "double":
    case "float":
      return readFloat(tokens, type, fieldName);
    case "bool":
      return readBool(tokens, fieldName);
    case "string":
    case "bytes":
      return readStringOrBytes(tokens, type, fieldName);
    default:
      return readInteger(tokens, type, INTEGER_RANGES[type] ?? INT64, fieldName);
  }
}

function readInteger(
  tokens: Tokenizer,
  type: ScalarType,
  range: IntegerRange,
  fieldName: string,
): string | number {
  const first = tokens.peek();
  const negative = first.kind === "symbol" && first.text === "-";
  if (negative) tokens.next();
  const token = tokens.peek();
  if (token.kind !== "integer") {
    throw tokens.errorAt(
      token,
      `expected an integer for ${type} field "${fieldName}", found ${describeToken(token)}`,
    );
  }
  tokens.next();
  if (negative && range.min === 0n) {
    throw tokens.errorAt(
      first,
      `value -${token.text} is out of range for ${type} field "${fieldName}" (${rangeText(range)})`,
    );
  }
  // Short decimal literals (the usual case) stay in double precision; everything else goes through BigInt.
  if (!range.wide && token.text.length <= 15 && isDecimalInteger(token.text)) {
    const value = negative ? -Number(token.text) : Number(token.text);
    if (value < Number(range.min) || value > Number(range.max)) {
      throw tokens.errorAt(
        first,
        `value ${negative ? "-" : ""}${token.text} is out of range for ${type} field "${fieldName}" (${rangeText(range)})`,
      );
    }
    return value + 0;
  }
  const magnitude = integerValue(token.text);
  const value = negative ? -magnitude : magnitude;
  if (value < range.min || value > range.max) {
    throw tokens.errorAt(
      first,
      `value ${negative ? "-" : ""}${token.text} is out of range for ${type} field "${fieldName}" (${rangeText(range)})`,
    );
  }
  return range.wide ? value.toString() : Number(value);
}

function readFloat(tokens: Tokenizer, type: "float" | "double", fieldName: string): number {
  const first = tokens.peek();
  const negative = first.kind === "symbol" && first.text === "-";
  if (negative) tokens.next();
  const token = tokens.next();
  let value: number;
  if (token.kind === "float") {
    const last = token.text.charCodeAt(token.text.length - 1);
    value = Number(last === 102 || last === 70 ? token.text.slice(0, -1) : token.text);
  } else if (token.kind === "integer") {
    if (!isDecimalInteger(token.text)) {
      throw tokens.errorAt(
        token,
        `expected a decimal number for ${type} field "${fieldName}", found ${describeToken(token)}`,
      );
    }
    value = Number(token.text);
  } else {
    const lower = token.kind === "identifier" ? token.text.toLowerCase() : "";
    if (lower === "inf" || lower === "infinity") value = Number.POSITIVE_INFINITY;
    else if (lower === "nan") value = Number.NaN;
    else {
      throw tokens.errorAt(
        token,
        `expected a number, inf or nan for ${type} field "${fieldName}", found ${describeToken(token)}`,
      );
    }
  }
  if (negative) value = -value;
  // Like protobuf (SafeDoubleToFloat), a float beyond the float32 range becomes an infinity; the value is
  // otherwise kept as written, so that it prints back the same.
  if (type === "float" && Number.isFinite(value) && !Number.isFinite(Math.fround(value))) {
    value = value > 0 ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
  }
  return value;
}

function readBool(tokens: Tokenizer, fieldName: string): boolean {
  const token = tokens.next();
  if (token.kind === "identifier") {
    if (TRUE_NAMES.has(token.text)) return true;
    if (FALSE_NAMES.has(token.text)) return false;
  } else if (token.kind === "integer") {
    const value = integerValue(token.text);
    if (value === 0n || value === 1n) return value === 1n;
  }
  throw tokens.errorAt(
    token,
    `expected true or false for bool field "${fieldName}" (also True, False, t, f, 1, 0), found ${describeToken(token)}`,
  );
}

function readStringOrBytes(tokens: Tokenizer, type: "string" | "bytes", fieldName: string): string {
  const first = tokens.peek();
  if (first.kind !== "string") {
    throw tokens.errorAt(
      first,
      `expected a quoted string for ${type} field "${fieldName}", found ${describeToken(first)}`,
    );
  }
  tokens.next();
  // The common case: one literal with nothing to unescape.
  if (type === "string" && tokens.peek().kind !== "string" && isPlainAsciiLiteral(first.text)) {
    return first.text.slice(1, -1);
  }
  const parts: Uint8Array[] = [];
  for (let token = first; ; ) {
    parts.push(
      decodeLiteral(token.text, (offset, reason) => {
        throw tokens.errorAt({ line: token.line, column: token.column + offset }, reason);
      }),
    );
    if (tokens.peek().kind !== "string") break;
    token = tokens.next();
  }
  const bytes = parts.length === 1 ? (parts[0] as Uint8Array) : Buffer.concat(parts);
  if (type === "bytes")
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
  try {
    return utf8.decode(bytes);
  } catch {
    throw tokens.errorAt(
      first,
      `string field "${fieldName}" is not valid UTF-8 (binary data belongs in a bytes field)`,
    );
  }
}

/** Reads an enum value, by name or by number, and returns its name. */
export function readEnum(tokens: Tokenizer, type: protobuf.Enum, fieldName: string): string {
  const first = tokens.peek();
  const negative = first.kind === "symbol" && first.text === "-";
  if (negative) tokens.next();
  const token = tokens.next();
  const enumName = type.fullName.replace(/^\./, "");
  const allowed = Object.keys(type.values);
  if (token.kind === "identifier" && !negative) {
    if (Object.hasOwn(type.values, token.text)) return token.text;
    const hint = suggestName(token.text, allowed);
    throw tokens.errorAt(
      token,
      `unknown value "${token.text}" for enum ${enumName} in field "${fieldName}"${hint === undefined ? "" : ` (did you mean ${hint}?)`}; allowed: ${allowed.join(", ")}`,
    );
  }
  if (token.kind === "integer") {
    const number = Number(integerValue(token.text)) * (negative ? -1 : 1);
    const name = type.valuesById[number];
    if (name !== undefined) return name;
    throw tokens.errorAt(
      first,
      `enum ${enumName} has no value numbered ${negative ? "-" : ""}${token.text} (field "${fieldName}"); allowed: ${allowed.join(", ")}`,
    );
  }
  throw tokens.errorAt(
    token,
    `expected a name of enum ${enumName} for field "${fieldName}", found ${describeToken(token)}; allowed: ${allowed.join(", ")}`,
  );
}
