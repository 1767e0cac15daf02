import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { bundledModels } from "./model-catalog.js";
import { BUNDLED_MODEL_REPOSITORY, writeModelRepository } from "./write-model-repository.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CLI = fileURLToPath(new URL("./generate-models.ts", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "tbench-models-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

function runCli(...args: string[]) {
  return spawnSync(process.execPath, ["--conditions=source", "--import", "tsx", CLI, ...args], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 60_000,
  });
}

/** sha256 of every file under `dir`, keyed by relative path; directories map to "dir". */
function digestTree(dir: string, root = dir, out = new Map<string, string>()): Map<string, string> {
  for (const entry of readdirSync(dir).sort()) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) {
      out.set(relative(root, path), "dir");
      digestTree(path, root, out);
    } else {
      out.set(relative(root, path), createHash("sha256").update(readFileSync(path)).digest("hex"));
    }
  }
  return out;
}

describe("generate-models", () => {
  it("writes a complete repository with --out, one line per model", () => {
    const out = join(tmp, "cli");
    const result = runCli("--out", out);
    assert.equal(result.status, 0, result.stderr);
    const lines = result.stdout.trim().split("\n");
    const models = bundledModels();
    assert.equal(lines.length, models.length + 1);
    models.forEach((model, i) => {
      assert.match(lines[i]!, new RegExp(`^${model.name}\\s`));
    });
    for (const model of models) {
      const config = readFileSync(join(out, model.name, "config.pbtxt"), "utf8");
      assert.equal(config, readFileSync(join(BUNDLED_MODEL_REPOSITORY, model.name, "config.pbtxt"), "utf8"));
      const version = readdirSync(join(out, model.name, "1"));
      assert.deepEqual(version, model.build === undefined ? [] : ["model.onnx"], model.name);
    }
  });

  it("gives byte-identical files on every build (CLI and in-process)", () => {
    const first = join(tmp, "cli");
    const second = join(tmp, "in-process");
    if (!existsSync(first)) assert.equal(runCli("--out", first).status, 0);
    writeModelRepository({ outDir: second });
    const a = digestTree(first);
    const b = digestTree(second);
    assert.ok(a.size > 40, `expected the whole repository, got ${a.size} entries`);
    assert.deepEqual(b, a);
    // heavy and heavy_nobatch are one model under two configs.
    assert.equal(a.get("heavy/1/model.onnx"), a.get("heavy_nobatch/1/model.onnx"));
  });

  it("leaves files that already have the right bytes untouched", () => {
    const out = join(tmp, "again");
    const first = writeModelRepository({ outDir: out });
    assert.ok(first.every((m) => m.status === "written"));
    const mtime = statSync(join(out, "mlp", "1", "model.onnx")).mtimeMs;
    const second = writeModelRepository({ outDir: out });
    assert.ok(second.every((m) => m.status === "unchanged"));
    assert.equal(statSync(join(out, "mlp", "1", "model.onnx")).mtimeMs, mtime);
  });

  it("fails with a message naming the missing config", () => {
    const empty = join(tmp, "no-configs");
    assert.throws(
      () => writeModelRepository({ outDir: join(tmp, "unused"), configDir: empty }),
      /model "simple": expected .*no-configs\/simple\/config\.pbtxt, which does not exist/,
    );
  });

  it("exits non-zero with usage on a bad option", () => {
    const result = runCli("--bogus");
    assert.equal(result.status, 1);
    assert.match(result.stderr, /^generate-models: .*--bogus/);
    assert.match(result.stderr, /usage: generate-models \[--out DIR\]/);
  });
});
