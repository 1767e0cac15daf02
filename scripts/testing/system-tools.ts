/**
 * The system tools some tests use beyond Node and npm, and how a test asks for one.
 *
 * `npm test` passes on a machine with Node and npm alone: a test whose tool is missing is skipped with a
 * reason, and the test runner (scripts/run-tests.ts) ends with one block that lists what was skipped and the
 * command that installs every tool. `.ci/run` installs them all and sets TBENCH_REQUIRE_SYSTEM_TOOLS=1: then
 * nothing is skipped, and a missing tool fails its tests, saying which package brings it.
 */
import { spawnSync } from "node:child_process";

/** The environment variable `.ci/run` sets: tests whose tool is missing fail instead of skipping. */
export const REQUIRE_TOOLS_ENV = "TBENCH_REQUIRE_SYSTEM_TOOLS";

/** Names the Python interpreter that has grpcio (default Debian's, where apt puts python3-grpcio). */
export const PYTHON_ENV = "TBENCH_PYTHON";
/** The interpreter the Python gRPC client test runs: `python3` on PATH may be a pyenv shim without grpcio. */
export const PYTHON_WITH_GRPC = process.env[PYTHON_ENV] || "/usr/bin/python3";

export interface SystemTool {
  /** What the tests check with it (the README's table of optional tools says the same). */
  readonly adds: string;
  /** Debian 12 packages that bring it. */
  readonly debian: readonly string[];
  /** Where the plain apt-get line is not enough. */
  readonly debianNote?: string;
  /** How to get it on macOS (Homebrew formulas; a cask or pip where Homebrew has none). */
  readonly macos: string;
  /** A command that exits 0 where the tool works. */
  readonly probe: readonly [string, ...string[]];
}

export const SYSTEM_TOOLS = {
  protoc: {
    adds: "the real protoc judges the wire encoding, the generated code and the config.pbtxt parser",
    debian: ["protobuf-compiler"],
    macos: "brew install protobuf",
    probe: ["protoc", "--version"],
  },
  chromium: {
    adds: "`tbench report`'s HTML page is opened in a real browser and its charts are checked as drawn; the browser example (examples/browser) classifies through tbench-server with CORS on and is blocked with it off",
    debian: ["chromium"],
    macos: "brew install --cask chromium",
    probe: ["chromium", "--version"],
  },
  prometheus: {
    adds: "a real Prometheus scrapes tbench-server and answers the Grafana dashboard's queries",
    debian: ["prometheus"],
    macos: "brew install prometheus",
    probe: ["prometheus", "--version"],
  },
  promtool: {
    adds: "deploy/prometheus.yml is checked by promtool",
    debian: ["prometheus"],
    macos: "brew install prometheus",
    probe: ["promtool", "--version"],
  },
  "docker-compose": {
    adds: "docker-compose.yml is checked by `docker-compose config` (no Docker engine needed)",
    debian: ["docker-compose"],
    macos: "brew install docker-compose",
    probe: ["docker-compose", "version"],
  },
  "python3-grpcio": {
    adds: "Python's grpcio, a gRPC client we did not write, drives tbench-server (with protoc's Python classes)",
    debian: ["python3-grpcio", "python3-protobuf"],
    macos: "pip3 install grpcio 'protobuf<4'",
    probe: [PYTHON_WITH_GRPC, "-c", "import grpc, google.protobuf"],
  },
  vulkan: {
    adds: "KIND_GPU models run on onnxruntime's WebGPU provider over a (software) Vulkan device",
    debian: ["mesa-vulkan-drivers", "libvulkan1"],
    debianNote:
      "Dawn needs Mesa 25: on Debian 12 install these two from bookworm-backports (-t bookworm-backports)",
    macos: "(WebGPU runs on Metal: nothing to install)",
    // Only for the summary: the tests probe by opening a real WebGPU session (server src/testing/webgpu-device.ts).
    probe: ["sh", "-c", "ldconfig -p | grep -q libvulkan.so.1"],
  },
  curl: {
    adds: "the curl commands of the README and docs/ are run as written",
    debian: ["curl"],
    macos: "(macOS ships curl)",
    probe: ["curl", "--version"],
  },
} as const satisfies Record<string, SystemTool>;

export type SystemToolName = keyof typeof SYSTEM_TOOLS;

/** The words every skip reason of a missing tool starts with; the runner's summary reads them back. */
export const SKIP_PREFIX = "needs the system tool ";

const probed = new Map<SystemToolName, boolean>();

/** Whether `name` works on this machine (probed once per process). */
export function hasSystemTool(name: SystemToolName): boolean {
  let found = probed.get(name);
  if (found === undefined) {
    const [command, ...args] = SYSTEM_TOOLS[name].probe;
    found = spawnSync(command, args, { stdio: "ignore", timeout: 30_000 }).status === 0;
    probed.set(name, found);
  }
  return found;
}

/** Whether the environment asks for every tool (`.ci/run`): a missing one is then a failure. */
export function systemToolsRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env[REQUIRE_TOOLS_ENV];
  return value !== undefined && value !== "" && value !== "0";
}

/** How to install `names` on Debian. */
export function installHint(names: readonly SystemToolName[]): string {
  const packages = [...new Set(names.flatMap((name) => SYSTEM_TOOLS[name].debian))];
  return `apt-get install ${packages.join(" ")}`;
}

/**
 * node:test's `skip` for a test or suite that needs `names`: false where they all work, or where
 * TBENCH_REQUIRE_SYSTEM_TOOLS is set (the test then runs and its tool's absence fails it); else the reason,
 * which starts with {@link SKIP_PREFIX} and names the tools.
 */
export function skipWithout(...names: SystemToolName[]): string | false {
  const missing = names.filter((name) => !hasSystemTool(name));
  if (missing.length === 0 || systemToolsRequired()) return false;
  return `${SKIP_PREFIX}${missing.join(", ")} (${installHint(missing)}; .ci/run installs it)`;
}

/** Throws, naming the package, when `name` is missing: for tests that run only where it was required. */
export function assertSystemTool(name: SystemToolName): void {
  if (!hasSystemTool(name))
    throw new Error(`${name} is not installed here (${installHint([name])}; .ci/run installs it)`);
}

/** The tools named in skip reasons that start with {@link SKIP_PREFIX}. */
export function toolsInSkipReason(reason: string): SystemToolName[] {
  if (!reason.startsWith(SKIP_PREFIX)) return [];
  const list = reason.slice(SKIP_PREFIX.length).split(" (")[0] ?? "";
  return list.split(", ").filter((name): name is SystemToolName => Object.hasOwn(SYSTEM_TOOLS, name));
}
