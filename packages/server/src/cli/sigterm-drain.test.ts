// SIGTERM with 400 requests in flight (issue 14's probe: 388 answered, 12 reset or EOF). The command-line
// server is signalled once the first answer is back, with the other requests written to their own
// connections; every one of them must get an HTTP answer (none reset or cut), and the server exits 0.
// Those the server had read are served (200); one it had not read yet is refused with a clean 503.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { Agent, request } from "node:http";
import { test } from "node:test";

const MAIN = new URL("./main.ts", import.meta.url).pathname;
const REPOSITORY = new URL("../../../../examples/models", import.meta.url).pathname;
const REQUESTS = 400;

async function httpUrlOf(child: ChildProcess, stderr: () => string): Promise<string> {
  for (;;) {
    const match = /Started HTTPService at (\S+)/.exec(stderr());
    if (match !== null) return `http://${match[1]}`;
    if (child.exitCode !== null) assert.fail(`exited early: ${stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
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
      "--conditions=source",
      "--import",
      "tsx",
      MAIN,
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
    const url = await httpUrlOf(child, () => stderr);
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
    child.kill("SIGTERM");
    const outcomes = await Promise.all(answers);
    const byOutcome = new Map<number | string, number>();
    for (const outcome of outcomes) byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1);
    // A request the server had not read when the signal came is refused cleanly (503, Connection: close):
    // one on the wire then is as new as one sent after. None is reset or cut.
    for (const outcome of byOutcome.keys())
      assert.ok(outcome === 200 || outcome === 503, `${JSON.stringify([...byOutcome])}\n${stderr}`);
    assert.ok((byOutcome.get(200) ?? 0) > 0, stderr);
    const [code] = await exited;
    assert.equal(code, 0, stderr);
  } finally {
    agent.destroy();
    if (child.exitCode === null) child.kill("SIGKILL");
  }
});
