// SIGTERM with 400 requests in flight (issue 14's probe: 388 answered, 12 reset or EOF). The command-line
// server is signalled once the first answer is back and it has received every request (its metrics count
// them: a request the client has written may not even be connected yet on a loaded machine, and one the
// server has not received when the signal comes is a new request, refused); every one of them must be
// answered 200 (none reset or cut), and the server exits 0.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { Agent, request } from "node:http";
import { test } from "node:test";
import { sourceNodeArgs } from "../../../../scripts/testing/source-node.js";

const MAIN = new URL("./main.ts", import.meta.url).pathname;
const REPOSITORY = new URL("../../../../examples/models", import.meta.url).pathname;
const REQUESTS = 400;

async function urlOf(child: ChildProcess, stderr: () => string, service = "HTTPService"): Promise<string> {
  for (;;) {
    const match = new RegExp(`Started ${service} at (\\S+)`).exec(stderr());
    if (match !== null) return `http://${match[1]}`;
    if (child.exitCode !== null) assert.fail(`exited early: ${stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits until the server has received `count` infers of heavy_nobatch: queued or answered (metrics). */
async function receivedAll(metricsUrl: string, count: number): Promise<void> {
  const read = (text: string, name: string) =>
    Number(new RegExp(`^${name}\\{model="heavy_nobatch"[^}]*\\} (\\d+)`, "m").exec(text)?.[1] ?? 0);
  for (;;) {
    const text = await (await fetch(metricsUrl)).text();
    // One may be running (neither queued nor answered): it is counted once answered.
    if (
      read(text, "nv_inference_pending_request_count") + read(text, "nv_inference_request_success") >=
      count
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** One infer on heavy_nobatch (one instance, no batching: the 400 queue behind it) on its own connection. */
function infer(url: string, agent: Agent, written: () => void): Promise<number | string> {
  const body = JSON.stringify({
    inputs: [{ name: "input", datatype: "FP32", shape: [1, 256], data: new Array(256).fill(0.5) }],
  });
  return new Promise((resolve) => {
    const req = request(
      `${url}/v2/models/heavy_nobatch/infer`,
      { method: "POST", agent, headers: { "content-type": "application/json" } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
        res.on("error", (error) => resolve(`response ${error.message}`));
      },
    );
    req.on("error", (error) => resolve(`request ${(error as NodeJS.ErrnoException).code ?? error.message}`));
    req.on("finish", written);
    req.end(body);
  });
}

test(`SIGTERM with ${REQUESTS} requests in flight: every request is answered, then the server exits 0`, {
  timeout: 120_000,
}, async () => {
  const child = spawn(
    process.execPath,
    [
      ...sourceNodeArgs(MAIN),
      ...["--model-repository", REPOSITORY, "--http-port", "0", "--grpc-port", "0", "--metrics-port", "0"],
      ...["--model-control-mode", "explicit", "--load-model", "heavy_nobatch"],
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = once(child, "exit");
  const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  try {
    const url = await urlOf(child, () => stderr);
    const metricsUrl = `${await urlOf(child, () => stderr, "Metrics Service")}/metrics`;
    let writtenCount = 0;
    let allWritten!: () => void;
    const everyRequestWritten = new Promise<void>((resolve) => {
      allWritten = resolve;
    });
    const onWritten = (): void => {
      if (++writtenCount === REQUESTS) allWritten();
    };
    const answers = Array.from({ length: REQUESTS }, () => infer(url, agent, onWritten));
    await everyRequestWritten;
    await Promise.race(answers);
    await receivedAll(metricsUrl, REQUESTS);
    child.kill("SIGTERM");
    const outcomes = await Promise.all(answers);
    const byOutcome = new Map<number | string, number>();
    for (const outcome of outcomes) byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1);
    assert.deepEqual(Object.fromEntries(byOutcome), { 200: REQUESTS }, stderr);
    const [code] = await exited;
    assert.equal(code, 0, stderr);
  } finally {
    agent.destroy();
    if (child.exitCode === null) child.kill("SIGKILL");
  }
});
