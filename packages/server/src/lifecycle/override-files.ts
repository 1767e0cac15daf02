/**
 * The repository load API's file override: `file:<path>` parameters carry a model's files (e.g.
 * `file:1/model.onnx`), which Triton writes into a temporary model directory and loads from there instead
 * of the repository. Each path must stay inside that directory (Triton's check, after normalization), and
 * the directory lives as long as the model loaded from it.
 */
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, normalize, sep } from "node:path";
import { ServerError } from "../core/server-error.js";

/** A temporary model directory holding override files; `release()` deletes it (idempotent). */
export interface OverrideDirectory {
  readonly directory: string;
  release(): Promise<void>;
}

/**
 * Writes `files` (path inside the model directory -> content) into a new temporary directory for model
 * `name`. A path that would leave the directory is refused with Triton's INVALID_ARG before anything is
 * written, and nothing is left behind on failure.
 */
export async function writeOverrideDirectory(
  name: string,
  files: Readonly<Record<string, Uint8Array>>,
): Promise<OverrideDirectory> {
  const root = await realpath(await mkdtemp(join(tmpdir(), "tbench-override-")));
  const directory = join(root, name);
  const release = () => rm(root, { recursive: true, force: true });
  try {
    const targets: [string, Uint8Array][] = [];
    for (const [path, content] of Object.entries(files)) {
      const target = normalize(join(directory, path));
      const inside = target.startsWith(directory + sep);
      if (!inside || isAbsolute(path) || path.includes("\0")) {
        throw new ServerError(
          "INVALID_ARG",
          `Invalid file parameter 'file:${path}' with normalized path '${target}' must stay within model directory.`,
        );
      }
      targets.push([target, content]);
    }
    await mkdir(directory, { recursive: true });
    for (const [target, content] of targets) {
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, content);
    }
    return { directory, release };
  } catch (error) {
    await release();
    if (error instanceof ServerError) throw error;
    throw new ServerError(
      "INTERNAL",
      `failed to write the override files of model '${name}': ${String(error)}`,
    );
  }
}
