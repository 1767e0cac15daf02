/**
 * Writes the bundled models into a Triton-style model repository: `<outDir>/<name>/1/model.onnx` for each
 * model (an empty `1/` for the ensemble), plus each model's committed `config.pbtxt` (and any other committed
 * file it lists, such as a tokenizer) when writing anywhere other than `examples/models` itself. Files whose
 * bytes are already right are left untouched, so a server polling the repository sees no change.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type BundledModel, bundledModels, committedFiles } from "./model-catalog.js";

/** `examples/models`: where the committed configs live and where `npm run models` writes. */
export const BUNDLED_MODEL_REPOSITORY = fileURLToPath(new URL("../models", import.meta.url));

/** Options of {@link writeModelRepository}. */
export interface WriteModelRepositoryOptions {
  /** The repository directory to write; `examples/models` by default. */
  readonly outDir?: string;
  /** Where the `config.pbtxt` files (and other committed files) come from; `examples/models` by default. */
  readonly configDir?: string;
  /** Which models to write; all of {@link bundledModels} by default. */
  readonly models?: readonly BundledModel[];
}

/** What happened to one model. */
export interface WrittenModel {
  readonly name: string;
  /** The model file, or the version directory for an ensemble. */
  readonly path: string;
  /** Size of the model file in bytes; 0 for an ensemble. */
  readonly sizeBytes: number;
  /** `written`: the file was created or changed; `unchanged`: it already had these bytes. */
  readonly status: "written" | "unchanged";
}

/**
 * Writes every model; returns one entry per model in catalog order.
 * @throws Error naming the model and the missing file when a `config.pbtxt` (or other committed file) is absent.
 */
export function writeModelRepository(options: WriteModelRepositoryOptions = {}): WrittenModel[] {
  const outDir = resolve(options.outDir ?? BUNDLED_MODEL_REPOSITORY);
  const configDir = resolve(options.configDir ?? BUNDLED_MODEL_REPOSITORY);
  const built = new Map<() => Uint8Array, Uint8Array>();
  const results: WrittenModel[] = [];
  for (const model of options.models ?? bundledModels()) {
    const files = committedFiles(model);
    for (const file of files) {
      const path = join(configDir, model.name, file);
      if (!existsSync(path)) throw new Error(`model "${model.name}": expected ${path}, which does not exist`);
    }
    const versionDir = join(outDir, model.name, "1");
    const existed = existsSync(versionDir);
    mkdirSync(versionDir, { recursive: true });
    if (outDir !== configDir) {
      for (const file of files)
        copyFileSync(join(configDir, model.name, file), join(outDir, model.name, file));
    }
    if (model.build === undefined) {
      results.push({
        name: model.name,
        path: versionDir,
        sizeBytes: 0,
        status: existed ? "unchanged" : "written",
      });
      continue;
    }
    let bytes = built.get(model.build);
    if (bytes === undefined) {
      bytes = model.build();
      built.set(model.build, bytes);
    }
    const file = join(versionDir, "model.onnx");
    const same = existsSync(file) && Buffer.compare(readFileSync(file), bytes) === 0;
    if (!same) writeFileSync(file, bytes);
    results.push({
      name: model.name,
      path: file,
      sizeBytes: bytes.length,
      status: same ? "unchanged" : "written",
    });
  }
  return results;
}
