/**
 * Keeps every path that a request or a config names inside the model repository. A model name comes from a
 * URL and a config override from a request body, so both are hostile until checked:
 * - a model name is one directory entry of the repository (no separator, no "..", no NUL, not hidden), and
 *   its directory, after symlinks, is a direct child of the repository's real path;
 * - a file a config names (model file, label files, warmup data) resolves, after symlinks, inside the
 *   model's own directory.
 * A refusal never says whether the outside path exists: the lexical check runs first, and a path whose real
 * location is outside is refused with the same words as one that names the outside directly.
 */
import type { Dirent } from "node:fs";
import { lstat, readdir, realpath, stat } from "node:fs/promises";
import { isAbsolute, join, normalize, sep } from "node:path";

/** True when `name` can only name one entry of a directory: no separators, "..", NUL, or leading dot. */
export function isPlainModelName(name: string): boolean {
  return (
    name.length > 0 &&
    name.length <= 255 &&
    !name.startsWith(".") &&
    !name.includes("/") &&
    !name.includes("\\") &&
    !name.includes("\0")
  );
}

/** True when `path` is `root` itself or lies under it (both absolute and normalized). */
function isInside(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** The real path of `path`, or undefined when it does not exist (or cannot be resolved). */
async function realPathOf(path: string): Promise<string | undefined> {
  return realpath(path).catch(() => undefined);
}

/**
 * The real directory of model `name` in the repository whose real path is `repositoryReal`, or undefined
 * when the name is not plain, names nothing, names no directory, or resolves (through a symlink) anywhere
 * but a direct child of the repository.
 */
export async function resolveModelDirectory(
  repositoryReal: string,
  name: string,
): Promise<string | undefined> {
  if (!isPlainModelName(name)) return undefined;
  const path = join(repositoryReal, name);
  const info = await lstat(path).catch(() => undefined);
  if (!info) return undefined;
  if (info.isDirectory()) return path;
  if (!info.isSymbolicLink()) return undefined;
  const real = await realPathOf(path);
  if (real === undefined || !isInside(repositoryReal, real) || real === repositoryReal) return undefined;
  const target = await stat(real).catch(() => undefined);
  return target?.isDirectory() ? real : undefined;
}

/** Whether a directory entry of the repository is a model directory that resolveModelDirectory accepts. */
async function isModelEntry(repositoryReal: string, entry: Dirent): Promise<boolean> {
  if (!isPlainModelName(entry.name)) return false;
  if (entry.isDirectory()) return true;
  if (!entry.isSymbolicLink()) return false;
  return (await resolveModelDirectory(repositoryReal, entry.name)) !== undefined;
}

/** The model names of the repository, sorted: plain names of directories that stay inside it. */
export async function listModelNames(repositoryReal: string): Promise<string[]> {
  const entries = await readdir(repositoryReal, { withFileTypes: true });
  const accepted = await Promise.all(entries.map((e) => isModelEntry(repositoryReal, e)));
  return entries
    .filter((_, i) => accepted[i])
    .map((e) => e.name)
    .sort();
}

/** A file a config names, refused because it would be read from outside its directory. */
export class ConfinementError extends Error {
  override readonly name = "ConfinementError";
}

/**
 * The path of `relative`, taken from `under` (a subdirectory of `root`, "" for `root` itself), or a
 * ConfinementError when `relative` is absolute or climbs out of `root`, or its real path (through symlinks)
 * lies outside `root`. `root` must be a real path. A path that does not exist is returned as is (the
 * caller reports it missing): only where it would be read from matters.
 * `what` names the file in the refusal, e.g. "label_filename 'x' of output 'y' of model 'm'".
 */
export async function confinedPath(
  root: string,
  under: string,
  relative: string,
  what: string,
): Promise<string> {
  const refuse = () =>
    new ConfinementError(`${what} must name a file inside the model's directory, got '${relative}'`);
  if (relative === "" || relative.includes("\0") || relative.includes("\\") || isAbsolute(relative)) {
    throw refuse();
  }
  const path = normalize(join(root, under, relative));
  if (!isInside(root, path) || path === root) throw refuse();
  const real = await realPathOf(path);
  if (real !== undefined && (!isInside(root, real) || real === root)) throw refuse();
  return real ?? path;
}
