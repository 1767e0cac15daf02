/**
 * Module hooks that run this repository's TypeScript from source for tests, lighter than tsx: each `.ts`
 * file is transpiled once (esbuild, type annotations stripped; tsconfig's verbatimModuleSyntax and
 * isolatedModules make that exact) and kept in node_modules/.cache keyed by its path and content, so a
 * test process, worker thread or child only reads files it has seen before.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { transpiled } from "./transform-cache.mjs";

export async function resolve(specifier, context, next) {
  // TypeScript's NodeNext style names the emitted file ("./x.js"); from source it is "./x.ts".
  if (
    specifier.endsWith(".js") &&
    (specifier.startsWith("./") || specifier.startsWith("../")) &&
    context.parentURL?.endsWith(".ts")
  ) {
    const asTypeScript = new URL(`${specifier.slice(0, -3)}.ts`, context.parentURL);
    if (existsSync(asTypeScript)) return { url: asTypeScript.href, format: "module", shortCircuit: true };
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!url.startsWith("file:") || !url.endsWith(".ts")) return next(url, context);
  const path = fileURLToPath(url);
  const source = await transpiled(path, readFileSync(path, "utf8"));
  return { format: "module", source, shortCircuit: true };
}
