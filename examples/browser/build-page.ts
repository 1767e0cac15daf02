/**
 * Builds the browser example into a folder a static server can serve: index.html and page.js, the page's
 * TypeScript and @tbench/client's browser entry bundled by esbuild for browsers (ES modules, minified).
 */
import { copyFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { build } from "esbuild";

const HERE = new URL(".", import.meta.url).pathname;

/** Writes the page into `outDir`; resolves with the bundle's size in bytes. */
export async function buildPage(outDir: string): Promise<number> {
  await mkdir(outDir, { recursive: true });
  const result = await build({
    entryPoints: [join(HERE, "page.ts")],
    outfile: join(outDir, "page.js"),
    bundle: true,
    platform: "browser",
    format: "esm",
    target: "es2022",
    minify: true,
    // Inside this repository the packages resolve to their sources: no `npm run build` needed first.
    conditions: ["source"],
    metafile: true,
    logLevel: "warning",
  });
  await copyFile(join(HERE, "index.html"), join(outDir, "index.html"));
  return Object.values(result.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0);
}
