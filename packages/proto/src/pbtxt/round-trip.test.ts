import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { modelConfigType } from "../proto-root.js";
import { parseTextFormat } from "./parser.js";
import { printTextFormat } from "./printer.js";
import { allTypesType } from "./testing/all-types-schema.js";
import { createRandomMessageGenerator } from "./testing/random-message.js";

const fixturesDir = new URL("./fixtures/", import.meta.url);
const fixtures = readdirSync(fixturesDir)
  .filter((name) => name.endsWith(".pbtxt"))
  .sort();

describe("print then parse gives back a deep-equal object", () => {
  test("the fixture corpus holds at least 25 configs", () => {
    assert.ok(fixtures.length >= 25, `only ${fixtures.length} fixtures`);
  });

  for (const name of fixtures) {
    test(`fixture ${name}`, () => {
      const type = modelConfigType();
      const parsed = parseTextFormat(type, readFileSync(new URL(name, fixturesDir), "utf8"), {
        fileName: name,
      });
      const printed = printTextFormat(type, parsed);
      assert.deepStrictEqual(parseTextFormat(type, printed), parsed);
      // Printing is canonical: the printed form prints to itself.
      assert.equal(printTextFormat(type, parseTextFormat(type, printed)), printed);
    });
  }

  test("500 seeded random ModelConfigs", () => {
    const type = modelConfigType();
    const next = createRandomMessageGenerator(type, { seed: 20240611, maxDepth: 5, fieldProbability: 0.45 });
    for (let i = 0; i < 500; i++) {
      const config = next();
      const text = printTextFormat(type, config);
      assert.deepStrictEqual(parseTextFormat(type, text), config, `random config #${i}:\n${text}`);
    }
  });

  test("300 seeded random messages over every scalar, map key and nesting kind", () => {
    const type = allTypesType("All");
    const next = createRandomMessageGenerator(type, { seed: 7, maxDepth: 4 });
    for (let i = 0; i < 300; i++) {
      const message = next();
      const text = printTextFormat(type, message);
      assert.deepStrictEqual(parseTextFormat(type, text), message, `random message #${i}:\n${text}`);
    }
  });

  test("the random generator does reach the edge values (so the round trips above test them)", () => {
    const next = createRandomMessageGenerator(allTypesType("Scalars"), { seed: 7, fieldProbability: 1 });
    const seen = new Set<unknown>();
    for (let i = 0; i < 300; i++) {
      const message = next();
      seen.add(message["u64"]).add(message["i64"]).add(message["d"]);
      if (Object.is(message["f"], -0)) seen.add("-0");
      if (typeof message["s"] === "string" && /["\\\n\0😀]/u.test(message["s"])) seen.add("escaped string");
    }
    for (const edge of [
      "18446744073709551615",
      "-9223372036854775808",
      Number.NaN,
      Number.NEGATIVE_INFINITY,
      "-0",
      "escaped string",
    ]) {
      assert.ok(seen.has(edge), `edge value ${String(edge)} never generated`);
    }
  });
});
