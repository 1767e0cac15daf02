import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { sourceNodeArgs } from "../../../../scripts/testing/source-node.js";
import { startTuneServer, type TuneServer } from "../testing/tune-server.js";

const MAIN = fileURLToPath(new URL("../cli/main.ts", import.meta.url));

// The tbench command in a child process, signalled as a terminal or a process manager would.
describe("tbench tune: signals", { timeout: 60_000 }, () => {
  let server: TuneServer;
  before(async () => {
    server = await startTuneServer();
  });
  after(() => server.close());

  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    it(`${signal} mid-tune: the sweep stops, the original config is restored, exit ${code}`, async () => {
      const original = await server.client.modelConfig("heavy");
      const child = spawn(
        process.execPath,
        [
          ...sourceNodeArgs(MAIN),
          "tune",
          "-m",
          "heavy",
          "-u",
          server.server.httpUrl,
          "--batching",
          "off",
          "--instance-count",
          "1,2",
          "--latency-budget",
          "p95:1s",
          "-p",
          "1000",
          "--concurrency",
          "1,2,4,8",
        ],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => {
        stdout += d.toString();
      });
      child.stderr.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
      // Wait until a candidate is loaded: the server's config is no longer the original.
      while (isDeepStrictEqual(await server.client.modelConfig("heavy"), original)) {
        if (child.exitCode !== null) assert.fail(`tune exited early: ${stderr}`);
        await sleep(50);
      }
      child.kill(signal);
      assert.equal(await exited, code, stderr);
      assert.match(stderr, /Interrupted: stopping the sweep, then restoring the original config of 'heavy'/);
      assert.match(stdout, /Restored the original config of 'heavy'/);
      assert.deepEqual(await server.client.modelConfig("heavy"), original);
    });
  }
});
