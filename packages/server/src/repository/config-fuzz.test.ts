// Seeded fuzz test of config.pbtxt (issue 14, "hostile input"): mutated configs from the codec's fixtures and
// the bundled models' configs go through the text format parser (@tbench/proto) and then the server's
// config rules in the loader's order (identity, unsupported features, version policy, normalization,
// scheduling and I/O checks, the model spec). Each must end as a TextFormatError/TextFormatValueError, a
// rule's message, a ServerError, or an accepted config that prints and parses back to itself; never a
// TypeError, RangeError (stack overflow) or other exception, never slow. In process: no server, no files.
// CI runs 20,000 cases; TBENCH_FUZZ_CASES=100000 the full count.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { parseModelConfig, printModelConfig, TextFormatError, TextFormatValueError } from "@tbench/proto";
import { silentLogger } from "../core/logger.js";
import { ServerError } from "../core/server-error.js";
import { createConfigFuzzer } from "../testing/fuzz-configs.js";
import { fuzzCases, mib, RSS_GROWTH_BOUND_MIB } from "../testing/fuzz-harness.js";
import { fillModelIdentity, normalizeModelConfig } from "./config-normalize.js";
import {
  unsupportedFeature,
  validateIoConfig,
  validateModelIdentity,
  validateSchedulingConfig,
} from "./config-validate.js";
import { modelSpecFromConfig } from "./model-spec.js";
import { selectVersions } from "./version-policy.js";

const SEED = Number(process.env["TBENCH_FUZZ_SEED"] ?? 20261204);
const CASES = fuzzCases(20_000);
/** One config that takes longer than this to parse and check is a hang in the making. */
const SLOW_MS = 2_000;

const root = new URL("../../../../", import.meta.url).pathname;
const fixtures = join(root, "packages/proto/src/pbtxt/fixtures");
const models = join(root, "examples/models");
const BASES = [
  ...readdirSync(fixtures)
    .filter((f) => f.endsWith(".pbtxt"))
    .map((f) => readFileSync(join(fixtures, f), "utf8")),
  ...readdirSync(models).flatMap((m) => {
    try {
      return [readFileSync(join(models, m, "config.pbtxt"), "utf8")];
    } catch {
      return [];
    }
  }),
];

type Outcome = "parse error" | "rule" | "server error" | "accepted";

/** Parses and checks one text as the loader does; throws what the code under test throws unexpectedly. */
function check(text: string): Outcome {
  let config: ReturnType<typeof parseModelConfig>;
  try {
    config = parseModelConfig(text, { fileName: "config.pbtxt" });
  } catch (error) {
    if (error instanceof TextFormatError || error instanceof TextFormatValueError) return "parse error";
    throw error;
  }
  try {
    const directory = typeof config.name === "string" && config.name !== "" ? config.name : "model";
    fillModelIdentity(config, directory, true);
    const problem = validateModelIdentity(config, directory) ?? unsupportedFeature(config);
    if (problem !== undefined) return "rule";
    selectVersions(directory, config.version_policy, [1, 2, 3], silentLogger);
    normalizeModelConfig(config);
    if ((validateSchedulingConfig(config) ?? validateIoConfig(config)) !== undefined) return "rule";
    modelSpecFromConfig(config);
  } catch (error) {
    if (error instanceof ServerError) return "server error";
    throw error;
  }
  // What the loader accepts, the codec prints and reads back unchanged (the load API's override path).
  const printed = printModelConfig(config);
  assert.deepEqual(parseModelConfig(printed), parseModelConfig(printModelConfig(parseModelConfig(printed))));
  return "accepted";
}

test(`fuzz: ${CASES} mutated config.pbtxt files (seed ${SEED}) are refused cleanly or accepted`, {
  timeout: 1_800_000,
}, (t) => {
  assert.ok(BASES.length > 20, `only ${BASES.length} base configs found`);
  for (const base of BASES) assert.notEqual(check(base), "parse error", base.slice(0, 200));
  const next = createConfigFuzzer(SEED, BASES);
  const outcomes: Record<string, number> = {};
  const problems: string[] = [];
  let slowest = 0;
  const rssBefore = process.memoryUsage.rss();
  const started = performance.now();
  for (let i = 0; i < CASES; i++) {
    const config = next();
    const t0 = performance.now();
    let outcome: string;
    try {
      outcome = check(config.text);
    } catch (error) {
      outcome = "unexpected";
      if (problems.length < 20)
        problems.push(`#${i} ${config.description}: ${(error as Error).name}: ${(error as Error).message}`);
    }
    const ms = performance.now() - t0;
    slowest = Math.max(slowest, ms);
    if (ms > SLOW_MS && problems.length < 20)
      problems.push(`#${i} ${config.description}: ${Math.round(ms)} ms`);
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  }
  const rssAfter = process.memoryUsage.rss();
  t.diagnostic(
    `config fuzz: ${JSON.stringify({
      cases: CASES,
      bases: BASES.length,
      outcomes,
      slowestMs: Math.round(slowest),
      seconds: Math.round((performance.now() - started) / 100) / 10,
      rssBeforeMiB: mib(rssBefore),
      rssAfterMiB: mib(rssAfter),
    })}`,
  );
  assert.deepEqual(problems, []);
  // The mix reaches every stage: the parser refuses, the rules refuse, and some configs pass.
  for (const outcome of ["parse error", "rule", "accepted"] as Outcome[])
    assert.ok((outcomes[outcome] ?? 0) > CASES / 100, JSON.stringify(outcomes));
  assert.ok(mib(rssAfter - rssBefore) < RSS_GROWTH_BOUND_MIB, `RSS grew ${mib(rssAfter - rssBefore)} MiB`);
  // Still right after all that: a valid config parses to what it says.
  assert.equal(parseModelConfig('name: "m" max_batch_size: 4').max_batch_size, 4);
});
