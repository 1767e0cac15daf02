/**
 * Module hooks that run this repository's TypeScript from source for tests, lighter than tsx: each `.ts`
 * file is transpiled once (esbuild, type annotations stripped; tsconfig's verbatimModuleSyntax and
 * isolatedModules make that exact) and kept in node_modules/.cache keyed by its path and content, so a
 * test process, worker thread or child only reads files it has seen before.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CACHE_DIR, TRANSFORM_OPTIONS, TRANSFORM_VERSION } from "./transform-options.mjs";

let esbuild;

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
  const source = readFileSync(path, "utf8");
  const key = createHash("sha1").update(`${TRANSFORM_VERSION}\0${path}\0`).update(source).digest("hex");
  const cached = join(CACHE_DIR, `${key}.js`);
  let code;
  try {
    code = readFileSync(cached, "utf8");
  } catch {
    code = await transpile(source, path);
    mkdirSync(CACHE_DIR, { recursive: true });
    const partial = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    writeFileSync(partial, code);
    renameSync(partial, cached);
  }
  return { format: "module", source: code, shortCircuit: true };
}

async function transpile(source, path) {
  esbuild ??= await import("esbuild");
  const { code } = await esbuild.transform(source, { ...TRANSFORM_OPTIONS, loader: "ts", sourcefile: path });
  return code;
}
