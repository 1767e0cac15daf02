/**
 * Test files as single JavaScript files, so that their processes run without loader hooks. Under Node 20 a
 * process with hooks starts a hooks thread and sends it every module it imports: measured, 0.23 CPU-s more
 * per process that imports @tbench/server (0.79 against 0.54), and the suite starts about 170 of them.
 *
 * Each bundle holds this repository's modules (workspace packages from source) and imports everything
 * under node_modules as usual. `import.meta.url` in each module is replaced by that module's own file URL,
 * so paths a module computes from its location (fixtures, child entries, worker bodies) are those of the
 * unbundled run. A file that does not bundle gets a shim instead, which registers the hooks and imports it.
 * Run them with --enable-source-maps, so that stack traces name the TypeScript files as under the hooks.
 *
 * Bundles live in node_modules/.cache/tbench/test-bundles/<path of the test file>.mjs (the reporter maps
 * them back), and are rebuilt, all in one esbuild call (1 s for the whole suite), when a file they were built
 * from has changed. Code shared by several files goes to chunks of its own.
 */
import { readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { installedPackages, readOrUndefined, sha1, writeAtomically } from "./cache-files.mjs";
import { TRANSFORM_OPTIONS, TRANSFORM_VERSION } from "./transform-options.mjs";

export { loaderEnvironment } from "./api.mjs";

/** Where the bundle of a test file (a path relative to the repository) is, under the repository root. */
export const TEST_BUNDLE_DIR = join("node_modules", ".cache", "tbench", "test-bundles");
/** A file's bundle is `<file>.mjs` there, its shim `<file>.shim.mjs`. */
const entryName = (file, shimmed) => `${file}${shimmed ? ".shim" : ""}.mjs`;
const ENTRY_NAME = new RegExp(`^${TEST_BUNDLE_DIR.replaceAll(".", "\\.")}/(.+?)(\\.shim)?\\.mjs$`);

/** The file (relative to the repository) whose bundle or shim is at `path` (relative too), else `path`. */
export function bundledFile(path) {
  return ENTRY_NAME.exec(path)?.[1] ?? path;
}
const MANIFEST = "manifest.json";
/** Bumped when the way bundles are made changes. */
const BUNDLE_VERSION = `${TRANSFORM_VERSION}.1`;

/**
 * esbuild plugin: each of this repository's modules sees its own file URL as `import.meta.url` (a define
 * per file, so text in strings stays as it is; the file's source map carries through to the bundle's).
 */
function ownImportMetaUrl(esbuild) {
  return {
    name: "own-import-meta-url",
    setup(build) {
      build.onLoad({ filter: /\.(ts|mjs|js)$/ }, async (args) => {
        const source = readFileSync(args.path, "utf8");
        const loader = args.path.endsWith(".ts") ? "ts" : "js";
        if (!source.includes("import.meta.url")) return { contents: source, loader };
        const { code } = await esbuild.transform(source, {
          ...TRANSFORM_OPTIONS,
          loader,
          sourcefile: args.path,
          define: { "import.meta.url": JSON.stringify(pathToFileURL(args.path).href) },
        });
        return { contents: code, loader: "js" };
      });
    },
  };
}

/** The module a file that does not bundle runs: it registers the hooks, then imports the file. */
function shim(file, root) {
  const api = new URL("./api.mjs", import.meta.url).href;
  const target = pathToFileURL(join(root, file)).href;
  return `import { register } from ${JSON.stringify(api)};\nregister();\nawait import(${JSON.stringify(target)});\n`;
}

async function build(root, outdir, entries, splitting) {
  const esbuild = await import("esbuild");
  return esbuild.build({
    ...TRANSFORM_OPTIONS,
    entryPoints: entries.map((file) => ({ in: join(root, file), out: file })),
    outdir,
    outExtension: { ".js": ".mjs" },
    // Modules a file imports only at run time (`await import()`) go to chunks of their own, with the
    // packages they import: bundled into the file, a package loaded lazily (echarts) would load at start.
    splitting,
    chunkNames: "chunks/[name]-[hash]",
    absWorkingDir: root,
    bundle: true,
    platform: "node",
    conditions: ["source"],
    external: installedPackages(root),
    // Tests and errors read names (`error.name`, a class's name) that bundling would otherwise rename.
    keepNames: true,
    plugins: [ownImportMetaUrl(esbuild)],
    write: outdir !== undefined,
    metafile: true,
    logLevel: "silent",
  });
}

/**
 * The module to run for each of `files` (test files or other entries, relative to `root`) as a map from the
 * file to an absolute path: its bundle, or a shim that loads it under the hooks where it does not bundle.
 * All are built together, again whenever one of the files they were built from changes.
 */
export async function testEntries(root, files) {
  const dir = join(root, TEST_BUNDLE_DIR);
  const entries = [...new Set(files)].sort();
  const manifest = JSON.parse(readOrUndefined(join(dir, MANIFEST)) ?? "{}");
  const current =
    manifest.version === BUNDLE_VERSION &&
    JSON.stringify(manifest.entries) === JSON.stringify(entries) &&
    Object.entries(manifest.inputs).every(
      ([path, hash]) => sha1(readOrUndefined(join(root, path)) ?? "") === hash,
    );
  const shimmed = new Set(current ? manifest.shimmed : await rebuild(root, dir, entries));
  return new Map(entries.map((file) => [file, join(dir, entryName(file, shimmed.has(file)))]));
}

/** Builds every entry into `dir` (replacing what was there) and returns those that did not bundle. */
async function rebuild(root, dir, entries) {
  const staging = `${dir}.${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  const shimmed = [];
  let result;
  try {
    result = await build(root, staging, entries, true);
  } catch {
    // Some file does not build: find which, one at a time (rare: the type check fails first), and build
    // the rest together.
    for (const file of entries) {
      try {
        await build(root, undefined, [file], false);
      } catch {
        shimmed.push(file);
      }
    }
    rmSync(staging, { recursive: true, force: true });
    const bundled = entries.filter((file) => !shimmed.includes(file));
    if (bundled.length > 0) result = await build(root, staging, bundled, true);
  }
  const inputs = {};
  for (const input of Object.keys(result?.metafile.inputs ?? {})) {
    inputs[input] = sha1(readFileSync(join(root, input), "utf8"));
  }
  for (const file of shimmed) {
    inputs[file] = sha1(readFileSync(join(root, file), "utf8"));
    writeAtomically(join(staging, entryName(file, true)), shim(file, root));
  }
  writeAtomically(
    join(staging, MANIFEST),
    JSON.stringify({ version: BUNDLE_VERSION, entries, shimmed, inputs }),
  );
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
  return shimmed;
}
