// Fails when any package's source has an import cycle, counting type-only imports too: a cycle is a
// design smell whether or not it survives compilation. Module resolution is TypeScript's own, so `.js`
// specifiers that name `.ts` files, package exports and the `source` condition resolve as tsc sees them.
// Also fails on an import the README's layer rules forbid (LAYER_RULES below; tests and testing/ helpers
// are exempt). Run: tsx scripts/check-import-cycles.ts [repository root]
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import ts from "typescript";

const root = process.argv[2] ? resolve(process.argv[2]) + sep : new URL("..", import.meta.url).pathname;

interface LayerRule {
  readonly from: readonly string[];
  readonly to: readonly string[];
  readonly why: string;
}

/** Rules for folders stacked as floors, lowest first: each may import only the floors below it. */
function floorRules(floors: string[], why: Record<string, string>): LayerRule[] {
  return floors.map((floor, i) => ({ from: [floor], to: floors.slice(i + 1), why: why[floor] ?? "" }));
}

const SERVER_FRONT_ENDS = ["http", "grpc", "metrics"];
const SERVER_INNER = ["repository", "stats", "instances", "scheduler", "ensemble", "generation"];
const SERVER_UPPER = ["lifecycle", ...SERVER_FRONT_ENDS, "cli", "."];
/**
 * The README's layer rules, per package: a folder of `src/` ("." for files directly in it) and the
 * folders of the same package it must not import, with the rule's reason.
 */
const LAYER_RULES: Record<string, LayerRule[]> = {
  server: [
    {
      from: ["core"],
      to: [...SERVER_INNER, ...SERVER_UPPER],
      why: "core/ is the ground floor: it imports nothing of the server",
    },
    {
      from: SERVER_INNER,
      to: SERVER_UPPER,
      why: "repository/, stats/, instances/, scheduler/, ensemble/ and generation/ sit below lifecycle/, which composes them",
    },
    {
      from: SERVER_FRONT_ENDS,
      // stats/ is what the metrics endpoint reports, not a model or a worker.
      to: [...SERVER_INNER.filter((folder) => folder !== "stats"), "lifecycle", "cli", "."],
      why: "front ends decode the wire and call InferenceCore (core/); they never touch models or workers",
    },
    ...SERVER_FRONT_ENDS.map((front) => ({
      from: [front],
      to: SERVER_FRONT_ENDS.filter((other) => other !== front),
      why: "front ends stand on the same floor: what two of them share belongs in core/",
    })),
  ],
  client: [
    {
      from: ["fetch"],
      to: ["grpc"],
      why: "fetch/ is the transport of browsers and edge runtimes: gRPC (@grpc/grpc-js) is Node only",
    },
  ],
  // tbench's folders as floors, lowest first: each imports only floors below its own.
  tbench: floorRules(["stats", "load", "measure", "report", "run", "tune", "cli", "."], {
    stats: "stats/ (histograms, moments) serves every floor",
    load: "load/ sends requests; measuring them is measure/'s",
    measure: "measure/ (windows, stability, sweeps) sits below what reports and drives it",
    report: "report/ formats results; it does not run benchmarks",
    run: "run/ is the benchmark engine under both commands",
    tune: "tune/ drives the engine (run/), not the command line",
    cli: "cli/ is the top: only the package's index imports it",
  }),
};

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

/** `packages/<pkg>/src/<folder>/...` as [pkg, folder], or undefined for files the rules leave alone. */
function layerOf(file: string): [string, string] | undefined {
  const parts = relative(packagesDir, file).split(sep);
  if (parts[1] !== "src" || file.endsWith(".test.ts")) return undefined;
  const folder = parts.length > 3 ? parts[2]! : ".";
  return folder === "testing" ? undefined : [parts[0]!, folder];
}

const breaches: string[] = [];
for (const [file, edges] of graph) {
  const from = layerOf(file);
  if (from === undefined) continue;
  for (const target of edges) {
    const to = layerOf(target);
    if (to === undefined || to[0] !== from[0] || to[1] === from[1]) continue;
    const rule = LAYER_RULES[from[0]]?.find((r) => r.from.includes(from[1]) && r.to.includes(to[1]));
    if (rule === undefined) continue;
    const edge = `${relative(packagesDir, file)} -> ${relative(packagesDir, target)}`;
    breaches.push(`layer rule broken: ${edge} (${rule.why})`);
  }
}
for (const cycle of cycles)
  console.error("import cycle: " + cycle.map((f) => relative(root, f)).join(" -> "));
for (const breach of breaches) console.error(breach);
if (cycles.length > 0 || breaches.length > 0) process.exit(1);
console.log(`no import cycles in ${graph.size} files; the layer rules hold`);
