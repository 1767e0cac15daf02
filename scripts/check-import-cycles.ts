// Fails when any package's source has an import cycle, counting type-only imports too: a cycle is a
// design smell whether or not it survives compilation. Module resolution is TypeScript's own, so `.js`
// specifiers that name `.ts` files, package exports and the `source` condition resolve as tsc sees them.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

const root = new URL("..", import.meta.url).pathname;
const options: ts.CompilerOptions = {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  customConditions: ["source"],
  allowJs: false,
};

function sourceFiles(dir: string, found: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === "dist") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(path, found);
    else if (/\.ts$/.test(entry.name) && !entry.name.endsWith(".d.ts")) found.push(path);
  }
  return found;
}

const packagesDir = join(root, "packages");
const files = readdirSync(packagesDir).flatMap((pkg) => sourceFiles(join(packagesDir, pkg, "src")));
const graph = new Map<string, string[]>();
for (const file of files) {
  const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  const edges: string[] = [];
  for (const { fileName } of info.importedFiles) {
    const resolved = ts.resolveModuleName(fileName, file, options, ts.sys).resolvedModule;
    if (
      resolved &&
      !resolved.isExternalLibraryImport &&
      !resolved.resolvedFileName.includes("node_modules")
    ) {
      edges.push(resolved.resolvedFileName);
    }
  }
  graph.set(file, edges);
}

// Iterative depth-first search with colours; each back edge closes one cycle.
const state = new Map<string, "open" | "done">();
const cycles: string[][] = [];
function visit(start: string): void {
  const stack: { file: string; next: number }[] = [{ file: start, next: 0 }];
  const path: string[] = [start];
  state.set(start, "open");
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    const edges = graph.get(top.file) ?? [];
    if (top.next >= edges.length) {
      state.set(top.file, "done");
      stack.pop();
      path.pop();
      continue;
    }
    const target = edges[top.next++]!;
    const seen = state.get(target);
    if (seen === "open") cycles.push([...path.slice(path.indexOf(target)), target]);
    else if (seen === undefined) {
      state.set(target, "open");
      stack.push({ file: target, next: 0 });
      path.push(target);
    }
  }
}
for (const file of graph.keys()) if (!state.has(file)) visit(file);

if (cycles.length > 0) {
  for (const cycle of cycles)
    console.error("import cycle: " + cycle.map((f) => relative(root, f)).join(" -> "));
  process.exit(1);
}
console.log(`no import cycles in ${graph.size} files`);
