import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import protobuf from "protobufjs";
import { TextFormatError } from "./errors.js";
import { parseTextFormat } from "./parser.js";
import { allTypesType } from "./testing/all-types-schema.js";

const modelConfig = protobuf
  .parse(readFileSync(new URL("../../../../proto/model_config.proto", import.meta.url), "utf8"), {
    keepCase: true,
  })
  .root.lookupType("inference.ModelConfig");

function parseError(
  text: string,
  type: protobuf.Type = modelConfig,
  fileName: string | null = "config.pbtxt",
): TextFormatError {
  try {
    parseTextFormat(type, text, fileName === null ? {} : { fileName });
  } catch (error) {
    assert.ok(error instanceof TextFormatError, String(error));
    return error;
  }
  assert.fail(`expected a parse error for ${JSON.stringify(text)}`);
}

const message = (text: string, type?: protobuf.Type): string => parseError(text, type).message;

describe("parse errors name line, column, what was found and what was expected", () => {
  test("TextFormatError carries line, column, fileName, reason and code", () => {
    const error = parseError('name: "x"\nmax_batch_size: 8\ninput {\n  dims [16]\n}');
    assert.equal(error.message, `config.pbtxt:4:8: expected ':' after field name "dims", found '['`);
    assert.equal(error.line, 4);
    assert.equal(error.column, 8);
    assert.equal(error.fileName, "config.pbtxt");
    assert.equal(error.reason, `expected ':' after field name "dims", found '['`);
    assert.equal(error.code, "TEXT_FORMAT_PARSE_ERROR");
    assert.equal(error.name, "TextFormatError");
    assert.ok(error instanceof Error);
  });

  test("without a file name the message says <input>", () => {
    assert.equal(
      parseError("bogus: 1", modelConfig, null).message,
      '<input>:1:1: unknown field "bogus" in message inference.ModelConfig',
    );
  });

  test("unknown fields name the message type, with a did-you-mean hint when close", () => {
    assert.equal(
      message('name: "m"\nmax_batchsize: 8'),
      'config.pbtxt:2:1: unknown field "max_batchsize" in message inference.ModelConfig (did you mean "max_batch_size"?)',
    );
    assert.equal(
      message("maxBatchSize: 8"),
      'config.pbtxt:1:1: unknown field "maxBatchSize" in message inference.ModelConfig (did you mean "max_batch_size"?)',
    );
    assert.equal(
      message('input { nme: "x" }'),
      'config.pbtxt:1:9: unknown field "nme" in message inference.ModelInput (did you mean "name"?)',
    );
    assert.equal(
      message("dynamic_batching { max_queue_delay_microsecond: 5 }"),
      'config.pbtxt:1:20: unknown field "max_queue_delay_microsecond" in message inference.ModelDynamicBatching (did you mean "max_queue_delay_microseconds"?)',
    );
    assert.equal(
      message("tensor_rt: 1"),
      'config.pbtxt:1:1: unknown field "tensor_rt" in message inference.ModelConfig',
    );
    assert.equal(
      message('parameters { key: "a" val { } }'),
      'config.pbtxt:1:23: unknown field "val" in message inference.ModelConfig.ParametersEntry (did you mean "value"?)',
    );
  });

  test("missing or wrong delimiters after a field name", () => {
    assert.equal(
      message("dynamic_batching 5"),
      `config.pbtxt:1:18: expected ':', '{' or '<' after field name "dynamic_batching", found number 5`,
    );
    assert.equal(
      message("dynamic_batching: 5"),
      `config.pbtxt:1:19: expected '{' or '<' for message field "dynamic_batching", found number 5`,
    );
    assert.equal(
      message('input: "x"'),
      `config.pbtxt:1:8: expected '{' or '<' or '[' for message field "input", found string "x"`,
    );
    assert.equal(
      message('name "x"'),
      `config.pbtxt:1:6: expected ':' after field name "name", found string "x"`,
    );
    assert.equal(
      message("max_batch_size {"),
      `config.pbtxt:1:16: expected ':' after field name "max_batch_size", found '{'`,
    );
  });

  test("lists: only on repeated fields, comma separated, no trailing comma, messages in braces", () => {
    assert.equal(
      message('name: ["a"]'),
      `config.pbtxt:1:7: field "name" is not repeated, so it cannot take a list '[...]'`,
    );
    assert.equal(
      message("dynamic_batching [ {} ]"),
      `config.pbtxt:1:18: field "dynamic_batching" is not repeated, so it cannot take a list '[...]'`,
    );
    assert.equal(
      message("input { dims: [1 2] }"),
      `config.pbtxt:1:18: expected ',' or ']' in the list of field "dims", found number 2`,
    );
    assert.equal(
      message("input { dims: [1, ] }"),
      `config.pbtxt:1:19: expected an integer for int64 field "dims", found ']'`,
    );
    assert.equal(
      message('input [ { name: "a" } { name: "b" } ]'),
      `config.pbtxt:1:23: expected ',' or ']' in the list of field "input", found '{'`,
    );
    assert.equal(
      message("input [ 5 ]"),
      `config.pbtxt:1:9: expected '{' or '<' to start a value of field "input", found number 5`,
    );
    assert.equal(
      message("input { dims: [1, 2"),
      `config.pbtxt:1:20: expected ',' or ']' in the list of field "dims", found end of input`,
    );
  });

  test("unbalanced messages", () => {
    assert.equal(
      message('name: "x"\ninput {\n  name: "a"\n'),
      "config.pbtxt:4:1: expected '}' to close the inference.ModelInput message opened at 2:7, found end of input",
    );
    assert.equal(
      message('input < name: "a" }'),
      "config.pbtxt:1:19: expected a field name or '>' in message inference.ModelInput, found '}'",
    );
    assert.equal(
      message('name: "x" }'),
      "config.pbtxt:1:11: expected a field name in message inference.ModelConfig, found '}'",
    );
    assert.equal(
      message('"name": "x"'),
      `config.pbtxt:1:1: expected a field name in message inference.ModelConfig, found string "name"`,
    );
    assert.equal(
      message('name: "x" @'),
      "config.pbtxt:1:11: expected a field name in message inference.ModelConfig, found '@'",
    );
    assert.equal(
      message(": 5"),
      "config.pbtxt:1:1: expected a field name in message inference.ModelConfig, found ':'",
    );
  });

  test("a non-repeated field given twice, and two members of a oneof, are errors", () => {
    assert.equal(
      message('name: "a"\nname: "b"'),
      `config.pbtxt:2:1: non-repeated field "name" is specified more than once`,
    );
    assert.equal(
      message("input { reshape { } reshape { } }"),
      `config.pbtxt:1:21: non-repeated field "reshape" is specified more than once`,
    );
    assert.equal(
      message("dynamic_batching { }\nsequence_batching { }"),
      `config.pbtxt:2:1: field "sequence_batching" is specified along with field "dynamic_batching", another member of oneof "scheduling_choice"`,
    );
    assert.equal(
      message("version_policy { latest { } all { } }"),
      `config.pbtxt:1:29: field "all" is specified along with field "latest", another member of oneof "policy_choice"`,
    );
  });

  test("extensions and Any are not supported", () => {
    const expected =
      "extension and Any fields ([name] or [type.googleapis.com/...]) are not supported in this text format codec";
    assert.equal(message("[inference.my_extension]: 5"), `config.pbtxt:1:1: ${expected}`);
    assert.equal(
      message("input { [type.googleapis.com/inference.ModelInput] { } }"),
      `config.pbtxt:1:9: ${expected}`,
    );
  });

  test("value errors inside nested messages point at the value", () => {
    assert.equal(
      message("input {\n  data_type: TYPE_FP23\n}"),
      'config.pbtxt:2:14: unknown value "TYPE_FP23" for enum inference.DataType in field "data_type" (did you mean TYPE_FP32?); allowed: TYPE_INVALID, TYPE_BOOL, TYPE_UINT8, TYPE_UINT16, TYPE_UINT32, TYPE_UINT64, TYPE_INT8, TYPE_INT16, TYPE_INT32, TYPE_INT64, TYPE_FP16, TYPE_FP32, TYPE_FP64, TYPE_STRING, TYPE_BF16',
    );
    assert.equal(
      message("max_batch_size: 3000000000"),
      'config.pbtxt:1:17: value 3000000000 is out of range for int32 field "max_batch_size" (-2147483648 to 2147483647)',
    );
    assert.equal(
      message("dynamic_batching { max_queue_delay_microseconds: -100 }"),
      'config.pbtxt:1:50: value -100 is out of range for uint64 field "max_queue_delay_microseconds" (0 to 18446744073709551615)',
    );
    assert.equal(
      message("name: simple"),
      'config.pbtxt:1:7: expected a quoted string for string field "name", found identifier "simple"',
    );
    assert.equal(
      message('parameters { key: 5 value { string_value: "x" } }'),
      'config.pbtxt:1:19: expected a quoted string for string field "key", found number 5',
    );
    assert.equal(
      message('name: "tab\\q"'),
      String.raw`config.pbtxt:1:11: invalid escape sequence \q (allowed: \n \t \r \\ \' \" \a \b \f \v \? \NNN \xHH \uXXXX \UXXXXXXXX)`,
    );
  });

  test("nesting deeper than 100 messages is rejected", () => {
    const node = allTypesType("Node");
    assert.doesNotThrow(() => parseTextFormat(node, `${"child { ".repeat(100)}${"} ".repeat(100)}`));
    assert.equal(
      parseError(`${"child { ".repeat(101)}${"} ".repeat(101)}`, node).message,
      "config.pbtxt:1:807: messages are nested more than 100 deep",
    );
  });
});
