/**
 * Fills the loader's cache before a test run: every TypeScript file transpiled and every worker body
 * bundled in this one process. Otherwise the first files of a run, their child servers and their worker
 * threads all start at once with an empty cache, and each of them transpiles what it loads.
 */
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { transpiled } from "./transform-cache.mjs";
import { bundledEntry } from "./worker-bundles.mjs";

/** `files`: absolute paths of .ts files; `workerEntries`: those a worker thread starts from. */
export async function warmCache(files, workerEntries) {
  await Promise.all(files.map((path) => transpiled(path, readFileSync(path, "utf8"))));
  for (const entry of workerEntries) await bundledEntry(pathToFileURL(entry).href);
}
