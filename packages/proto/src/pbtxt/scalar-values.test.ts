import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { TextFormatError } from "./errors.js";
import { parseTextFormat } from "./parser.js";
import { allTypesType } from "./testing/all-types-schema.js";

const scalars = allTypesType("Scalars");

function value(field: string, text: string): unknown {
  return parseTextFormat(scalars, `${field}: ${text}`)[field];
}

function reason(field: string, text: string): string {
  try {
    parseTextFormat(scalars, `${field}: ${text}`);
  } catch (error) {
    assert.ok(error instanceof TextFormatError, String(error));
    return `${error.column}: ${error.reason}`;
  }
  assert.fail(`expected an error for ${field}: ${text}`);
}

describe("64-bit integers", () => {
  test("are decimal strings, lossless at the limits", () => {
    assert.equal(value("u64", "18446744073709551615"), "18446744073709551615");
    assert.equal(value("fx64", "0xFFFFFFFFFFFFFFFF"), "18446744073709551615");
    assert.equal(value("u64", "01777777777777777777777"), "18446744073709551615");
    assert.equal(value("i64", "9223372036854775807"), "9223372036854775807");
    assert.equal(value("i64", "-9223372036854775808"), "-9223372036854775808");
    assert.equal(value("s64", "-0x8000000000000000"), "-9223372036854775808");
    assert.equal(value("sfx64", "-01"), "-1");
    assert.equal(value("i64", "9007199254740993"), "9007199254740993");
    assert.equal(value("i64", "-0"), "0");
    assert.equal(value("u64", "0"), "0");
  });

  test("out of range values say the range", () => {
    assert.equal(
      reason("u64", "18446744073709551616"),
      '6: value 18446744073709551616 is out of range for uint64 field "u64" (0 to 18446744073709551615)',
    );
    assert.equal(
      reason("u64", "-1"),
      '6: value -1 is out of range for uint64 field "u64" (0 to 18446744073709551615)',
    );
    assert.equal(
      reason("i64", "9223372036854775808"),
      '6: value 9223372036854775808 is out of range for int64 field "i64" (-9223372036854775808 to 9223372036854775807)',
    );
    assert.equal(
      reason("sfx64", "-0x8000000000000001"),
      '8: value -0x8000000000000001 is out of range for sfixed64 field "sfx64" (-9223372036854775808 to 9223372036854775807)',
    );
  });
});

describe("32-bit integers", () => {
  test("are numbers; hex, octal and negative forms", () => {
    assert.equal(value("i32", "2147483647"), 2147483647);
    assert.equal(value("i32", "-2147483648"), -2147483648);
    assert.equal(value("sfx32", "-0x80000000"), -2147483648);
    assert.equal(value("s32", "-017"), -15);
    assert.equal(value("u32", "0xffffffff"), 4294967295);
    assert.equal(value("fx32", "037777777777"), 4294967295);
    assert.equal(value("i32", "- 5"), -5);
    assert.ok(Object.is(value("i32", "-0"), 0));
  });

  test("range, sign and kind are checked", () => {
    assert.equal(
      reason("i32", "2147483648"),
      '6: value 2147483648 is out of range for int32 field "i32" (-2147483648 to 2147483647)',
    );
    assert.equal(
      reason("i32", "0xFFFFFFFF"),
      '6: value 0xFFFFFFFF is out of range for int32 field "i32" (-2147483648 to 2147483647)',
    );
    assert.equal(
      reason("u32", "4294967296"),
      '6: value 4294967296 is out of range for uint32 field "u32" (0 to 4294967295)',
    );
    assert.equal(
      reason("fx32", "-0"),
      '7: value -0 is out of range for fixed32 field "fx32" (0 to 4294967295)',
    );
    assert.equal(reason("i32", "1.5"), '6: expected an integer for int32 field "i32", found number 1.5');
    assert.equal(reason("i32", "1e3"), '6: expected an integer for int32 field "i32", found number 1e3');
    assert.equal(
      reason("i32", "eight"),
      '6: expected an integer for int32 field "i32", found identifier "eight"',
    );
    assert.equal(reason("i32", '"8"'), '6: expected an integer for int32 field "i32", found string "8"');
    assert.equal(reason("i32", "-"), '7: expected an integer for int32 field "i32", found end of input');
  });
});

describe("floats", () => {
  test("decimal, exponent, suffix, leading/trailing dot, integers", () => {
    assert.equal(value("d", "1e5"), 100000);
    assert.equal(value("d", "1.5f"), 1.5);
    assert.equal(value("f", "2.5F"), 2.5);
    assert.equal(value("d", "3f"), 3);
    assert.equal(value("d", ".25"), 0.25);
    assert.equal(value("d", "7."), 7);
    assert.equal(value("d", "-1E-3"), -0.001);
    assert.equal(value("d", "12"), 12);
    assert.equal(value("d", "18446744073709551617"), 2 ** 64);
    assert.equal(value("d", "0.1"), 0.1);
    assert.equal(value("f", "0.1"), 0.1, "float values are kept as written, not rounded to float32");
    assert.equal(value("d", "4.9e-324"), 5e-324);
  });

  test("inf, infinity and nan in any case, with sign; -0 keeps its sign", () => {
    assert.equal(value("d", "inf"), Number.POSITIVE_INFINITY);
    assert.equal(value("d", "Infinity"), Number.POSITIVE_INFINITY);
    assert.equal(value("d", "-INF"), Number.NEGATIVE_INFINITY);
    assert.equal(value("f", "-infinity"), Number.NEGATIVE_INFINITY);
    assert.ok(Number.isNaN(value("d", "nan")));
    assert.ok(Number.isNaN(value("f", "-NaN")));
    assert.ok(Object.is(value("d", "-0"), -0));
    assert.ok(Object.is(value("f", "-0.0"), -0));
  });

  test("a float beyond the float32 range becomes an infinity, as in protobuf", () => {
    assert.equal(value("f", "1e39"), Number.POSITIVE_INFINITY);
    assert.equal(value("f", "-1e39"), Number.NEGATIVE_INFINITY);
    assert.equal(value("f", "3.4028235e38"), 3.4028235e38);
    assert.equal(value("d", "1e39"), 1e39);
  });

  test("hex and octal are not decimal numbers; words other than inf/nan are rejected", () => {
    assert.equal(reason("d", "0x10"), '4: expected a decimal number for double field "d", found number 0x10');
    assert.equal(reason("f", "017"), '4: expected a decimal number for float field "f", found number 017');
    assert.equal(
      reason("d", "infinite"),
      '4: expected a number, inf or nan for double field "d", found identifier "infinite"',
    );
  });
});

describe("bool, enum, string and bytes", () => {
  test("bool spellings", () => {
    for (const text of ["true", "True", "t", "1", "0x1"]) assert.equal(value("b", text), true, text);
    for (const text of ["false", "False", "f", "0", "00"]) assert.equal(value("b", text), false, text);
    assert.equal(
      reason("b", "TRUE"),
      '4: expected true or false for bool field "b" (also True, False, t, f, 1, 0), found identifier "TRUE"',
    );
    assert.equal(
      reason("b", "2"),
      '4: expected true or false for bool field "b" (also True, False, t, f, 1, 0), found number 2',
    );
  });

  test("enums by name or number; the name is returned", () => {
    assert.equal(value("color", "RED"), "RED");
    assert.equal(value("color", "2"), "GREEN");
    assert.equal(value("color", "-1"), "BELOW_ZERO");
    assert.equal(value("color", "0x1"), "RED");
  });

  test("wrong enum values name the enum and list the allowed names", () => {
    assert.equal(
      reason("color", "GREN"),
      '8: unknown value "GREN" for enum tbench.test.Color in field "color" (did you mean GREEN?); allowed: COLOR_UNSPECIFIED, RED, GREEN, BELOW_ZERO',
    );
    assert.equal(
      reason("color", "PURPLE"),
      '8: unknown value "PURPLE" for enum tbench.test.Color in field "color"; allowed: COLOR_UNSPECIFIED, RED, GREEN, BELOW_ZERO',
    );
    assert.equal(
      reason("color", "7"),
      '8: enum tbench.test.Color has no value numbered 7 (field "color"); allowed: COLOR_UNSPECIFIED, RED, GREEN, BELOW_ZERO',
    );
    assert.equal(
      reason("color", '"RED"'),
      '8: expected a name of enum tbench.test.Color for field "color", found string "RED"; allowed: COLOR_UNSPECIFIED, RED, GREEN, BELOW_ZERO',
    );
  });

  test("strings: escapes, UTF-8, errors", () => {
    assert.equal(value("s", String.raw`"\101\x42\u0043\U0001F600\n"`), "ABC😀\n");
    assert.equal(value("s", `"中文 é"`), "中文 é");
    assert.equal(value("s", String.raw`'\?\'"'`), `?'"`);
    assert.equal(
      reason("s", "simple"),
      '4: expected a quoted string for string field "s", found identifier "simple"',
    );
    assert.equal(reason("s", "5"), '4: expected a quoted string for string field "s", found number 5');
    assert.equal(
      reason("s", String.raw`"ok" "\xff"`),
      '4: string field "s" is not valid UTF-8 (binary data belongs in a bytes field)',
    );
    assert.equal(
      reason("s", String.raw`"abc\d"`),
      String.raw`8: invalid escape sequence \d (allowed: \n \t \r \\ \' \" \a \b \f \v \? \NNN \xHH \uXXXX \UXXXXXXXX)`,
    );
  });

  test("bytes become base64; any byte is allowed", () => {
    assert.equal(
      value("by", String.raw`"\000\377\x80" "abc"`),
      Buffer.from([0, 255, 128, 97, 98, 99]).toString("base64"),
    );
    assert.equal(value("by", '""'), "");
    assert.equal(value("by", '"é"'), "w6k=");
  });
});
