import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { findDataSpans, findMemberSpan, forEachDataElement, skipValue } from "./json-data-spans.js";

function dataTexts(text: string, key: string): (string | undefined)[] {
  JSON.parse(text); // the walker expects valid JSON, as the decoder hands it over
  return findDataSpans(text, key).map((span) => span && text.slice(span.start, span.end));
}

describe("findDataSpans: the source text JSON.parse's values came from", () => {
  test("each element's data, or nothing where it has none", () => {
    const text =
      '{"inputs":[{"name":"a","data":[1,2]},{"name":"b","parameters":{"binary_data_size":8}},{"data":[[3],[4]]}]}';
    assert.deepEqual(dataTexts(text, "inputs"), ["[1,2]", undefined, "[[3],[4]]"]);
  });

  test("a repeated key counts by its last occurrence, escaped or not, as in JSON.parse", () => {
    const text =
      '{"inputs":[{"data":[0]}], "outputs":[], "in\\u0070uts" : [ {"data":[1], "d\\u0061ta" : [ 2 , 3 ] } ] }';
    assert.deepEqual(JSON.parse(text).inputs, [{ data: [2, 3] }]);
    assert.deepEqual(dataTexts(text, "inputs"), ["[ 2 , 3 ]"]);
  });

  test("strings with quotes, backslashes and brackets, and nested objects, are skipped whole", () => {
    const text =
      '{"id":"x\\\\\\"]}[{","parameters":{"data":[9],"s":"\\\\"},"inputs":[{"name":"]\\"[","data":[{"k":"]"},"[",7]}]}';
    assert.deepEqual(dataTexts(text, "inputs"), ['[{"k":"]"},"[",7]']);
  });

  test("no such member: no spans", () => {
    assert.deepEqual(dataTexts('{"outputs":[{"data":[1]}]}', "inputs"), []);
    assert.deepEqual(dataTexts("[]", "inputs"), []);
  });

  test("skipValue ends each kind of value where JSON.parse would", () => {
    const text = '[12.5e-3, "a\\"b", {"x":[1,{"y":"}"}]}, true, null]';
    const ends: string[] = [];
    let i = 1;
    while (text[i] !== "]" || i < text.length - 1) {
      while (text[i] === " " || text[i] === ",") i++;
      const end = skipValue(text, i);
      ends.push(text.slice(i, end));
      i = end;
      if (text[i] === "]") break;
    }
    assert.deepEqual(ends, ["12.5e-3", '"a\\"b"', '{"x":[1,{"y":"}"}]}', "true", "null"]);
  });
});

describe("forEachDataElement: each leaf element's text, row-major", () => {
  test("flattens nested arrays and skips separators and whitespace", () => {
    const text = '{"data": [[1, -22 ,9223372036854775807],[ 3e2,"x" ]]}';
    const span = findDataSpans(`{"inputs":[${text}]}`, "inputs")[0];
    assert.ok(span !== undefined);
    const whole = `{"inputs":[${text}]}`;
    const seen: string[] = [];
    forEachDataElement(whole, span, (start, end) => seen.push(whole.slice(start, end)));
    assert.deepEqual(seen, ["1", "-22", "9223372036854775807", "3e2", '"x"']);
  });
});

describe("findMemberSpan: a nested member's source text", () => {
  test("the last occurrence of each key on the path, as JSON.parse keeps it; none when absent", () => {
    const text =
      '{"parameters":{"sequence_id":1,"x":{"y":2}},"parameters":{"sequence_id":18446744073709551615}}';
    const span = findMemberSpan(text, ["parameters", "sequence_id"]);
    assert.equal(span && text.slice(span.start, span.end), "18446744073709551615");
    assert.equal(findMemberSpan(text, ["parameters", "x"]), undefined);
    assert.equal(findMemberSpan('{"a":[1,{"b":2}]}', ["a", "b"]), undefined);
  });
});
