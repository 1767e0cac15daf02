/**
 * Test files bundled to run without hooks behave as they do under the hooks: each module keeps its own
 * `import.meta.url`, stack traces name the TypeScript file and line, a bundle follows the files it was built
 * from, and a file that does not bundle still runs (through a shim) without spoiling the others.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import { pathToFileURL } from "node:url";
import { testEntries } from "./test-bundles.mjs";

const root = mkdtempSync(join(tmpdir(), "tbench-test-bundles-"));
after(() => rmSync(root, { recursive: true, force: true }));
mkdirSync(join(root, "node_modules"));
mkdirSync(join(root, "lib"));
writeFileSync(join(root, "package.json"), '{ "type": "module" }');
writeFileSync(join(root, "lib/where.ts"), "export const where: string = import.meta.url;\n");
writeFileSync(
  join(root, "a.test.ts"),
  'import { where } from "./lib/where.js";\nconst own: string = import.meta.url;\nconsole.log(own, where);\n',
);
writeFileSync(join(root, "fails.test.ts"), 'type Unused = string;\n\n\nthrow new Error("from line 4");\n');
writeFileSync(join(root, "broken.test.ts"), "export const = ;\n");

/** Runs an entry as the test runner does: no hooks, source maps on. */
function run(entry: string) {
  const result = spawnSync(process.execPath, ["--enable-source-maps", entry], {
    encoding: "utf8",
    cwd: root,
  });
  return { status: result.status, out: result.stdout.trim(), err: result.stderr };
}

test("each bundled module sees its own file URL, and the bundle runs without hooks", async () => {
  const entry = (await testEntries(root, ["a.test.ts"])).get("a.test.ts")!;
  assert.ok(entry.endsWith("a.test.ts.mjs"), entry);
  const own = pathToFileURL(join(root, "a.test.ts")).href;
  const where = pathToFileURL(join(root, "lib/where.ts")).href;
  assert.deepEqual(run(entry), { status: 0, out: `${own} ${where}`, err: "" });
});

test("a bundle is reused while its files are unchanged and rebuilt when one changes", async () => {
  const entry = (await testEntries(root, ["a.test.ts"])).get("a.test.ts")!;
  // A rebuild replaces the whole bundle folder, so a file left in it survives only if nothing was rebuilt.
  const marker = join(dirname(entry), "left-by-the-test");
  writeFileSync(marker, "");
  await testEntries(root, ["a.test.ts"]);
  assert.ok(existsSync(marker), "unchanged files: the bundle is not rebuilt");
  writeFileSync(join(root, "lib/where.ts"), 'export const where: string = "changed";\n');
  await testEntries(root, ["a.test.ts"]);
  assert.match(run(entry).out, / changed$/, "a module the bundle holds changed: rebuilt");
});

test("a failure's stack names the TypeScript file and line", async () => {
  const entry = (await testEntries(root, ["fails.test.ts"])).get("fails.test.ts")!;
  const { status, err } = run(entry);
  assert.equal(status, 1);
  assert.match(err, /fails\.test\.ts:4:\d+/);
});

test("a file that does not bundle gets a shim that loads it under the hooks; the others are bundled", async () => {
  const entries = await testEntries(root, ["a.test.ts", "broken.test.ts"]);
  const good = entries.get("a.test.ts")!;
  const broken = entries.get("broken.test.ts")!;
  assert.ok(good.endsWith("a.test.ts.mjs"), good);
  assert.ok(broken.endsWith("broken.test.ts.shim.mjs"), broken);
  assert.equal(run(good).status, 0);
  const shimmed = run(broken);
  assert.notEqual(shimmed.status, 0);
  assert.match(shimmed.err, /broken\.test\.ts/, "the shim's failure names the file");
});
