// One client spreading calls over two real tbench-servers with grpc-js's own resolver and round_robin
// balancer (what a Kubernetes headless Service gives: one name, several addresses). Loopback has one
// address per port here, so the two replicas are named by grpc-js's ipv4: target (two addresses, one name
// resolution, the same balancer as dns:///); dns:/// itself is checked against one server.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type RunningServer, silentLogger, startServer } from "@tbench/server";
import type { InferInput } from "../tensor-types.js";
import { expectTcpHandlesBackTo, openTcpHandles } from "../testing/leak-check.js";
import { createGrpcClient } from "./grpc-client.js";

const REPOSITORY = new URL("../../../../examples/models", import.meta.url).pathname;
const servers: RunningServer[] = [];

before(async () => {
  for (let i = 0; i < 2; i++) {
    servers.push(
      await startServer({
        modelRepository: REPOSITORY,
        httpPort: 0,
        httpAddress: "127.0.0.1",
        metricsPort: false,
        grpcPort: 0,
        modelControlMode: "explicit",
        loadModels: ["simple"],
        logger: silentLogger,
      }),
    );
  }
});

after(async () => {
  for (const s of servers) await s.close();
});

const inputs: InferInput[] = [
  { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: new Int32Array(16).fill(2) },
  { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: new Int32Array(16).fill(1) },
];

const portOf = (s: RunningServer) => s.grpcAddress!.split(":").pop()!;

/** Successful inferences of `simple` on one server, read from its own statistics. */
async function served(server: RunningServer): Promise<number> {
  const c = createGrpcClient({ url: server.grpcAddress! });
  try {
    return (await c.modelStatistics("simple"))[0]!.inferenceStats.success.count;
  } finally {
    await c.close();
  }
}

test("round_robin over two replicas: both servers' statistics show calls", async () => {
  const before = await Promise.all(servers.map(served));
  const baseline = openTcpHandles();
  const target = `ipv4:${servers.map((s) => `127.0.0.1:${portOf(s)}`).join(",")}`;
  const client = createGrpcClient({ url: target, loadBalancing: "round_robin" });
  // round_robin takes the READY subchannels in turn; the second may still be connecting for the first
  // calls, so calls go in rounds until both servers have seen some (bounded: pick_first never spreads).
  let sent = 0;
  let calls = [0, 0];
  for (let round = 0; round < 50 && !(calls[0]! > 0 && calls[1]! > 0); round++) {
    for (let i = 0; i < 10; i++, sent++) {
      const r = await client.infer("simple", { inputs });
      assert.equal(r.output("OUTPUT0")!.as("INT32")[0], 3);
    }
    const now = await Promise.all(servers.map(served));
    calls = now.map((n, i) => n - before[i]!);
  }
  await client.close();
  await expectTcpHandlesBackTo(baseline);
  assert.equal(calls[0]! + calls[1]!, sent);
  // round_robin picks the ready subchannels in turn; both are used (pick_first would send all 20 to one)
  assert.ok(calls[0]! > 0 && calls[1]! > 0, `calls per server: ${calls}`);
});

test("pick_first (the default) sends every call to one replica", async () => {
  const before = await Promise.all(servers.map(served));
  const target = `ipv4:${servers.map((s) => `127.0.0.1:${portOf(s)}`).join(",")}`;
  const client = createGrpcClient({ url: target });
  for (let i = 0; i < 10; i++) await client.infer("simple", { inputs });
  await client.close();
  const after = await Promise.all(servers.map(served));
  assert.deepEqual(after.map((n, i) => n - before[i]!).sort(), [0, 10]);
});

test("dns:///127.0.0.1:<port> with round_robin", async () => {
  const client = createGrpcClient({
    url: `dns:///127.0.0.1:${portOf(servers[0]!)}`,
    loadBalancing: "round_robin",
  });
  try {
    assert.equal(await client.isModelReady("simple"), true);
    assert.equal((await client.infer("simple", { inputs })).output("OUTPUT1")!.as("INT32")[0], 1);
  } finally {
    await client.close();
  }
});
