// What the loader's bundlers share: content hashes, reads that may miss, writes others never see half done,
// and the packages a bundle leaves to node_modules.
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export const sha1 = (text) => createHash("sha1").update(text).digest("hex");

export function readOrUndefined(path) {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** Written whole under another name, then renamed: a process reading at the same time sees all or nothing. */
export function writeAtomically(path, text) {
  mkdirSync(dirname(path), { recursive: true });
  const partial = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  writeFileSync(partial, text);
  renameSync(partial, path);
}

/** Every package installed under `root`/node_modules except this repository's own, bundled from source. */
export function installedPackages(root) {
  const names = [];
  for (const entry of readdirSync(join(root, "node_modules"))) {
    if (entry.startsWith(".") || entry === "@tbench") continue;
    if (entry.startsWith("@")) names.push(`${entry}/*`);
    else names.push(entry, `${entry}/*`);
  }
  return names;
}
