/**
 * Test helpers (no tests here): temporary model repositories built from the bundled models' files, and a
 * logger that records lines. Models are generated with the bundled generator when `npm run models` has
 * not run yet.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BUNDLED_MODEL_REPOSITORY, writeModelRepository } from "@tbench/model-builder";
import type { Logger } from "../core/logger.js";

/** The path of a bundled model's ONNX file, generating the bundled models when absent. */
export function bundledModelFile(name: string): string {
  const path = join(BUNDLED_MODEL_REPOSITORY, name, "1", "model.onnx");
  if (!existsSync(path)) writeModelRepository();
  return path;
}

/** The committed config.pbtxt text of a bundled model. */
export function bundledConfig(name: string): string {
  return readFileSync(join(BUNDLED_MODEL_REPOSITORY, name, "config.pbtxt"), "utf8");
}

/** One model of a temporary repository. */
export interface FixtureModel {
  /** The bundled model whose ONNX file each version gets (default: the model's own name). */
  readonly from?: string;
  /** config.pbtxt text; undefined: none (auto-complete); "bundled": the bundled model's config. */
  readonly config?: string;
  /** Version directories with the model file (default [1]). */
  readonly versions?: readonly number[];
  /** Extra directories (created empty) and files (name -> text) inside the model directory. */
  readonly extraDirs?: readonly string[];
  readonly extraFiles?: Readonly<Record<string, string>>;
}

/** A temporary repository; `remove()` deletes it. */
export interface FixtureRepository {
  readonly dir: string;
  remove(): void;
}

/** Writes a temporary model repository. */
export function createFixtureRepository(models: Readonly<Record<string, FixtureModel>>): FixtureRepository {
  const dir = mkdtempSync(join(tmpdir(), "tbench-repo-"));
  for (const [name, model] of Object.entries(models)) {
    const modelDir = join(dir, name);
    mkdirSync(modelDir, { recursive: true });
    const source = bundledModelFile(model.from ?? name);
    for (const version of model.versions ?? [1]) {
      mkdirSync(join(modelDir, String(version)), { recursive: true });
      copyFileSync(source, join(modelDir, String(version), "model.onnx"));
    }
    if (model.config !== undefined) {
      const text = model.config === "bundled" ? bundledConfig(model.from ?? name) : model.config;
      writeFileSync(join(modelDir, "config.pbtxt"), text);
    }
    for (const extra of model.extraDirs ?? []) mkdirSync(join(modelDir, extra), { recursive: true });
    for (const [file, text] of Object.entries(model.extraFiles ?? {}))
      writeFileSync(join(modelDir, file), text);
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A Logger that keeps every line as `LEVEL message`. */
export function createRecordingLogger(): Logger & { readonly lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info: (m) => lines.push(`I ${m}`),
    warn: (m) => lines.push(`W ${m}`),
    error: (m) => lines.push(`E ${m}`),
    verbose: (m) => lines.push(`V ${m}`),
  };
}

/** This directory (for tests that need paths next to the code). */
export const HERE = fileURLToPath(new URL(".", import.meta.url));
