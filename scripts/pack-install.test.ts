// The packages as users get them: builds, packs every workspace with `npm pack`, installs the tarballs into
// an empty project in a temporary directory outside the repository, and uses them there: the installed
// tbench-server serves a generated `simple` model, a script imports the installed @tbench/client and calls
// it, and `npx tbench --help` / `npx tbench-server --help` exit 0. Workspace symlinks and hoisting hide
// undeclared dependencies inside the repository, so the tarballs' contents are also checked statically:
// no test code or build state, every bare import of shipped code is a declared dependency, and every
// module a shipped file names is shipped.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { join, posix, relative, sep } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** What must never be in a tarball: tests, type tests, test helpers and fixtures, tsc's build state. */
const NOT_SHIPPED: readonly [RegExp, string][] = [
  [/\.test\.[^/]+$/, "a test file"],
  [/\.test-d\.[^/]+$/, "a type-test file"],
  [/(^|\/)testing\//, "a test helper (testing/)"],
  [/(^|\/)fixtures\//, "a test fixture (fixtures/)"],
  [/\.tsbuildinfo$/, "tsc build state"],
];

/** Packages users get through the others rather than install themselves. */
const INDIRECT = new Set(["@tbench/proto"]);

interface PackageJson {
  name: string;
  version: string;
  private?: boolean;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  exports?: unknown;
  imports?: Record<string, unknown>;
  bin?: Record<string, string>;
}

/** One tarball as `npm pack --json` lists it, with its workspace. */
interface Packed {
  name: string;
  filename: string;
  files: { path: string }[];
  /** The workspace directory it was packed from (the tarball's files are copies of its files). */
  dir: string;
  pkg: PackageJson;
}

type RunResult = { code: number | null; stdout: string; stderr: string };

/** Runs a command to its end; never rejects on a non-zero exit (callers assert on `code`). */
async function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<RunResult> {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const [code] = (await once(child, "close")) as [number | null];
  return { code, stdout, stderr };
}

function describe(command: string, result: RunResult): string {
  return `${command} exited ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}

/**
 * The environment of a user's shell: without the npm_* variables that `npm test` hands its scripts, which
 * npm would read as configuration of the outer project (its .npmrc, its prefix). onnxruntime-node's install
 * script reads ONNXRUNTIME_NODE_INSTALL=skip and keeps its bundled CPU binaries (no CUDA download).
 */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.toLowerCase().startsWith("npm_")) env[key] = value;
  }
  env["ONNXRUNTIME_NODE_INSTALL"] = "skip";
  return env;
}

function readPackageJson(dir: string): PackageJson {
  return JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as PackageJson;
}

/** The workspaces that are published (private ones, e.g. build tools, never leave the repository). */
function publishedWorkspaces(): string[] {
  const root = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { workspaces: string[] };
  return root.workspaces.filter((dir) => readPackageJson(join(ROOT, dir)).private !== true);
}

/** Every file path an exports or imports map can resolve to, under any condition. */
function mapTargets(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (value === null || typeof value !== "object") return [];
  return Object.values(value).flatMap(mapTargets);
}

/** The package a bare specifier names: `@scope/name/sub` -> `@scope/name`, `name/sub` -> `name`. */
const packageOf = (specifier: string): string =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/");

const BUILTINS = new Set(builtinModules);

/**
 * Checks one shipped file's module references: bare imports must be declared dependencies, `#` imports
 * must be in the package's imports map, relative imports and `new URL("./x", import.meta.url)` (worker
 * entries, the bin launchers' dist entry) must name a shipped file. Returns the problems found.
 */
function checkReferences(pkg: PackageJson, path: string, text: string, shipped: Set<string>): string[] {
  const problems: string[] = [];
  const declared = new Set([
    ...Object.keys(pkg.dependencies ?? {}),
    ...Object.keys(pkg.peerDependencies ?? {}),
  ]);
  const specifiers = ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
  // `new URL("./name...` also matches a template literal's first part, e.g. `./worker-entry${ext}`.
  const urls = [...text.matchAll(/new URL\(\s*["'`](\.\.?\/[^"'`$]+)/g)].map((m) => m[1] ?? "");
  for (const specifier of [...specifiers, ...urls]) {
    if (specifier.startsWith("node:") || BUILTINS.has(specifier)) continue;
    if (specifier.startsWith("#")) {
      if (pkg.imports?.[specifier] === undefined)
        problems.push(`${pkg.name} ${path}: ${specifier} is not in "imports"`);
    } else if (specifier.startsWith(".")) {
      const target = posix.normalize(posix.join(posix.dirname(path), specifier));
      const candidates = [target, `${target}.js`, target.replace(/\.js$/, ".d.ts")];
      if (!candidates.some((c) => shipped.has(c)))
        problems.push(`${pkg.name} ${path}: ${specifier} is not shipped`);
    } else if (!declared.has(packageOf(specifier))) {
      problems.push(`${pkg.name} ${path}: imports '${specifier}', which is not in "dependencies"`);
    }
  }
  return problems;
}

let work = "";
let packed: Packed[] = [];
let server: ChildProcess | undefined;

/** Builds, packs every published workspace and installs the tarballs into a fresh project. */
async function packAndInstall(): Promise<void> {
  const build = await run(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-b"], {
    cwd: ROOT,
  });
  assert.equal(build.code, 0, describe("tsc -b", build));
  work = realpathSync(mkdtempSync(join(tmpdir(), "tbench-pack-install-")));
  assert.ok(relative(ROOT, work).startsWith(".."), `${work} must be outside the repository ${ROOT}`);
  const tarballs = join(work, "tarballs");
  mkdirSync(tarballs);
  const workspaceArgs = publishedWorkspaces().flatMap((dir) => ["-w", dir]);
  const pack = await run("npm", ["pack", "--json", "--pack-destination", tarballs, ...workspaceArgs], {
    cwd: ROOT,
  });
  assert.equal(pack.code, 0, describe("npm pack", pack));
  const workspaces = publishedWorkspaces().map((dir) => ({
    dir: join(ROOT, dir),
    pkg: readPackageJson(join(ROOT, dir)),
  }));
  packed = (JSON.parse(pack.stdout) as Omit<Packed, "dir" | "pkg">[]).map((p) => {
    const workspace = workspaces.find((w) => w.pkg.name === p.name);
    assert.ok(workspace !== undefined, `npm pack made ${p.filename}, of no workspace`);
    return { ...p, ...workspace };
  });
  assert.equal(packed.length, workspaces.length, "one tarball per workspace");

  const project = join(work, "project");
  mkdirSync(project);
  // The project depends on what users install; @tbench/proto comes in only as a dependency of those (the
  // overrides point every sibling at its tarball, none is on the registry). Nested installs give each
  // package its own node_modules, so an import it does not declare fails here as it would for a user.
  const specs = Object.fromEntries(
    packed.map((p) => [p.name, `file:${relative(project, join(tarballs, p.filename)).split(sep).join("/")}`]),
  );
  const dependencies = Object.fromEntries(Object.entries(specs).filter(([name]) => !INDIRECT.has(name)));
  const manifest = {
    name: "pack-install-check",
    private: true,
    type: "module",
    dependencies,
    overrides: specs,
  };
  writeFileSync(join(project, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  const install = await run(
    "npm",
    ["install", "--no-audit", "--no-fund", "--prefer-offline", "--install-strategy=nested"],
    { cwd: project, env: userEnv() },
  );
  assert.equal(install.code, 0, describe("npm install", install));
}

// Generous bound for a cold npm cache on a slow machine; a warm run takes well under a minute.
before(packAndInstall, { timeout: 300_000 });

after(async () => {
  if (server !== undefined && server.exitCode === null && server.signalCode === null) {
    const exited = once(server, "exit");
    server.kill("SIGTERM");
    await exited;
  }
  if (work !== "") rmSync(work, { recursive: true, force: true });
});

test("the tarballs hold no test code or build state, and every file the package.json names", () => {
  const problems: string[] = [];
  for (const { name, files, pkg } of packed) {
    const paths = new Set(files.map((f) => f.path));
    for (const path of paths) {
      for (const [pattern, what] of NOT_SHIPPED)
        if (pattern.test(path)) problems.push(`${name}: ${path} (${what})`);
    }
    const targets = [...mapTargets(pkg.exports), ...mapTargets(pkg.imports), ...Object.values(pkg.bin ?? {})];
    for (const target of targets) {
      if (!paths.has(posix.normalize(target)))
        problems.push(`${name}: package.json names ${target}, not shipped`);
    }
  }
  assert.deepEqual(problems, []);
});

test("shipped code imports only declared dependencies and shipped modules", () => {
  const problems: string[] = [];
  for (const { name, files, dir, pkg } of packed) {
    const shipped = new Set(files.map((f) => f.path));
    for (const path of shipped) {
      if (!/\.(m?js|d\.ts)$/.test(path)) continue;
      problems.push(...checkReferences(pkg, path, readFileSync(join(dir, path), "utf8"), shipped));
    }
    for (const [dep, range] of Object.entries(pkg.dependencies ?? {})) {
      const sibling = packed.find((p) => p.name === dep);
      if (sibling !== undefined && range !== sibling.pkg.version) {
        problems.push(`${name}: depends on ${dep} '${range}', expected its version '${sibling.pkg.version}'`);
      }
    }
  }
  assert.deepEqual(problems, []);
});

test("the installed tbench-server serves a model the installed client can infer", {
  timeout: 120_000,
}, async () => {
  const project = join(work, "project");
  const models = join(work, "models");
  const generate = await run("npm", ["run", "--silent", "models", "--", "--out", models], { cwd: ROOT });
  assert.equal(generate.code, 0, describe("npm run models -- --out", generate));

  const child = spawn(
    process.execPath,
    [
      join(project, "node_modules/.bin/tbench-server"),
      ...["--model-repository", models, "--model-control-mode", "explicit", "--load-model", "simple"],
      ...["--http-port", "0", "--grpc-port", "0", "--metrics-port", "0"],
    ],
    { cwd: project, env: userEnv(), stdio: ["ignore", "ignore", "pipe"] },
  );
  server = child;
  // The server logs the address it bound once the model is loaded; wait for that line or the exit.
  let log = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      log += chunk.toString();
      const match = /Started HTTPService at (\S+)/.exec(log);
      if (match !== null) resolve(`http://${match[1]}`);
    });
    child.on("exit", (code) => reject(new Error(`tbench-server exited ${code} before listening:\n${log}`)));
  });

  const script = join(project, "check.mjs");
  writeFileSync(
    script,
    [
      'import { createHttpClient } from "@tbench/client";',
      "const client = createHttpClient({ url: process.argv[2], timeoutMs: 30000 });",
      "const live = await client.isServerLive();",
      "const ready = await client.isModelReady('simple');",
      "const a = Int32Array.from({ length: 16 }, (_, i) => i);",
      "const b = new Int32Array(16).fill(3);",
      "const result = await client.infer('simple', { inputs: [",
      "  { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: a },",
      "  { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: b },",
      "] });",
      "const sum = [...result.output('OUTPUT0').as('INT32')];",
      "const difference = [...result.output('OUTPUT1').as('INT32')];",
      "await client.close();",
      "console.log(JSON.stringify({ live, ready, sum, difference }));",
    ].join("\n"),
  );
  const check = await run(process.execPath, [script, url], { cwd: project, env: userEnv() });
  assert.equal(check.code, 0, describe("node check.mjs", check));
  assert.deepEqual(JSON.parse(check.stdout), {
    live: true,
    ready: true,
    sum: Array.from({ length: 16 }, (_, i) => i + 3),
    difference: Array.from({ length: 16 }, (_, i) => i - 3),
  });

  const exited = once(child, "exit");
  child.kill("SIGTERM");
  const [code] = (await exited) as [number | null];
  assert.equal(code, 0, `tbench-server exit on SIGTERM:\n${log}`);
});

test("npx tbench --help and npx tbench-server --help exit 0 in the installed project", {
  timeout: 120_000,
}, async () => {
  const project = join(work, "project");
  for (const [bin, usage] of [
    ["tbench", /Usage: tbench/],
    ["tbench-server", /Usage: tbench-server/],
  ] as const) {
    // --no: use the project's own bin, never fetch a package of that name from the registry.
    const result = await run("npx", ["--no", "--", bin, "--help"], { cwd: project, env: userEnv() });
    assert.equal(result.code, 0, describe(`npx ${bin} --help`, result));
    assert.match(result.stdout, usage);
  }
});
