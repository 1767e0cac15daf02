/**
 * A worker thread's body as one JavaScript file, so that the thread runs it without loader hooks: under
 * Node 20 a thread that registers hooks starts a hooks thread of its own, which about doubles what a model
 * instance's thread costs to start (measured: 410 vs 213 CPU-ms per load/unload of `simple`). The bundle
 * holds this repository's modules (workspace packages from source) and imports everything under
 * node_modules as usual. A body whose code reads `import.meta` or imports at run time keeps the hooks: its
 * file location or its imports would differ from the unbundled run.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { installedPackages, readOrUndefined, sha1, writeAtomically } from "./cache-files.mjs";
import { CACHE_DIR, TRANSFORM_OPTIONS, TRANSFORM_VERSION } from "./transform-options.mjs";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const BUNDLE_DIR = join(CACHE_DIR, "bundles");

/** The bundle of the TypeScript file at `entryUrl` as a file URL, or undefined where it must keep the hooks. */
export async function bundledEntry(entryUrl) {
  const entry = fileURLToPath(entryUrl);
  const key = sha1(`${TRANSFORM_VERSION}\0${entry}`);
  const manifestPath = join(BUNDLE_DIR, `${key}.json`);
  const bundlePath = join(BUNDLE_DIR, `${key}.mjs`);
  const manifest = readOrUndefined(manifestPath);
  if (manifest !== undefined) {
    const { inputs, bundled } = JSON.parse(manifest);
    const current = Object.entries(inputs).every(
      ([path, hash]) => sha1(readOrUndefined(path) ?? "") === hash,
    );
    if (current) return bundled ? ready(bundlePath) : undefined;
  }
  const esbuild = await import("esbuild");
  const result = await esbuild.build({
    ...TRANSFORM_OPTIONS,
    entryPoints: [entry],
    absWorkingDir: ROOT,
    bundle: true,
    platform: "node",
    conditions: ["source"],
    external: installedPackages(ROOT),
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  const code = result.outputFiles[0].text;
  const bundled = !code.includes("import.meta") && !/\bimport\(/.test(code);
  const inputs = {};
  for (const input of Object.keys(result.metafile.inputs)) {
    const path = join(ROOT, input);
    inputs[path] = sha1(readFileSync(path, "utf8"));
  }
  if (bundled) writeAtomically(bundlePath, code);
  writeAtomically(manifestPath, JSON.stringify({ inputs, bundled }));
  return bundled ? ready(bundlePath) : undefined;
}

/** The bundle's URL, with stack traces mapped back to the TypeScript sources as under the hooks. */
function ready(bundlePath) {
  process.setSourceMapsEnabled(true);
  return pathToFileURL(bundlePath).href;
}
