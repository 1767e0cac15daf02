import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseTextFormat } from "./parser.js";
import { allTypesType } from "./testing/all-types-schema.js";

const all = allTypesType("All");
const parse = (text: string) => parseTextFormat(all, text);

describe("parseTextFormat grammar", () => {
  test("empty input and comment-only input give an empty message", () => {
    assert.deepEqual(parse(""), {});
    assert.deepEqual(parse("  # only a comment\n\n"), {});
  });

  test("scalar fields of every type in the object form", () => {
    const text = `scalars {
      d: 1.5 f: -2.25 i32: -7 u32: 7 s32: -8 fx32: 9 sfx32: -10
      i64: -11 u64: 12 s64: -13 fx64: 14 sfx64: -15
      b: true s: "str" by: "\\x00\\xff" color: GREEN
    }`;
    assert.deepEqual(parse(text), {
      scalars: {
        d: 1.5,
        f: -2.25,
        i32: -7,
        u32: 7,
        s32: -8,
        fx32: 9,
        sfx32: -10,
        i64: "-11",
        u64: "12",
        s64: "-13",
        fx64: "14",
        sfx64: "-15",
        b: true,
        s: "str",
        by: "AP8=",
        color: "GREEN",
      },
    });
  });

  test("only fields present in the text appear, default values included", () => {
    assert.deepEqual(parse("scalars { i32: 0 s: '' b: false color: COLOR_UNSPECIFIED }"), {
      scalars: { i32: 0, s: "", b: false, color: "COLOR_UNSPECIFIED" },
    });
  });

  test("message fields with or without colon, {} or <> delimiters, empty messages", () => {
    assert.deepEqual(parse("scalars { i32: 1 }"), { scalars: { i32: 1 } });
    assert.deepEqual(parse("scalars: { i32: 1 }"), { scalars: { i32: 1 } });
    assert.deepEqual(parse("scalars < i32: 1 >"), { scalars: { i32: 1 } });
    assert.deepEqual(parse("scalars: <i32:1>"), { scalars: { i32: 1 } });
    assert.deepEqual(parse("scalars {} node <>"), { scalars: {}, node: {} });
  });

  test("lists of scalars, repeated fields written several times (appended), empty lists", () => {
    assert.deepEqual(
      parse("lists { i32: [1, 2] i32: 3 i32: [] i32: [ 4 ] s: ['a', \"b\"] color: [RED, 2] }"),
      {
        lists: { i32: [1, 2, 3, 4], s: ["a", "b"], color: ["RED", "GREEN"] },
      },
    );
    assert.deepEqual(parse("lists { d: [] }"), { lists: { d: [] } });
  });

  test("lists of messages with or without colon, mixed with single blocks", () => {
    const expected = { lists: { msgs: [{ i32: 1 }, { i32: 2 }, { i32: 3 }, {}] } };
    assert.deepEqual(
      parse("lists { msgs [ { i32: 1 }, < i32: 2 > ] msgs { i32: 3 } msgs: [ {} ] }"),
      expected,
    );
    assert.deepEqual(parse("lists { msgs: [ { i32: 1 }, { i32: 2 } ], msgs { i32: 3 }; msgs {} }"), expected);
    assert.deepEqual(parse("lists { msgs [] }"), { lists: { msgs: [] } });
  });

  test("',' and ';' may follow any field", () => {
    assert.deepEqual(parse("scalars { i32: 1, u32: 2; s: 'x', }; color: RED;"), {
      scalars: { i32: 1, u32: 2, s: "x" },
      color: "RED",
    });
  });

  test("map entries as key/value messages, repeated or as a list; keys in their string form", () => {
    const text = `maps {
      string_int { key: "a" value: 1 }
      string_int: { value: 2 key: "b" }
      string_int [ { key: "c" value: 3 }, { key: "d" } ]
      int_string { key: -5 value: "neg" }
      int64_msg { key: 9223372036854775807 value { s: "max" } }
      uint_enum < key: 4294967295 value: RED >
      bool_bytes { key: true value: "\\001" }
      bool_bytes { value: "" }
      sint_double { key: -9223372036854775808 value: -inf }
      fixed_bool { key: 0x10 value: t }
      string_msg { key: "empty" }
    }`;
    assert.deepEqual(parse(text), {
      maps: {
        string_int: { a: 1, b: 2, c: 3, d: 0 },
        int_string: { "-5": "neg" },
        int64_msg: { "9223372036854775807": { s: "max" } },
        uint_enum: { "4294967295": "RED" },
        bool_bytes: { true: "AQ==", false: "" },
        sint_double: { "-9223372036854775808": Number.NEGATIVE_INFINITY },
        fixed_bool: { "16": true },
        string_msg: { empty: {} },
      },
    });
  });

  test("a map key given twice keeps the last value, like protobuf", () => {
    assert.deepEqual(parse('maps { string_int { key: "k" value: 1 } string_int { key: "k" value: 2 } }'), {
      maps: { string_int: { k: 2 } },
    });
  });

  test("map key __proto__ becomes an own property", () => {
    const result = parse('maps { string_int { key: "__proto__" value: 7 } }');
    const map = (result["maps"] as Record<string, unknown>)["string_int"] as Record<string, unknown>;
    assert.deepEqual(Object.keys(map), ["__proto__"]);
    assert.equal(Object.getOwnPropertyDescriptor(map, "__proto__")?.value, 7);
    assert.equal(Object.getPrototypeOf(map), Object.prototype);
  });

  test("recursive messages, oneof members, proto3 optional", () => {
    assert.deepEqual(
      parse(
        "node { name: 'a' child { child { text: 'deep' } } children [ { number: 1 }, { scalars {} } ] maybe: 0 }",
      ),
      {
        node: {
          name: "a",
          child: { child: { text: "deep" } },
          children: [{ number: 1 }, { scalars: {} }],
          maybe: 0,
        },
      },
    );
  });

  test("adjacent string literals are concatenated (bytes joined before UTF-8 decoding)", () => {
    assert.deepEqual(parse(`scalars { s: "a" 'b' "c" }`), { scalars: { s: "abc" } });
    assert.deepEqual(parse(`scalars { s: "\\xc3" "\\xa9" }`), { scalars: { s: "é" } });
    assert.deepEqual(parse(`lists { s: ["a" "b", 'c'] }`), { lists: { s: ["ab", "c"] } });
  });

  test("whitespace and newlines anywhere, no whitespace needed between tokens", () => {
    assert.deepEqual(parse("scalars\n{\n\ni32\n:\n-\n3\n}"), { scalars: { i32: -3 } });
    assert.deepEqual(parse('scalars{s:"x"i32:1}lists{i32:[1,2]}'), {
      scalars: { s: "x", i32: 1 },
      lists: { i32: [1, 2] },
    });
  });
});
