// The parser against protoc itself: every fixture and every examples/models config is encoded by `protoc --encode=inference.ModelConfig`
// with proto/model_config.proto, decoded with protobufjs, and compared field by field with our parse result
// (reduced to what survives proto3 binary: no default-valued fields without presence, floats as float32).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { assertSystemTool, skipWithout } from "../../../../scripts/testing/system-tools.js";
import { modelConfigType } from "../proto-root.js";
import { TextFormatError } from "./errors.js";
import { parseTextFormat } from "./parser.js";
import { type MessageInfo, messageInfo, type ValueKind } from "./schema.js";

const withoutProtoc = skipWithout("protoc");

const protoDir = fileURLToPath(new URL("../../../../proto/", import.meta.url));
const fixturesDir = new URL("./fixtures/", import.meta.url);
const modelsDir = new URL("../../../../examples/models/", import.meta.url);
const corpus: Array<{ name: string; url: URL }> = [
  ...readdirSync(fixturesDir)
    .filter((name) => name.endsWith(".pbtxt"))
    .sort()
    .map((name) => ({ name: `fixtures/${name}`, url: new URL(name, fixturesDir) })),
  ...(existsSync(modelsDir) ? readdirSync(modelsDir) : [])
    .filter((model) => existsSync(new URL(`${model}/config.pbtxt`, modelsDir)))
    .sort()
    .map((model) => ({
      name: `examples/models/${model}/config.pbtxt`,
      url: new URL(`${model}/config.pbtxt`, modelsDir),
    })),
];

function isDefault(kind: ValueKind, value: unknown): boolean {
  if (kind.kind === "enum") return kind.type.values[value as string] === 0;
  return Object.is(value, 0) || value === "" || value === false || value === "0";
}

/** Our object form reduced to what a proto3 binary round trip keeps. */
function reduce(info: MessageInfo, message: Record<string, unknown>): Record<string, unknown> {
  const value = (kind: ValueKind, v: unknown): unknown => {
    if (kind.kind === "message") return reduce(kind.type, v as Record<string, unknown>);
    if (kind.kind === "scalar" && kind.type === "float") return Math.fround(v as number);
    return v;
  };
  const out: Record<string, unknown> = {};
  for (const field of info.fields) {
    const v = message[field.name];
    if (v === undefined) continue;
    if (field.cardinality === "repeated") {
      if ((v as unknown[]).length > 0) out[field.name] = (v as unknown[]).map((e) => value(field.value, e));
    } else if (field.cardinality === "map") {
      const entries = Object.entries(v as Record<string, unknown>);
      if (entries.length > 0)
        out[field.name] = Object.fromEntries(entries.map(([k, e]) => [k, value(field.value, e)]));
    } else if (field.hasPresence || !isDefault(field.value, v)) {
      out[field.name] = value(field.value, v);
    }
  }
  return out;
}

function protocParse(text: string): Record<string, unknown> {
  const result = spawnSync(
    "protoc",
    [`-I${protoDir}`, "--encode=inference.ModelConfig", "model_config.proto"],
    {
      input: text,
    },
  );
  assert.equal(result.status, 0, `protoc rejected the text: ${result.stderr.toString()}`);
  const type = modelConfigType();
  const decoded = type.toObject(type.decode(result.stdout), { longs: String, enums: String, bytes: String });
  // protobufjs already turns 64-bit map keys into decimal strings here.
  return decoded;
}

// Skipped without protoc, except where .ci/run asks for every system tool (scripts/system-tools.ts).
describe("parse result equals protoc --encode=inference.ModelConfig", { skip: withoutProtoc }, () => {
  before(() => assertSystemTool("protoc"));
  test("the corpus has the fixtures and the bundled models", () => {
    assert.ok(corpus.filter((entry) => entry.name.startsWith("fixtures/")).length >= 25);
    assert.ok(corpus.some((entry) => entry.name === "examples/models/simple/config.pbtxt"));
  });

  for (const { name, url } of corpus) {
    test(name, () => {
      const text = readFileSync(url, "utf8");
      const ours = parseTextFormat(modelConfigType(), text, { fileName: name });
      assert.deepStrictEqual(reduce(messageInfo(modelConfigType()), ours), protocParse(text));
    });
  }

  test("protoc rejects what we reject (a sample of malformed configs)", () => {
    const malformed = [
      "max_batchsize: 8",
      "input { dims [16] }",
      'name: "a" name: "b"',
      "dynamic_batching { } sequence_batching { }",
      "input { dims: [1, ] }",
      'name: ["a"]',
      "max_batch_size: 3000000000",
      "dynamic_batching { max_queue_delay_microseconds: -1 }",
      "input { data_type: TYPE_FP23 }",
      "input { dims: 08 }",
      "optimization { cuda { graph_spec { input { key: 1 } } } }",
      "sequence_batching { direct { minimum_slot_utilization: 0x10 } }",
      'name: "unterminated',
      "input {",
    ];
    for (const text of malformed) {
      assert.throws(() => parseTextFormat(modelConfigType(), text), TextFormatError, text);
      const result = spawnSync(
        "protoc",
        [`-I${protoDir}`, "--encode=inference.ModelConfig", "model_config.proto"],
        {
          input: text,
        },
      );
      assert.notEqual(result.status, 0, `protoc accepted ${text}`);
    }
  });
});
