/**
 * The import check on small trees of its own: it passes a tree that keeps the layer rules, and fails,
 * naming the import and the rule, on a planted forbidden import and on a cycle. Tests and testing/ helpers
 * are exempt from the layer rules.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import { sourceNodeArgs } from "./testing/source-node.js";

const SCRIPT = new URL("./check-import-cycles.ts", import.meta.url).pathname;
const roots: string[] = [];
after(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** A repository root holding `files` (paths under it, and their text); runs the check on it. */
function check(files: Record<string, string>): { status: number | null; stderr: string } {
  const root = mkdtempSync(join(tmpdir(), "tbench-layers-"));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const run = spawnSync(process.execPath, [...sourceNodeArgs(SCRIPT), root], { encoding: "utf8" });
  return { status: run.status, stderr: run.stderr };
}

const SERVER = "packages/server/src";
const layered = {
  [`${SERVER}/core/types.ts`]: "export const core = 1;\n",
  [`${SERVER}/instances/pool.ts`]: 'import { core } from "../core/types.js";\nexport const pool = core;\n',
  [`${SERVER}/http/front-end.ts`]: 'import { core } from "../core/types.js";\nexport const front = core;\n',
};

test("a tree that keeps the layer rules passes", () => {
  const { status, stderr } = check(layered);
  assert.equal(status, 0, stderr);
});

test("a front end that imports a model instance's module fails, naming the import and the rule", () => {
  const { status, stderr } = check({
    ...layered,
    [`${SERVER}/http/front-end.ts`]:
      'import { pool } from "../instances/pool.js";\nexport const front = pool;\n',
  });
  assert.equal(status, 1);
  assert.match(
    stderr,
    /layer rule broken: server\/src\/http\/front-end\.ts -> server\/src\/instances\/pool\.ts \(front ends .*never touch models or workers\)/,
  );
});

test("core importing anything of the server above it fails", () => {
  const { status, stderr } = check({
    ...layered,
    [`${SERVER}/core/types.ts`]:
      'import { pool } from "../instances/pool.js";\nexport const core = 1;\nexport { pool };\n',
  });
  assert.equal(status, 1);
  assert.match(stderr, /layer rule broken: server\/src\/core\/types\.ts -> .*ground floor/);
});

test("a test or a testing/ helper may import across the layers", () => {
  const { status, stderr } = check({
    ...layered,
    [`${SERVER}/http/front-end.test.ts`]: 'import { pool } from "../instances/pool.js";\nvoid pool;\n',
    [`${SERVER}/testing/fake-pool.ts`]: 'export { pool } from "../instances/pool.js";\n',
  });
  assert.equal(status, 0, stderr);
});

test("an import cycle fails", () => {
  const { status, stderr } = check({
    ...layered,
    [`${SERVER}/core/a.ts`]: 'import { b } from "./b.js";\nexport const a = () => b;\n',
    [`${SERVER}/core/b.ts`]: 'import { a } from "./a.js";\nexport const b = () => a;\n',
  });
  assert.equal(status, 1);
  assert.match(stderr, /import cycle: .*core\/a\.ts -> .*core\/b\.ts -> .*core\/a\.ts/);
});

test("in tbench, a floor that imports one above it fails: tune/ importing cli/", () => {
  const TBENCH = "packages/tbench/src";
  const { status, stderr } = check({
    [`${TBENCH}/run/engine.ts`]: "export const engine = 1;\n",
    [`${TBENCH}/cli/usage.ts`]: 'import { engine } from "../run/engine.js";\nexport const usage = engine;\n',
    [`${TBENCH}/tune/tune.ts`]: 'import { usage } from "../cli/usage.js";\nexport const tune = usage;\n',
  });
  assert.equal(status, 1);
  assert.match(
    stderr,
    /layer rule broken: tbench\/src\/tune\/tune\.ts -> tbench\/src\/cli\/usage\.ts \(tune\/ drives/,
  );
  assert.doesNotMatch(stderr, /cli\/usage\.ts -> /, "cli/ may import run/");
});
