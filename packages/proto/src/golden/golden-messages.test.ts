// Golden wire tests, judged by the real protoc: each fixture under golden/fixtures is protobuf text format
// written by hand against proto/grpc_service.proto. `protoc --encode` turns it into bytes that our
// generated code must decode to the exact values of golden-cases.ts; our encode of those values must print
// as the fixture, character for character, through `protoc --decode`, and be the very bytes protoc wrote.
// Edge cases that text cannot express (unpacked repeated fields, unknown fields, map entry order) are in
// wire-edge-cases.test.ts; ModelConfig's own round trip is in ../wire-codec.test.ts.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { skipWithout } from "../../../../scripts/testing/system-tools.js";
import { GOLDEN_CASES, JSON_FORM, plainBytes } from "./testing/golden-cases.js";
import { protocDecode, protocEncode } from "./testing/protoc-cli.js";

const withoutProtoc = skipWithout("protoc");

const fixturesDir = new URL("./fixtures/", import.meta.url);
const fixtureText = (name: string): string => readFileSync(new URL(name, fixturesDir), "utf8");
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");

describe("golden messages through protoc", { skip: withoutProtoc }, () => {
  test("every fixture file has a case and every case a fixture", () => {
    const files = readdirSync(fixturesDir).filter((name) => name.endsWith(".txtpb"));
    assert.deepEqual(files.sort(), GOLDEN_CASES.map((c) => c.fixture).sort());
  });

  for (const golden of GOLDEN_CASES) {
    describe(`${golden.fixture} (${golden.typeName})`, () => {
      test("protoc --encode's bytes decode to the expected values", () => {
        const bytes = protocEncode(golden.typeName, fixtureText(golden.fixture));
        const decoded = golden.type.decode(bytes);
        assert.deepStrictEqual(
          plainBytes(golden.type.toObject(decoded as never, JSON_FORM)),
          plainBytes(golden.expected),
        );
      });

      test("our encode of the values prints as the fixture through protoc --decode", () => {
        const ours = golden.type.encode(golden.type.fromObject(golden.expected) as never).finish();
        assert.equal(protocDecode(golden.typeName, ours), fixtureText(golden.fixture));
      });

      test("our encode is byte for byte what protoc --encode writes", () => {
        const ours = golden.type.encode(golden.type.fromObject(golden.expected) as never).finish();
        assert.equal(hex(ours), hex(protocEncode(golden.typeName, fixtureText(golden.fixture))));
      });
    });
  }
});
