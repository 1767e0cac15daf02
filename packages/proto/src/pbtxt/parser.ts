/**
 * Schema-driven parser for protobuf text format (the language of Triton's config.pbtxt), producing the
 * object form described in text-message.ts. It accepts what protobuf's own text parser accepts in
 * practice: `#` comments, `field: value`, `field: [a, b]`, repeated fields written several times, message
 * fields with or without a colon, `{}` or `<>` delimiters, lists of messages, map entries as
 * `{ key: .. value: .. }`, `,` or `;` after any field, adjacent string literals.
 */
import type protobuf from "protobufjs";
import { defaultValue } from "./defaults.js";
import { describeToken, readEnum, readScalar } from "./scalar-values.js";
import { type FieldInfo, type MessageInfo, messageInfo } from "./schema.js";
import { suggestName } from "./suggest.js";
import type { TextMessage, TextValue } from "./text-message.js";
import { type Token, Tokenizer } from "./tokenizer.js";

/** Options of {@link parseTextFormat}. */
export interface ParseTextFormatOptions {
  /** Name used in error messages, for example `models/simple/config.pbtxt`. */
  fileName?: string | undefined;
}

/** Messages nested deeper than this are rejected (protobuf's text parser has the same limit). */
const MAX_DEPTH = 100;

function isSymbol(token: Token, symbol: string): boolean {
  return token.kind === "symbol" && token.text === symbol;
}

/** Defines an own property even for names such as `__proto__`, which plain assignment would not. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

class Parser {
  private readonly tokens: Tokenizer;
  private depth = 0;

  constructor(tokens: Tokenizer) {
    this.tokens = tokens;
  }

  /** Parses fields until `open`'s closing delimiter, or until the end of input when `open` is undefined. */
  parseMessage(info: MessageInfo, open: Token | undefined): TextMessage {
    const tokens = this.tokens;
    const close = open === undefined ? undefined : open.text === "<" ? ">" : "}";
    const message: TextMessage = {};
    for (;;) {
      const token = tokens.peek();
      if (close !== undefined && isSymbol(token, close)) {
        tokens.next();
        return message;
      }
      if (token.kind === "end") {
        if (open === undefined) return message;
        throw tokens.errorAt(
          token,
          `expected '${close}' to close the ${info.fullName} message opened at ${open.line}:${open.column}, found end of input`,
        );
      }
      if (isSymbol(token, "[")) {
        throw tokens.errorAt(
          token,
          "extension and Any fields ([name] or [type.googleapis.com/...]) are not supported in this text format codec",
        );
      }
      if (token.kind !== "identifier") {
        const expected = close === undefined ? "a field name" : `a field name or '${close}'`;
        throw tokens.errorAt(
          token,
          `expected ${expected} in message ${info.fullName}, found ${describeToken(token)}`,
        );
      }
      tokens.next();
      const field = info.byName.get(token.text);
      if (field === undefined) {
        const hint = suggestName(
          token.text,
          info.fields.map((f) => f.name),
        );
        throw tokens.errorAt(
          token,
          `unknown field "${token.text}" in message ${info.fullName}${hint === undefined ? "" : ` (did you mean "${hint}"?)`}`,
        );
      }
      this.parseField(info, field, token, message);
      const separator = tokens.peek();
      if (isSymbol(separator, ";") || isSymbol(separator, ",")) tokens.next();
    }
  }

  private parseField(info: MessageInfo, field: FieldInfo, nameToken: Token, message: TextMessage): void {
    const tokens = this.tokens;
    const hasColon = isSymbol(tokens.peek(), ":");
    if (hasColon) tokens.next();
    const next = tokens.peek();
    const isList = isSymbol(next, "[");
    if (isList && field.cardinality === "single") {
      throw tokens.errorAt(next, `field "${field.name}" is not repeated, so it cannot take a list '[...]'`);
    }
    const isMessage = field.cardinality === "map" || field.value.kind === "message";
    if (!isMessage && !hasColon) {
      throw tokens.errorAt(
        next,
        `expected ':' after field name "${field.name}", found ${describeToken(next)}`,
      );
    }
    if (isMessage && !isList && !isSymbol(next, "{") && !isSymbol(next, "<")) {
      const list = field.cardinality === "single" ? "" : " or '['";
      const expected = hasColon ? `'{' or '<'${list}` : `':', '{' or '<'${list}`;
      const where = hasColon ? `for message field "${field.name}"` : `after field name "${field.name}"`;
      throw tokens.errorAt(next, `expected ${expected} ${where}, found ${describeToken(next)}`);
    }
    if (field.cardinality === "single") {
      this.checkSingle(info, field, nameToken, message);
      setOwn(message, field.name, this.parseValue(field));
      return;
    }
    const existing = Object.hasOwn(message, field.name) ? message[field.name] : undefined;
    const target = existing ?? (field.cardinality === "map" ? {} : []);
    setOwn(message, field.name, target);
    const add = (value: TextValue): void => {
      if (field.cardinality === "map") this.addMapEntry(field, value as TextMessage, target as TextMessage);
      else (target as TextValue[]).push(value);
    };
    if (!isList) {
      add(this.parseValue(field));
      return;
    }
    tokens.next();
    if (isSymbol(tokens.peek(), "]")) {
      tokens.next();
      return;
    }
    for (;;) {
      add(this.parseValue(field));
      const after = tokens.next();
      if (isSymbol(after, "]")) return;
      if (!isSymbol(after, ",")) {
        throw tokens.errorAt(
          after,
          `expected ',' or ']' in the list of field "${field.name}", found ${describeToken(after)}`,
        );
      }
    }
  }

  /** A non-repeated field may appear once, and only one member of a oneof may be set. */
  private checkSingle(info: MessageInfo, field: FieldInfo, nameToken: Token, message: TextMessage): void {
    if (Object.hasOwn(message, field.name)) {
      throw this.tokens.errorAt(nameToken, `non-repeated field "${field.name}" is specified more than once`);
    }
    if (field.oneof === undefined) return;
    for (const other of info.oneofs.get(field.oneof) ?? []) {
      if (Object.hasOwn(message, other)) {
        throw this.tokens.errorAt(
          nameToken,
          `field "${field.name}" is specified along with field "${other}", another member of oneof "${field.oneof}"`,
        );
      }
    }
  }

  /** One value of the field: a message in `{}`/`<>` (a map entry for maps) or a scalar. */
  private parseValue(field: FieldInfo): TextValue {
    const tokens = this.tokens;
    if (field.mapEntry !== undefined || field.value.kind === "message") {
      const open = tokens.next();
      if (!isSymbol(open, "{") && !isSymbol(open, "<")) {
        throw tokens.errorAt(
          open,
          `expected '{' or '<' to start a value of field "${field.name}", found ${describeToken(open)}`,
        );
      }
      if (++this.depth > MAX_DEPTH)
        throw tokens.errorAt(open, `messages are nested more than ${MAX_DEPTH} deep`);
      const info = field.mapEntry ?? (field.value as { type: MessageInfo }).type;
      const value = this.parseMessage(info, open);
      this.depth--;
      return value;
    }
    if (field.value.kind === "enum") return readEnum(tokens, field.value.type, field.name);
    return readScalar(tokens, field.value.type, field.name);
  }

  private addMapEntry(field: FieldInfo, entry: TextMessage, target: TextMessage): void {
    const [keyField, valueField] = (field.mapEntry as MessageInfo).fields as [FieldInfo, FieldInfo];
    const key = entry["key"] ?? defaultValue(keyField.value);
    const value = entry["value"] ?? defaultValue(valueField.value);
    // Like protobuf, a key given twice keeps the last value.
    setOwn(target, String(key), value);
  }
}

/**
 * Parses protobuf text format into the object form of `type` (see {@link TextMessage}).
 *
 * @param type - the message type, from protobufjs reflection.
 * @param text - the text, for example the contents of a config.pbtxt.
 * @param options - `fileName` to name in error messages.
 * @returns the message; only fields present in the text appear.
 * @throws {@link TextFormatError} with line and column when the text is malformed or does not fit the schema.
 */
export function parseTextFormat(
  type: protobuf.Type,
  text: string,
  options: ParseTextFormatOptions = {},
): TextMessage {
  const info = messageInfo(type);
  return new Parser(new Tokenizer(text, options.fileName)).parseMessage(info, undefined);
}
