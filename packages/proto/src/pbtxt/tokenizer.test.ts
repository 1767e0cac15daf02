import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { TextFormatError } from "./errors.js";
import { type Token, Tokenizer } from "./tokenizer.js";

function tokenize(text: string): Array<[Token["kind"], string, number, number]> {
  const tokens = new Tokenizer(text, "t.pbtxt");
  const out: Array<[Token["kind"], string, number, number]> = [];
  for (;;) {
    const token = tokens.next();
    out.push([token.kind, token.text, token.line, token.column]);
    if (token.kind === "end") return out;
  }
}

function tokenError(text: string): TextFormatError {
  try {
    tokenize(text);
  } catch (error) {
    assert.ok(error instanceof TextFormatError);
    return error;
  }
  assert.fail(`expected a tokenizer error for ${JSON.stringify(text)}`);
}

describe("tokenizer", () => {
  test("identifiers, symbols, strings with positions; comments and whitespace skipped", () => {
    assert.deepEqual(tokenize('name: "x" # comment\n  input <\t>\r\n[a_1,-]'), [
      ["identifier", "name", 1, 1],
      ["symbol", ":", 1, 5],
      ["string", '"x"', 1, 7],
      ["identifier", "input", 2, 3],
      ["symbol", "<", 2, 9],
      ["symbol", ">", 2, 11],
      ["symbol", "[", 3, 1],
      ["identifier", "a_1", 3, 2],
      ["symbol", ",", 3, 5],
      ["symbol", "-", 3, 6],
      ["symbol", "]", 3, 7],
      ["end", "", 3, 8],
    ]);
  });

  test("numbers: decimal, hex, octal, floats with exponent and f suffix", () => {
    const kinds = tokenize("0 12 0x1F 0X1f 017 1.5 .5 5. 1e5 1E-5 2.5e+3 1.5f 3F 0.0").map(
      ([kind, text]) => `${kind}:${text}`,
    );
    assert.deepEqual(kinds, [
      "integer:0",
      "integer:12",
      "integer:0x1F",
      "integer:0X1f",
      "integer:017",
      "float:1.5",
      "float:.5",
      "float:5.",
      "float:1e5",
      "float:1E-5",
      "float:2.5e+3",
      "float:1.5f",
      "float:3F",
      "float:0.0",
      "end:",
    ]);
  });

  test("a string keeps its quotes and escapes; an escaped quote does not end it", () => {
    assert.deepEqual(tokenize(`'it\\'s' "a\\"b"`).slice(0, 2), [
      ["string", "'it\\'s'", 1, 1],
      ["string", '"a\\"b"', 1, 9],
    ]);
  });

  test("comment at end of input without newline", () => {
    assert.deepEqual(tokenize("a # no newline"), [
      ["identifier", "a", 1, 1],
      ["end", "", 1, 15],
    ]);
  });

  test("non-ASCII outside strings is one symbol token (surrogate pairs stay whole)", () => {
    assert.deepEqual(tokenize("😀é").slice(0, 2), [
      ["symbol", "😀", 1, 1],
      ["symbol", "é", 1, 3],
    ]);
  });

  test("errors name line, column and the problem", () => {
    assert.equal(
      tokenError('a: "open\n"').message,
      "t.pbtxt:1:4: string literal is not closed before end of line (strings cannot span lines)",
    );
    assert.equal(
      tokenError("a: 'open").message,
      "t.pbtxt:1:4: string literal is not closed before end of input",
    );
    assert.equal(tokenError("\n  x: 0x").message, 't.pbtxt:2:6: "0x" must be followed by hex digits');
    assert.equal(
      tokenError("x: 089").message,
      "t.pbtxt:1:4: numbers starting with a leading zero must be octal (digits 0-7)",
    );
    assert.equal(tokenError("x: 1e").message, 't.pbtxt:1:4: exponent of "1e" has no digits');
    assert.equal(
      tokenError("x: 12abc").message,
      "t.pbtxt:1:4: unexpected 'a' after number 12 (separate the number from what follows)",
    );
    assert.equal(
      tokenError("x: 1.5.3").message,
      "t.pbtxt:1:4: unexpected '.' after number 1.5 (separate the number from what follows)",
    );
    const error = tokenError("\n\n   'x");
    assert.equal(error.line, 3);
    assert.equal(error.column, 4);
    assert.equal(error.fileName, "t.pbtxt");
    assert.equal(error.code, "TEXT_FORMAT_PARSE_ERROR");
  });
});
