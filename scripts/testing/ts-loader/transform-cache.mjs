// The transpiled files on disk, keyed by a TypeScript file's path and content: shared by the hooks, which
// fill it as modules load, and by warmCache(), which fills it before a run.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CACHE_DIR, TRANSFORM_OPTIONS, TRANSFORM_VERSION } from "./transform-options.mjs";

let esbuild;

function cacheFile(path, source) {
  const key = createHash("sha1").update(`${TRANSFORM_VERSION}\0${path}\0`).update(source).digest("hex");
  return join(CACHE_DIR, `${key}.js`);
}

/** The JavaScript of the TypeScript file at `path` whose text is `source`, transpiled once per content. */
export async function transpiled(path, source) {
  const cached = cacheFile(path, source);
  try {
    return readFileSync(cached, "utf8");
  } catch {
    esbuild ??= await import("esbuild");
    const { code } = await esbuild.transform(source, {
      ...TRANSFORM_OPTIONS,
      loader: "ts",
      sourcefile: path,
    });
    mkdirSync(CACHE_DIR, { recursive: true });
    // Written whole under another name, then renamed: a process reading at the same time sees all or nothing.
    const partial = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    writeFileSync(partial, code);
    renameSync(partial, cached);
    return code;
  }
}
