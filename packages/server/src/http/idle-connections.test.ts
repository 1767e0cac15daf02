/**
 * Idle and slowloris connections beside real traffic (issue 14, "held well, keep it so"): 1,000 connections
 * that never send a byte and 100 that trickle a request line or a header one byte at a time, never ending
 * the header block, while a keep-alive client sends 200 infer requests on `simple`. Every infer is answered
 * 200 with its own sums; every slow and idle connection gets the 408 JSON answer of
 * --http-header-timeout-ms and is closed (node:http's headersTimeout counts from the connection's start, so
 * a connection that sends nothing is cut like a slow one); and the server ends up holding the sockets it
 * held before. Nothing here asserts how long anything took.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { connect, type Socket } from "node:net";
import { after, before, describe, test } from "node:test";
import { silentLogger } from "../core/logger.js";
import { type RunningServer, startServer } from "../server.js";
import { createFixtureRepository, type FixtureRepository } from "../testing/test-fixtures.js";

const IDLE = 1000;
const SLOW = 100;
const INFERS = 200;
const IN_FLIGHT = 8;
/** Long enough for the infers to run while most slow connections are still held (not asserted). */
const HEADER_TIMEOUT_MS = 1500;
const EXPECTED_408 = {
  error: `request headers not received within ${HEADER_TIMEOUT_MS} ms (--http-header-timeout-ms)`,
};

let repository: FixtureRepository;
let server: RunningServer;
let port: number;

before(async () => {
  repository = createFixtureRepository({ simple: { config: "bundled" } });
  server = await startServer({
    modelRepository: repository.dir,
    httpPort: 0,
    metricsPort: false,
    logger: silentLogger,
    httpHeaderTimeoutMs: HEADER_TIMEOUT_MS,
  });
  port = Number(new URL(server.httpUrl).port);
});
after(async () => {
  await server.close();
  repository.remove();
});

/**
 * Sockets the server process still holds on its HTTP port, from the kernel's table: local port is the
 * server's, not the listener, and an inode (a closed socket lingering in FIN_WAIT/TIME_WAIT has none). The
 * test's own client ends have ephemeral local ports, so they are not counted.
 */
function serverSockets(): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  let count = 0;
  for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 10) continue;
    const [, local, , state, , , , , , inode] = fields;
    if (local?.endsWith(`:${hexPort}`) && state !== "0A" && inode !== "0") count++;
  }
  return count;
}

/** A connected socket and everything the server sends on it until it closes the connection. */
function open(): Promise<{ socket: Socket; closed: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    const closed = new Promise<string>((done) => {
      socket.once("close", () => done(Buffer.concat(chunks).toString("latin1")));
    });
    socket.once("connect", () => {
      socket.off("error", reject).on("error", () => {}); // a reset shows as a wrong answer below
      resolve({ socket, closed });
    });
    socket.once("error", reject);
  });
}

function parseAnswer(text: string): { statusLine: string; body: unknown } {
  const end = text.indexOf("\r\n\r\n");
  assert.ok(end > 0, `not an HTTP answer: ${JSON.stringify(text.slice(0, 200))}`);
  return { statusLine: text.slice(0, text.indexOf("\r\n")), body: JSON.parse(text.slice(end + 4)) };
}

/** One infer on a kept-alive connection; resolves with the status, the outputs and the socket used. */
function infer(
  agent: Agent,
  a: number[],
  b: number[],
): Promise<{ status: number; outputs: Record<string, number[]>; socket: Socket }> {
  const body = JSON.stringify({
    inputs: [
      { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: a },
      { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: b },
    ],
  });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: "/v2/models/simple/infer",
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const json = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
            outputs?: { name: string; data: number[] }[];
          };
          const outputs = Object.fromEntries((json.outputs ?? []).map((o) => [o.name, o.data]));
          resolve({ status: res.statusCode ?? 0, outputs, socket: req.socket! });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("idle and slowloris connections", { timeout: 60_000 }, () => {
  test("are cut with 408 at the header timeout while keep-alive infers are all served", async (t) => {
    const before = serverSockets();
    const idle = await Promise.all(Array.from({ length: IDLE }, () => open()));
    const slow = await Promise.all(Array.from({ length: SLOW }, () => open()));
    // Half trickle a request line that never ends, half a header that never ends; one byte per connection
    // every 50 ms, until the server closes it.
    slow.forEach(({ socket }, i) => {
      socket.write(
        i % 2 === 0 ? "GET /v2/health/" : "POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nX-Slow: ",
      );
    });
    const trickle = setInterval(() => {
      slow.forEach(({ socket }, i) => {
        if (!socket.destroyed) socket.write(i % 2 === 0 ? "a" : "b");
      });
    }, 50);
    t.after(() => clearInterval(trickle));
    t.diagnostic(`server held ${serverSockets() - before} connections when the infers started`);

    const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
    const used = new Set<Socket>();
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        for (let i = next++; i < INFERS; i = next++) {
          const a = Array.from({ length: 16 }, (_, k) => i * 16 + k);
          const b = Array.from({ length: 16 }, (_, k) => k - i);
          const { status, outputs, socket } = await infer(agent, a, b);
          used.add(socket);
          assert.equal(status, 200, `infer ${i}`);
          assert.deepEqual(
            outputs["OUTPUT0"],
            a.map((v, k) => v + b[k]!),
            `infer ${i} OUTPUT0`,
          );
          assert.deepEqual(
            outputs["OUTPUT1"],
            a.map((v, k) => v - b[k]!),
            `infer ${i} OUTPUT1`,
          );
        }
      }),
    );
    assert.ok(used.size <= IN_FLIGHT, `${used.size} connections for ${IN_FLIGHT} callers: not kept alive`);
    agent.destroy();

    const slowAnswers = await Promise.all(slow.map(({ closed }) => closed));
    clearInterval(trickle);
    for (const [i, text] of slowAnswers.entries()) {
      const { statusLine, body } = parseAnswer(text);
      assert.equal(statusLine, "HTTP/1.1 408 Request Timeout", `slowloris ${i}`);
      assert.deepEqual(body, EXPECTED_408, `slowloris ${i}`);
    }
    // Connections that never sent a byte: node:http's header timer runs from the connection's start.
    const idleAnswers = await Promise.all(idle.map(({ closed }) => closed));
    for (const [i, text] of idleAnswers.entries()) {
      const { statusLine, body } = parseAnswer(text);
      assert.equal(statusLine, "HTTP/1.1 408 Request Timeout", `idle ${i}`);
      assert.deepEqual(body, EXPECTED_408, `idle ${i}`);
    }

    // Every client end is closed; the server releases its ends as it sees the closes (a state, polled; the
    // deadline only turns a leak into a failure that says so).
    const deadline = Date.now() + 10_000;
    while (serverSockets() !== before && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(serverSockets(), before);
  });
});
