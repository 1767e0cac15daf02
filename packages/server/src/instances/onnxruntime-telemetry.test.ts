/**
 * tbench-server keeps onnxruntime-node's telemetry off. Its visible trace is the file the runtime's
 * uploader leaves in the temporary directory (`mat-debug-<pid>.log`) when it starts: each child below gets
 * a temporary directory of its own, so the check is the directory's listing. A control child that loads
 * the runtime without the setting shows that the trace appears where telemetry runs (if a future
 * onnxruntime-node stops writing it, the control fails and says so, rather than the check passing blindly).
 *
 * The runtime also keeps telemetry off by itself where it sees a CI system (by the variables below, read
 * from its 1.30 binary and checked one by one; `CI` is too short for `strings` to list and was found by
 * trying: `CI=true` or `CI=1` turns telemetry off, `CI=0` or `CI=false` does not) or its own unit tests:
 * the children run without them, so that both checks mean the same on a developer's machine and under any
 * CI.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { sourceNodeArgs } from "../../../../scripts/testing/source-node.js";
import { keepOnnxRuntimeTelemetryOff, ONNXRUNTIME_TELEMETRY_VARIABLE } from "./onnxruntime-telemetry.js";

const MAIN = new URL("../cli/main.ts", import.meta.url).pathname;
const REPOSITORY = new URL("../../../../examples/models", import.meta.url).pathname;
const MODEL_FILE = join(REPOSITORY, "simple/1/model.onnx");

const directories: string[] = [];
after(() => {
  for (const dir of directories) rmSync(dir, { recursive: true, force: true });
});

/** Variables whose presence makes onnxruntime-node keep its telemetry off on its own. */
const RUNTIME_TELEMETRY_OFF_MARKERS = [
  ONNXRUNTIME_TELEMETRY_VARIABLE,
  "ORT_RUNNING_UNIT_TESTS",
  "CI",
  ...["TF_BUILD", "GITHUB_ACTIONS", "GITLAB_CI", "CIRCLECI", "TRAVIS", "JENKINS_URL", "CODEBUILD_BUILD_ID"],
  ...["BUILDKITE", "TEAMCITY_VERSION", "APPVEYOR", "BITBUCKET_BUILD_NUMBER"],
];

/** The environment of a child whose temporary directory is a fresh one, with none of the markers above. */
function childEnvironment(): { env: NodeJS.ProcessEnv; tmp: string } {
  const tmp = mkdtempSync(join(tmpdir(), "tbench-ort-telemetry-"));
  directories.push(tmp);
  const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp };
  for (const marker of RUNTIME_TELEMETRY_OFF_MARKERS) delete env[marker];
  return { env, tmp };
}

const telemetryTraces = (dir: string) => readdirSync(dir).filter((name) => name.startsWith("mat-debug-"));

test("the variable is set to 1 when unset, and an operator's own value is kept", () => {
  const unset: NodeJS.ProcessEnv = {};
  keepOnnxRuntimeTelemetryOff(unset);
  assert.equal(unset[ONNXRUNTIME_TELEMETRY_VARIABLE], "1");
  const chosen: NodeJS.ProcessEnv = { [ONNXRUNTIME_TELEMETRY_VARIABLE]: "0" };
  keepOnnxRuntimeTelemetryOff(chosen);
  assert.equal(chosen[ONNXRUNTIME_TELEMETRY_VARIABLE], "0");
});

test("control: onnxruntime-node left alone starts its telemetry (its trace file appears)", async () => {
  const { env, tmp } = childEnvironment();
  const script =
    `require("onnxruntime-node").InferenceSession.create(${JSON.stringify(MODEL_FILE)})` +
    ".then((s) => s.release())";
  const child = spawn(process.execPath, ["-e", script], { env, stdio: ["ignore", "ignore", "inherit"] });
  const [code] = await once(child, "exit");
  assert.equal(code, 0);
  assert.equal(
    telemetryTraces(tmp).length,
    1,
    "onnxruntime-node no longer leaves mat-debug-<pid>.log: find another sign of its telemetry for this test",
  );
});

test("tbench-server loads and serves a model with no telemetry started", { timeout: 60_000 }, async () => {
  const { env, tmp } = childEnvironment();
  const child = spawn(
    process.execPath,
    [
      ...sourceNodeArgs(MAIN),
      ...["--model-repository", REPOSITORY, "--model-control-mode", "explicit", "--load-model", "simple"],
      ...["--http-port", "0", "--allow-grpc", "false", "--allow-metrics", "false"],
    ],
    { env, stdio: ["ignore", "ignore", "pipe"] },
  );
  try {
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    let address: string | undefined;
    while (address === undefined) {
      address = /Started HTTPService at (\S+)/.exec(stderr)?.[1];
      if (child.exitCode !== null) assert.fail(`tbench-server exited early: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const ready = await fetch(`http://${address}/v2/models/simple/ready`);
    assert.equal(ready.status, 200, "simple is loaded, so the runtime is initialised");
    assert.deepEqual(telemetryTraces(tmp), []);
  } finally {
    child.kill("SIGKILL");
    await once(child, "exit");
  }
});
