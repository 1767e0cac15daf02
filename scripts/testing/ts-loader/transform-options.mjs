// What the test loader's transpiling shares: where it caches, and esbuild's options for this repository.
import { fileURLToPath } from "node:url";

/** TBENCH_TS_LOADER_CACHE moves the cache (the loader's own test uses a scratch folder). */
export const CACHE_DIR =
  process.env.TBENCH_TS_LOADER_CACHE ??
  fileURLToPath(new URL("../../../node_modules/.cache/tbench/ts-loader", import.meta.url));

/** Bumped when the options below change, so that no cached file made with the old ones is reused. */
export const TRANSFORM_VERSION = "1";

/** tsconfig's verbatimModuleSyntax and isolatedModules make a file-by-file transform exact. */
export const TRANSFORM_OPTIONS = {
  format: "esm",
  target: "node20",
  sourcemap: "inline",
  tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true, useDefineForClassFields: true } },
};
