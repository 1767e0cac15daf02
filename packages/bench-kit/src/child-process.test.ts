import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { startChild } from "./child-process.js";
import { parseStartupLines, tbenchServerCommand } from "./tbench-server.js";

/** A child that prints `ready at <port>` (stderr) and then what `then` does. */
const readyChild = (then: string) =>
  `process.stderr.write("loading\\n"); setTimeout(() => process.stderr.write("ready at 4242\\n"), 20); ${then}`;
const readyAt = (output: string) => {
  const port = /ready at (\d+)/.exec(output)?.[1];
  return port === undefined ? undefined : { port: Number(port) };
};

describe("bench kit: a server in a child process", () => {
  it("is ready when its output says so, and close() stops it with SIGTERM", async () => {
    const script = readyChild(
      `process.on("SIGTERM", () => { console.log("bye"); process.exit(0); }); setInterval(() => {}, 1000);`,
    );
    const child = await startChild({ name: "test child", args: ["-e", script], ready: readyAt });
    assert.equal(child.port, 4242);
    assert.equal(child.pid, child.child.pid);
    assert.match(child.log(), /^loading\nready at 4242\n$/);
    await child.close();
    assert.equal(await child.exited, 0);
    assert.match(child.log(), /bye/);
    await child.close(); // idempotent
  });

  it("close() sends SIGKILL when SIGTERM is ignored for closeTimeoutMs", async () => {
    const script = readyChild(`process.on("SIGTERM", () => {}); setInterval(() => {}, 1000);`);
    const child = await startChild({
      name: "stubborn",
      args: ["-e", script],
      ready: readyAt,
      closeTimeoutMs: 200,
    });
    await child.close();
    assert.equal(await child.exited, "SIGKILL");
  });

  it("rejects with the end of its output when it exits first or is not ready in time", async () => {
    await assert.rejects(
      startChild({
        name: "quitter",
        args: ["-e", `console.error("no models"); process.exit(3)`],
        ready: readyAt,
      }),
      /^Error: quitter: exited \(3\) before it was ready; its output ends:\nno models\n$/,
    );
    const slow = startChild({
      name: "sleeper",
      args: ["-e", `console.error("still loading"); setInterval(() => {}, 1000)`],
      ready: readyAt,
      startTimeoutMs: 300,
    });
    // The tail is checked above (quitter); here the line may not be out yet on a loaded machine when the
    // 300 ms run out (node's own start can take that long), so it is optional.
    await assert.rejects(
      slow,
      /^Error: sleeper: not ready after 300 ms; its output ends:\n(still loading\n)?$/,
    );
  });

  it("reads tbench-server's addresses from its startup lines, once every front end asked for started", () => {
    const http = "I1203 Started HTTPService at 127.0.0.1:40001\n";
    const grpc = "I1203 Started GRPCInferenceService at 127.0.0.1:40002\n";
    const metrics = "I1203 Started Metrics Service at 127.0.0.1:40003\n";
    const none = { grpc: false, metrics: false };
    assert.equal(parseStartupLines("I1203 loading 'simple'\n", none), undefined);
    assert.deepEqual(parseStartupLines(http, none), {
      httpUrl: "http://127.0.0.1:40001",
      grpcAddress: undefined,
      metricsUrl: undefined,
    });
    assert.equal(parseStartupLines(http, { grpc: true, metrics: false }), undefined);
    assert.deepEqual(parseStartupLines(grpc + metrics + http, { grpc: true, metrics: true }), {
      httpUrl: "http://127.0.0.1:40001",
      grpcAddress: "127.0.0.1:40002",
      metricsUrl: "http://127.0.0.1:40003/metrics",
    });
    assert.equal(
      parseStartupLines("Started HTTPService at 127.0.0.1:443 (HTTPS)\n", none)?.httpUrl,
      "https://127.0.0.1:443",
    );
    assert.deepEqual(tbenchServerCommand("source", "/tree/").slice(-1), [
      "/tree/packages/server/src/cli/main.ts",
    ]);
    assert.match(tbenchServerCommand()[0]!, /packages\/server\/bin\/tbench-server\.mjs$/);
  });
});
