import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { test } from "node:test";
import { sourceNodeArgs } from "../../../../scripts/testing/source-node.js";

const MAIN = new URL("./main.ts", import.meta.url).pathname;
const REPOSITORY = new URL("../../../../examples/models", import.meta.url).pathname;

function runCli(args: string[]): { child: ChildProcess; stderr: () => string } {
  const child = spawn(process.execPath, [...sourceNodeArgs(MAIN), ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdout!.resume();
  return { child, stderr: () => stderr };
}

/** The HTTP URL the server logs once it listens; fails if it exits first. */
async function httpUrlOf(child: ChildProcess, stderr: () => string): Promise<string> {
  for (;;) {
    const match = /Started HTTPService at (\S+)/.exec(stderr());
    if (match !== null) return `http://${match[1]}`;
    if (child.exitCode !== null) assert.fail(`exited early: ${stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test("a bad flag exits 2 with a one-line message and no stack trace", async () => {
  const { child, stderr } = runCli(["--model-repository", REPOSITORY, "--http-port", "eighty"]);
  const [code] = await once(child, "exit");
  assert.equal(code, 2);
  assert.equal(
    stderr(),
    "tbench-server: invalid --http-port 'eighty': expected a port number\n(run tbench-server --help for the options)\n",
  );
});

test("tbench-server starts, answers, and exits 0 on SIGTERM", { timeout: 60_000 }, async () => {
  const { child, stderr } = runCli([
    "--model-repository",
    REPOSITORY,
    "--http-port",
    "0",
    "--metrics-port",
    "0",
    "--model-control-mode",
    "explicit",
    "--load-model",
    "simple",
  ]);
  const exited = once(child, "exit");
  try {
    const url = await httpUrlOf(child, stderr);
    assert.equal((await fetch(`${url}/v2/health/ready`)).status, 200);
    const res = await fetch(`${url}/v2/models/simple/infer`, {
      method: "POST",
      body: JSON.stringify({
        inputs: [
          {
            name: "INPUT0",
            datatype: "INT32",
            shape: [1, 16],
            data: Array.from({ length: 16 }, (_, i) => i),
          },
          { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, () => 1) },
        ],
        outputs: [{ name: "OUTPUT0" }],
      }),
    });
    assert.deepEqual(
      ((await res.json()) as { outputs: { data: number[] }[] }).outputs[0]!.data,
      Array.from({ length: 16 }, (_, i) => i + 1),
    );
    child.kill("SIGTERM");
    const [code] = await exited;
    assert.equal(code, 0, stderr());
    assert.match(stderr(), /received SIGTERM, shutting down/);
    assert.match(stderr(), /server stopped/);
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
});

test("the bundled repository with default flags: every model loads, ensemble_pipeline answers, the server is ready", {
  timeout: 180_000,
}, async () => {
  const { child, stderr } = runCli([
    "--model-repository",
    REPOSITORY,
    "--http-port",
    "0",
    "--metrics-port",
    "0",
    "--grpc-port",
    "0",
  ]);
  const exited = once(child, "exit");
  try {
    const url = await httpUrlOf(child, stderr);
    assert.equal((await fetch(`${url}/v2/health/ready`)).status, 200, stderr());
    assert.match(stderr(), /Started GRPCInferenceService at 127\.0\.0\.1:\d+/);
    assert.doesNotMatch(stderr(), /^E /m, "no model failed to load");
    const image = Array.from({ length: 3 * 224 * 224 }, (_, i) => Math.sin(i * 0.01));
    const res = await fetch(`${url}/v2/models/ensemble_pipeline/infer`, {
      method: "POST",
      body: JSON.stringify({
        inputs: [{ name: "IMAGE", datatype: "FP32", shape: [1, 3, 224, 224], data: image }],
      }),
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { outputs: { name: string; shape: number[]; data: number[] }[] };
    assert.equal(body.outputs[0]?.name, "LABEL");
    assert.deepEqual(body.outputs[0]?.shape, [1, 1]);
    assert.ok(Number.isInteger(body.outputs[0]?.data[0]));
    child.kill("SIGTERM");
    const [code] = await exited;
    assert.equal(code, 0, stderr());
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
});
