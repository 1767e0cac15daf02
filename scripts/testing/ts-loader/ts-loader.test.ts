/**
 * The test loader runs TypeScript as tsx does for this repository (NodeNext `.js` specifiers naming `.ts`
 * files, type-only syntax stripped, source-mapped stack traces), and its cache follows a file's content.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";

const REGISTER = new URL("./register.mjs", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "tbench-ts-loader-"));
const cache = join(scratch, "cache");
after(() => rmSync(scratch, { recursive: true, force: true }));

function run(entry: string) {
  const result = spawnSync(process.execPath, ["--import", REGISTER, entry], {
    encoding: "utf8",
    env: { ...process.env, TBENCH_TS_LOADER_CACHE: cache },
  });
  return { status: result.status, out: result.stdout.trim(), err: result.stderr };
}

test("runs TypeScript, resolves ./x.js to x.ts, and re-transpiles a file whose content changed", () => {
  writeFileSync(join(scratch, "package.json"), '{ "type": "module" }');
  writeFileSync(
    join(scratch, "shape.ts"),
    "export interface Shape { readonly side: number }\nexport const area = (s: Shape): number => s.side ** 2;\n",
  );
  const main = join(scratch, "main.ts");
  writeFileSync(
    main,
    'import { area, type Shape } from "./shape.js";\nconsole.log(area({ side: 3 } satisfies Shape));\n',
  );
  assert.deepEqual(run(main), { status: 0, out: "9", err: "" });
  assert.equal(readdirSync(cache).length, 2, "one cached file per source file");
  assert.equal(run(main).out, "9", "a second run reads the cache");
  assert.equal(readdirSync(cache).length, 2);

  writeFileSync(main, 'import { area } from "./shape.js";\nconsole.log(area({ side: 4 }) as number);\n');
  assert.equal(run(main).out, "16", "the changed file is transpiled again, not served stale");
  assert.equal(readdirSync(cache).length, 3);
});

test("a failure's stack names the TypeScript file and line", () => {
  const failing = join(scratch, "fails.ts");
  writeFileSync(failing, 'type Unused = string;\n\n\nthrow new Error("from line 4");\n');
  const { status, err } = run(failing);
  assert.equal(status, 1);
  assert.match(err, /fails\.ts:4:\d+/);
});

/** bundledEntry() of `entry`, asked in a fresh process that uses the scratch cache. */
function bundledEntryOf(entry: string): string {
  const api = new URL("./api.mjs", import.meta.url).href;
  const script = `const api = await import(${JSON.stringify(api)}); console.log(String(await api.bundledEntry(${JSON.stringify(`file://${entry}`)})));`;
  const result = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
    env: { ...process.env, TBENCH_TS_LOADER_CACHE: cache },
  });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout.trim();
}

test("a worker body bundles into one file that runs without hooks, rebuilt when a module it holds changes", () => {
  const helper = join(scratch, "helper.ts");
  const body = join(scratch, "body.ts");
  writeFileSync(helper, "export const twice = (n: number): number => 2 * n;\n");
  writeFileSync(body, 'import { twice } from "./helper.js";\nconsole.log(twice(21));\n');
  const first = bundledEntryOf(body);
  assert.match(first, /^file:.*\.mjs$/);
  const plain = spawnSync(process.execPath, [new URL(first).pathname], { encoding: "utf8" });
  assert.equal(plain.stdout.trim(), "42", "the bundle runs in plain node");

  writeFileSync(helper, "export const twice = (n: number): number => n + n + 1;\n");
  const second = bundledEntryOf(body);
  const rebuilt = spawnSync(process.execPath, [new URL(second).pathname], { encoding: "utf8" });
  assert.equal(rebuilt.stdout.trim(), "43", "a changed import is bundled again");
});

test("a body that reads import.meta or imports at run time is not bundled (it keeps the hooks)", () => {
  const located = join(scratch, "located.ts");
  writeFileSync(located, "console.log(import.meta.url);\n");
  assert.equal(bundledEntryOf(located), "undefined");
  const dynamic = join(scratch, "dynamic.ts");
  writeFileSync(dynamic, "const name: string = process.argv[2] ?? 'node:os';\nawait import(name);\n");
  assert.equal(bundledEntryOf(dynamic), "undefined");
});
