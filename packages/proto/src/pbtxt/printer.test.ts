import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { TextFormatValueError } from "./errors.js";
import { parseTextFormat } from "./parser.js";
import { printTextFormat } from "./printer.js";
import { allTypesType } from "./testing/all-types-schema.js";

const all = allTypesType("All");

function printError(message: object): string {
  try {
    printTextFormat(all, message);
  } catch (error) {
    assert.ok(error instanceof TextFormatValueError, String(error));
    assert.equal(error.code, "TEXT_FORMAT_VALUE_ERROR");
    return error.message;
  }
  assert.fail("expected a print error");
}

describe("printTextFormat", () => {
  test("canonical layout: declaration order, 2-space indent, lists on one line, blocks for messages and maps", () => {
    const text = printTextFormat(all, {
      color: "RED",
      node: { maybe: 0, name: "n", child: {}, children: [{ text: "a" }, { number: 2 }] },
      scalars: {
        s: 'say "hi"\n',
        i64: "-9223372036854775808",
        u64: "18446744073709551615",
        d: 0.1,
        f: -0,
        b: false,
      },
      lists: { i32: [1, -2, 3], s: ["a", "b"], color: ["RED", "GREEN"], msgs: [{}, { i32: 5 }], d: [] },
      maps: {
        string_int: { a: 1, "b c": 2 },
        int64_msg: { "-1": { s: "x" } },
        bool_bytes: { true: "AP8=" },
        uint_enum: {},
      },
    });
    assert.equal(
      text,
      `scalars {
  d: 0.1
  f: -0
  i64: -9223372036854775808
  u64: 18446744073709551615
  b: false
  s: "say \\"hi\\"\\n"
}
lists {
  d: []
  i32: [ 1, -2, 3 ]
  s: [ "a", "b" ]
  color: [ RED, GREEN ]
  msgs { }
  msgs {
    i32: 5
  }
}
maps {
  string_int {
    key: "a"
    value: 1
  }
  string_int {
    key: "b c"
    value: 2
  }
  int64_msg {
    key: -1
    value {
      s: "x"
    }
  }
  uint_enum: []
  bool_bytes {
    key: true
    value: "\\000\\377"
  }
}
node {
  name: "n"
  child { }
  children {
    text: "a"
  }
  children {
    number: 2
  }
  maybe: 0
}
color: RED
`,
    );
  });

  test("an empty message prints as empty text", () => {
    assert.equal(printTextFormat(all, {}), "");
  });

  test("floats print in the shortest form that reads back to the same number", () => {
    const values = [
      0.1,
      1 / 3,
      1e21,
      1e-7,
      5e-324,
      1.7976931348623157e308,
      -0,
      123456789.125,
      Math.fround(0.1),
    ];
    const text = printTextFormat(all, {
      lists: { d: values, f: [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY] },
    });
    assert.equal(
      text,
      "lists {\n  d: [ 0.1, 0.3333333333333333, 1e+21, 1e-7, 5e-324, 1.7976931348623157e+308, -0, 123456789.125, 0.10000000149011612 ]\n  f: [ nan, inf, -inf ]\n}\n",
    );
    assert.deepEqual(parseTextFormat(all, text), {
      lists: { d: values, f: [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY] },
    });
  });

  test("lenient inputs: enum numbers, 64-bit numbers and bigints, Uint8Array bytes, JSON float names, null/undefined skipped", () => {
    const text = printTextFormat(all, {
      scalars: {
        color: 2,
        i64: 5,
        u64: 2n ** 64n - 1n,
        by: Uint8Array.from([1, 2]),
        d: "NaN",
        f: "-Infinity",
        s: undefined,
        b: null,
      },
    });
    assert.equal(
      text,
      'scalars {\n  d: nan\n  f: -inf\n  i64: 5\n  u64: 18446744073709551615\n  by: "\\001\\002"\n  color: GREEN\n}\n',
    );
  });

  test("values that do not fit the schema are reported with their path", () => {
    assert.equal(printError({ maxBatch: 1 }), 'unknown field "maxBatch" in message tbench.test.All');
    assert.equal(
      printError({ scalars: { i_32: 1 } }),
      'scalars: unknown field "i_32" in message tbench.test.Scalars (did you mean "i32"?)',
    );
    assert.equal(
      printError({ scalars: { i32: 2 ** 31 } }),
      "scalars.i32: value 2147483648 is out of range for int32 (-2147483648 to 2147483647)",
    );
    assert.equal(
      printError({ scalars: { u32: -1 } }),
      "scalars.u32: value -1 is out of range for uint32 (0 to 4294967295)",
    );
    assert.equal(
      printError({ scalars: { i32: 1.5 } }),
      "scalars.i32: expected an integer number for int32 field, got number 1.5",
    );
    assert.equal(
      printError({ scalars: { i32: "1" } }),
      'scalars.i32: expected an integer number for int32 field, got string "1"',
    );
    assert.equal(
      printError({ scalars: { u64: "18446744073709551616" } }),
      "scalars.u64: value 18446744073709551616 is out of range for uint64 (0 to 18446744073709551615)",
    );
    assert.equal(
      printError({ scalars: { i64: "1e3" } }),
      'scalars.i64: expected a decimal string (or safe integer) for int64 field, got string "1e3"',
    );
    assert.equal(
      printError({ scalars: { i64: 2 ** 53 } }),
      "scalars.i64: expected a decimal string (or safe integer) for int64 field, got number 9007199254740992",
    );
    assert.equal(
      printError({ scalars: { b: "true" } }),
      'scalars.b: expected a boolean for bool field, got string "true"',
    );
    assert.equal(
      printError({ scalars: { s: 5 } }),
      "scalars.s: expected a string for string field, got number 5",
    );
    assert.equal(
      printError({ scalars: { s: "\ud800" } }),
      "scalars.s: string holds an unpaired UTF-16 surrogate, which has no UTF-8 form",
    );
    assert.equal(
      printError({ scalars: { by: "not base64!" } }),
      'scalars.by: expected a base64 string for bytes field, got string "not base64!"',
    );
    assert.equal(
      printError({ scalars: { d: "1.5" } }),
      'scalars.d: expected a number for double field, got string "1.5"',
    );
    assert.equal(
      printError({ scalars: { color: "GREN" } }),
      'scalars.color: unknown value string "GREN" for enum tbench.test.Color (did you mean GREEN?); allowed: COLOR_UNSPECIFIED, RED, GREEN, BELOW_ZERO',
    );
    assert.equal(
      printError({ scalars: [] }),
      "scalars: expected an object for message tbench.test.Scalars, got an array",
    );
    assert.equal(
      printError({ lists: { i32: 5 } }),
      "lists.i32: expected an array for repeated field, got number 5",
    );
    assert.equal(
      printError({ lists: { msgs: [{}, { i32: "x" }] } }),
      'lists.msgs[1].i32: expected an integer number for int32 field, got string "x"',
    );
    assert.equal(
      printError({ lists: { s: ["a", 1] } }),
      "lists.s[1]: expected a string for string field, got number 1",
    );
    assert.equal(
      printError({ maps: { string_int: [] } }),
      "maps.string_int: expected an object for map field, got an array",
    );
    assert.equal(
      printError({ maps: { int_string: { "01": "x" } } }),
      'maps.int_string["01"]: map key must be a decimal integer for int32 keys, got "01"',
    );
    assert.equal(
      printError({ maps: { bool_bytes: { yes: "" } } }),
      'maps.bool_bytes["yes"]: map key must be "true" or "false" for bool keys, got "yes"',
    );
    assert.equal(
      printError({ maps: { uint_enum: { "-1": "RED" } } }),
      'maps.uint_enum["-1"]: value -1 is out of range for uint32 (0 to 4294967295)',
    );
    assert.equal(
      printError({ maps: { string_msg: { k: { s: 1 } } } }),
      'maps.string_msg["k"].s: expected a string for string field, got number 1',
    );
    assert.equal(
      printError({ node: { number: 1, text: "x" } }),
      'node: fields "number" and "text" of oneof "choice" are both set',
    );
  });

  test("map keys named __proto__ print and parse back", () => {
    const map: Record<string, number> = {};
    Object.defineProperty(map, "__proto__", {
      value: 3,
      enumerable: true,
      writable: true,
      configurable: true,
    });
    const text = printTextFormat(all, { maps: { string_int: map } });
    assert.equal(text, 'maps {\n  string_int {\n    key: "__proto__"\n    value: 3\n  }\n}\n');
    assert.deepEqual(parseTextFormat(all, text), { maps: { string_int: map } });
  });
});
