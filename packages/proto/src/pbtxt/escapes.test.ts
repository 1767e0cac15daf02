import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decodeLiteral, quoteBytes, quoteString } from "./escapes.js";

function decode(raw: string): number[] {
  return [
    ...decodeLiteral(raw, (offset, reason) => {
      throw new Error(`${offset}: ${reason}`);
    }),
  ];
}

function decodeError(raw: string): string {
  try {
    decode(raw);
  } catch (error) {
    return (error as Error).message;
  }
  assert.fail(`expected an error for ${raw}`);
}

describe("string literal escapes", () => {
  test("named escapes", () => {
    assert.deepEqual(decode(String.raw`"\n\t\r\\\'\"\a\b\f\v\?"`), [10, 9, 13, 92, 39, 34, 7, 8, 12, 11, 63]);
  });

  test("octal escapes take up to three digits", () => {
    assert.deepEqual(decode(String.raw`"\0\7\101\1012\377"`), [0, 7, 65, 65, 50, 255]);
  });

  test("hex escapes take one or two digits", () => {
    assert.deepEqual(decode(String.raw`"\x41\x4a\X7\xfff"`), [0x41, 0x4a, 7, 0xff, 0x66]);
  });

  test("Unicode escapes become UTF-8; surrogate pairs written as two escapes join", () => {
    assert.deepEqual(decode(String.raw`"\u00e9\u4E2D\U0001F600\ud83d\ude00"`), [
      ...Buffer.from("é中😀😀", "utf8"),
    ]);
  });

  test("source characters are UTF-8 encoded", () => {
    assert.deepEqual(decode('"é😀"'), [...Buffer.from("é😀", "utf8")]);
  });

  test("malformed escapes report their offset", () => {
    assert.equal(
      decodeError(String.raw`"ab\q"`),
      String.raw`3: invalid escape sequence \q (allowed: \n \t \r \\ \' \" \a \b \f \v \? \NNN \xHH \uXXXX \UXXXXXXXX)`,
    );
    assert.equal(decodeError(String.raw`"\777"`), String.raw`1: octal escape \777 is above \377`);
    assert.equal(decodeError(String.raw`"\xg"`), String.raw`1: \x must be followed by 1 or 2 hex digits`);
    assert.equal(decodeError(String.raw`"\u12"`), String.raw`1: \u must be followed by exactly 4 hex digits`);
    assert.equal(decodeError(String.raw`"\U00110000"`), String.raw`1: \U00110000 is above U+10FFFF`);
    assert.equal(decodeError(String.raw`"\ud83d"`), "1: unpaired surrogate in Unicode escape");
    assert.equal(decodeError(String.raw`"\ude00"`), "1: unpaired surrogate in Unicode escape");
  });

  test("quoteString escapes what must be escaped and keeps printable Unicode", () => {
    assert.equal(quoteString(`a"b\\c\nd\re\tf\0g\x7fh'é😀`), String.raw`"a\"b\\c\nd\re\tf\000g\177h'é😀"`);
    assert.equal(quoteString("\ud800"), undefined);
    assert.equal(quoteString("\ude00x"), undefined);
  });

  test("quoteBytes uses octal for everything outside printable ASCII", () => {
    assert.equal(
      quoteBytes(Uint8Array.from([0, 65, 34, 92, 10, 200, 255, 0x7f, 49])),
      String.raw`"\000A\"\\\n\310\377\1771"`,
    );
  });

  test("quoted strings and bytes decode back to the same bytes", () => {
    const text = "x\u0001\"\\\n'é\u2028😀\u{10FFFF}";
    assert.deepEqual(decode(quoteString(text) ?? ""), [...Buffer.from(text, "utf8")]);
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    assert.deepEqual(decode(quoteBytes(bytes)), [...bytes]);
  });
});
