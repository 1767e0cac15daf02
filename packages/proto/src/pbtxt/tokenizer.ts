/**
 * Tokenizer for protobuf text format, following the rules of protobuf's own `io::Tokenizer` as the text
 * parser configures it: `#` comments, identifiers, decimal / hex / octal integers, floats (with an optional
 * `f` suffix), single- or double-quoted strings that cannot cross lines, and one-character symbols.
 * A minus sign is a symbol of its own; the parser joins it to the number that follows.
 */
import { TextFormatError } from "./errors.js";

/** What a token is. `end` marks the end of the input. */
export type TokenKind = "identifier" | "integer" | "float" | "string" | "symbol" | "end";

/** One token with its source position. */
export interface Token {
  readonly kind: TokenKind;
  /** The token exactly as written (strings keep their quotes and escapes). */
  readonly text: string;
  /** 1-based line. */
  readonly line: number;
  /** 1-based column. */
  readonly column: number;
}

const CH_TAB = 9;
const CH_LF = 10;
const CH_VT = 11;
const CH_FF = 12;
const CH_CR = 13;
const CH_SPACE = 32;
const CH_HASH = 35;
const CH_DOT = 46;
const CH_ZERO = 48;
const CH_BACKSLASH = 92;

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isLetter(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
}

function isHexDigit(c: number): boolean {
  return isDigit(c) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

/** Reads tokens one at a time, with one token of lookahead. */
export class Tokenizer {
  private readonly text: string;
  private readonly fileName: string | undefined;
  private pos = 0;
  private line = 1;
  private lineStart = 0;
  private lookahead: Token;

  /**
   * @param text - the whole input.
   * @param fileName - name used in error messages.
   */
  constructor(text: string, fileName?: string) {
    this.text = text;
    this.fileName = fileName;
    this.lookahead = this.read();
  }

  /** The next token, without consuming it. */
  peek(): Token {
    return this.lookahead;
  }

  /** Consumes and returns the next token. */
  next(): Token {
    const token = this.lookahead;
    if (token.kind !== "end") this.lookahead = this.read();
    return token;
  }

  /** Builds an error at the given token's position. */
  errorAt(token: { line: number; column: number }, reason: string): TextFormatError {
    return new TextFormatError(reason, { line: token.line, column: token.column, fileName: this.fileName });
  }

  private errorHere(offset: number, reason: string): TextFormatError {
    return new TextFormatError(reason, {
      line: this.line,
      column: offset - this.lineStart + 1,
      fileName: this.fileName,
    });
  }

  private skipWhitespaceAndComments(): void {
    const text = this.text;
    const length = text.length;
    while (this.pos < length) {
      const c = text.charCodeAt(this.pos);
      if (c === CH_LF) {
        this.pos++;
        this.line++;
        this.lineStart = this.pos;
      } else if (c === CH_SPACE || c === CH_TAB || c === CH_CR || c === CH_VT || c === CH_FF) {
        this.pos++;
      } else if (c === CH_HASH) {
        const end = text.indexOf("\n", this.pos);
        this.pos = end === -1 ? length : end;
      } else {
        return;
      }
    }
  }

  private read(): Token {
    this.skipWhitespaceAndComments();
    const start = this.pos;
    const line = this.line;
    const column = start - this.lineStart + 1;
    if (start >= this.text.length) return { kind: "end", text: "", line, column };
    const c = this.text.charCodeAt(start);
    let kind: TokenKind;
    if (isLetter(c)) {
      this.pos++;
      while (
        this.pos < this.text.length &&
        (isLetter(this.text.charCodeAt(this.pos)) || isDigit(this.text.charCodeAt(this.pos)))
      ) {
        this.pos++;
      }
      kind = "identifier";
    } else if (isDigit(c) || (c === CH_DOT && isDigit(this.text.charCodeAt(start + 1)))) {
      kind = this.readNumber();
    } else if (c === 34 || c === 39) {
      this.readString(c);
      kind = "string";
    } else {
      // One symbol; a surrogate pair stays whole so the error message shows the real character.
      const cp = this.text.codePointAt(start) ?? c;
      this.pos += cp > 0xffff ? 2 : 1;
      kind = "symbol";
    }
    return { kind, text: this.text.slice(start, this.pos), line, column };
  }

  private readNumber(): TokenKind {
    const text = this.text;
    const start = this.pos;
    let kind: TokenKind = "integer";
    const first = text.charCodeAt(start);
    const second = text.charCodeAt(start + 1);
    if (first === CH_ZERO && (second === 120 || second === 88)) {
      this.pos += 2;
      if (!isHexDigit(text.charCodeAt(this.pos))) {
        throw this.errorHere(start, `"${text.slice(start, this.pos)}" must be followed by hex digits`);
      }
      while (isHexDigit(text.charCodeAt(this.pos))) this.pos++;
    } else if (first === CH_ZERO && isDigit(second)) {
      this.pos++;
      while (this.pos < text.length && text.charCodeAt(this.pos) >= 48 && text.charCodeAt(this.pos) <= 55)
        this.pos++;
      if (isDigit(text.charCodeAt(this.pos))) {
        throw this.errorHere(start, "numbers starting with a leading zero must be octal (digits 0-7)");
      }
    } else {
      while (isDigit(text.charCodeAt(this.pos))) this.pos++;
      if (text.charCodeAt(this.pos) === CH_DOT) {
        kind = "float";
        this.pos++;
        while (isDigit(text.charCodeAt(this.pos))) this.pos++;
      }
      const e = text.charCodeAt(this.pos);
      if (e === 101 || e === 69) {
        kind = "float";
        this.pos++;
        const sign = text.charCodeAt(this.pos);
        if (sign === 43 || sign === 45) this.pos++;
        if (!isDigit(text.charCodeAt(this.pos))) {
          throw this.errorHere(start, `exponent of "${text.slice(start, this.pos)}" has no digits`);
        }
        while (isDigit(text.charCodeAt(this.pos))) this.pos++;
      }
      const f = text.charCodeAt(this.pos);
      if (f === 102 || f === 70) {
        kind = "float";
        this.pos++;
      }
    }
    const after = text.charCodeAt(this.pos);
    if (isLetter(after) || isDigit(after) || after === CH_DOT) {
      throw this.errorHere(
        start,
        `unexpected '${text[this.pos]}' after number ${text.slice(start, this.pos)} (separate the number from what follows)`,
      );
    }
    return kind;
  }

  private readString(quote: number): void {
    const text = this.text;
    const start = this.pos;
    this.pos++;
    for (;;) {
      if (this.pos >= text.length) {
        throw this.errorHere(start, "string literal is not closed before end of input");
      }
      const c = text.charCodeAt(this.pos);
      if (c === quote) {
        this.pos++;
        return;
      }
      if (c === CH_LF) {
        throw this.errorHere(
          start,
          "string literal is not closed before end of line (strings cannot span lines)",
        );
      }
      // An escaped character is skipped whole; escapes are checked when the literal is decoded.
      this.pos +=
        c === CH_BACKSLASH && text.charCodeAt(this.pos + 1) !== CH_LF && this.pos + 1 < text.length ? 2 : 1;
    }
  }
}
