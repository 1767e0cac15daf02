/**
 * `--http-thread-count 2`: the same answers as one thread, byte for byte, on every endpoint; a graceful
 * close that answers what a front-end thread has in flight; a client disconnect on a front-end thread's
 * connection that cancels its core request. Which thread serves a connection is the kernel's choice, so a
 * request is pinned on the front-end thread without timing: this (main) thread blocks in Atomics.wait while
 * a client thread connects, and only the other thread can accept and answer (a 404 needs no core); the
 * request sent after it on that kept-alive connection is then the front-end thread's too.
 */
import assert from "node:assert/strict";
import { closeSync, openSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { Worker } from "node:worker_threads";
import { gzipSync } from "node:zlib";
import { createTestCertificates } from "../../../../../scripts/testing/tls-certificates.js";
import { type RunningServer, startServer } from "../../server.js";
import { createFakeCore } from "../../testing/fake-core.js";
import { binaryBody, type RawResponse, rawRequest } from "../../testing/raw-http-client.js";
import { createRecordingLogger } from "../../testing/test-fixtures.js";
import { dupListeningSocket } from "./listening-socket-dup.js";

const REPOSITORY = new URL("../../../../../examples/models", import.meta.url).pathname;
const RESTRICTED = { trace: { key: "tbench-admin", value: "yes" } } as const;

/** One request of the battery: method, path, headers, body. */
type Ask = readonly [method: string, path: string, headers?: Record<string, string | number>, body?: Buffer];

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const simple = (n: number) => ({
  inputs: [
    { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i * n) },
    { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: Array(16).fill(n) },
  ],
});
const BIG = new Float32Array(40_000).map((_, i) => i / 7); // 160 kB: crosses threads by transfer
const binary = binaryBody(
  {
    inputs: [
      {
        name: "INPUT0",
        datatype: "FP32",
        shape: [1, BIG.length],
        parameters: { binary_data_size: BIG.byteLength },
      },
    ],
    outputs: [{ name: "OUTPUT0", parameters: { binary_data: true } }],
  },
  [new Uint8Array(BIG.buffer)],
);
const INFER = "/v2/models/simple/infer";

/** Every endpoint, its errors included. */
const BATTERY: readonly Ask[] = [
  ["GET", "/v2/health/live"],
  ["GET", "/v2/health/ready"],
  ["GET", "/v2"],
  ["GET", "/v2/models/simple"],
  ["GET", "/v2/models/simple/versions/1"],
  ["GET", "/v2/models/simple/versions/7"],
  ["GET", "/v2/models/nope"],
  ["GET", "/v2/models/simple/ready"],
  ["GET", "/v2/models/nope/ready"],
  ["GET", "/v2/models/simple/config"],
  ["GET", "/v2/models/nope/config"],
  ["GET", "/v2/models/identity_int32/stats"],
  ["POST", "/v2/repository/index", {}, Buffer.alloc(0)],
  ["POST", "/v2/repository/index", {}, json({ ready: true })],
  ["POST", "/v2/repository/index", {}, Buffer.from("{")],
  ["POST", "/v2/repository/models/nope/load"],
  ["POST", "/v2/repository/models/nope/unload"],
  ["POST", "/v2/repository/models/simple/load", {}, json({ parameters: { other: "1" } })],
  ["POST", INFER, {}, json(simple(3))],
  ["POST", INFER, { "Accept-Encoding": "gzip" }, json(simple(4))],
  ["POST", INFER, { "Content-Encoding": "gzip" }, gzipSync(json(simple(5)))],
  ["POST", INFER, {}, json({ inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 16], data: [1] }] })],
  ["POST", INFER, {}, Buffer.from("{not json")],
  [
    "POST",
    "/v2/models/identity_fp32/infer",
    { "Inference-Header-Content-Length": binary.headerLength },
    binary.body,
  ],
  [
    "POST",
    "/v2/models/identity_bytes/infer",
    {},
    json({ inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [1, 2], data: ["a", "bc"] }] }),
  ],
  ["POST", "/v2/models/nope/infer", {}, json(simple(1))],
  ["GET", INFER],
  ["GET", "/v2/nope"],
  ["GET", "/v2/trace/setting"],
  ["GET", "/v2/trace/setting", { "tbench-admin": "yes" }],
  ["GET", "/v2/logging"],
  ["GET", "/v2/systemsharedmemory/status"],
  ["POST", "/v2/systemsharedmemory/region/r/register", {}, json({})],
  ["GET", "/v2/models/stats"],
  ["GET", "/v2/models/identity_fp32/stats"],
];

/** An answer as compared: status, headers but Date, body with statistics' durations and times zeroed. */
function comparable(response: RawResponse): unknown {
  const { date: _date, ...headers } = response.headers;
  const text = response.body.toString("latin1");
  if (!text.includes('"ns":')) return { status: response.status, headers, body: text };
  // Durations differ between any two runs, and with them the length.
  const { "content-length": _length, ...rest } = headers;
  return {
    status: response.status,
    headers: rest,
    body: text.replace(/"(ns|last_inference)":\d+/g, '"$1":0'),
  };
}

/** Sends the battery `rounds` times, each request on a fresh connection (rawRequest: Connection: close). */
async function runBattery(url: string, rounds: number): Promise<unknown[]> {
  const answers: unknown[] = [];
  for (let round = 0; round < rounds; round++)
    for (const [method, path, headers, body] of BATTERY)
      answers.push(
        comparable(
          await rawRequest(url, path, { method, ...(headers ? { headers } : {}), ...(body ? { body } : {}) }),
        ),
      );
  return answers;
}

/**
 * A client thread's kept-alive connection: sends `first` and, once answered, `second`; posts every later
 * answer (or "closed") and destroys the socket when told "disconnect".
 */
const CLIENT = `
const { workerData, parentPort } = require("node:worker_threads");
const net = require("node:net");
const flag = new Int32Array(workerData.flag);
const socket =
  workerData.ca === undefined
    ? net.connect(workerData.port, "127.0.0.1")
    : require("node:tls").connect({ port: Number(workerData.port), host: "127.0.0.1", ca: workerData.ca });
let buffered = Buffer.alloc(0);
let answered = 0;
const take = () => {
  const end = buffered.indexOf("\\r\\n\\r\\n");
  if (end < 0) return undefined;
  const head = buffered.subarray(0, end).toString("latin1");
  const length = Number(/\\r\\ncontent-length: *(\\d+)/i.exec(head)?.[1] ?? 0);
  if (buffered.length < end + 4 + length) return undefined;
  const body = buffered.subarray(end + 4, end + 4 + length).toString("utf8");
  buffered = buffered.subarray(end + 4 + length);
  return { head, body };
};
socket.on("data", (chunk) => {
  buffered = Buffer.concat([buffered, chunk]);
  for (let answer = take(); answer !== undefined; answer = take()) {
    if (++answered > 1) parentPort.postMessage(answer);
    else socket.write(workerData.second, () => { Atomics.store(flag, 0, 1); Atomics.notify(flag, 0); });
  }
});
socket.on("error", () => {});
socket.on("close", () => { parentPort.postMessage("closed"); parentPort.close(); });
parentPort.on("message", (message) => { if (message === "disconnect") socket.destroy(); });
socket.write(workerData.first);
`;

type ClientMessage = { head: string; body: string } | "closed";

/** Opens a connection that the front-end thread (not this one) accepts, then sends `second` on it. */
function pinnedToFrontEndThread(url: string, second: string, ca?: Buffer) {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const first = "GET /v2/pinned HTTP/1.1\r\nHost: x\r\n\r\n";
  const client = new Worker(CLIENT, {
    eval: true,
    workerData: { port: new URL(url).port, flag: flag.buffer, first, second, ca },
  });
  // This thread cannot accept while it waits here: a wake-up means the other thread answered the 404.
  const woken = Atomics.wait(flag, 0, 0, 20_000);
  const messages: ClientMessage[] = [];
  let notify: (() => void) | undefined;
  client.on("message", (message: ClientMessage) => {
    messages.push(message);
    notify?.();
  });
  const next = () =>
    new Promise<ClientMessage>((resolve) => {
      const check = () => {
        const message = messages.shift();
        if (message !== undefined) resolve(message);
        else notify = check;
      };
      check();
    });
  const exited = new Promise<void>((resolve) => client.once("exit", () => resolve()));
  return { woken, client, next, exited };
}

const inferRequest = (body: string) =>
  `POST ${INFER} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

describe("HTTP front end in 2 threads", { timeout: 60_000 }, () => {
  const servers: RunningServer[] = [];
  const logs = [createRecordingLogger(), createRecordingLogger()];
  before(async () => {
    for (const [i, threads] of [1, 2].entries())
      servers.push(
        await startServer({
          modelRepository: REPOSITORY,
          httpPort: 0,
          metricsPort: false,
          modelControlMode: "explicit",
          loadModels: ["simple", "identity_fp32", "identity_bytes", "identity_int32"],
          httpRestrictedApis: RESTRICTED,
          httpThreadCount: threads,
          logger: { ...logs[i]!, verbose: logs[i]!.verbose },
        }),
      );
  });
  after(async () => {
    for (const server of servers) await server.close();
  });

  test("every endpoint answers as with one thread, status, headers and bytes, and both threads serve", async () => {
    const [one, two] = servers as [RunningServer, RunningServer];
    const pinned = pinnedToFrontEndThread(two.httpUrl, inferRequest(JSON.stringify(simple(2))));
    assert.equal(pinned.woken, "ok", "the front-end thread answered while the main thread was blocked");
    const inferred = await pinned.next();
    assert.ok(inferred !== "closed" && inferred.head.startsWith("HTTP/1.1 200"), JSON.stringify(inferred));
    const direct = await rawRequest(one.httpUrl, INFER, { method: "POST", body: JSON.stringify(simple(2)) });
    assert.equal(inferred.body, direct.body.toString("utf8"));
    pinned.client.postMessage("disconnect");
    await pinned.exited;

    const expected = await runBattery(one.httpUrl, 2);
    const got = await runBattery(two.httpUrl, 2);
    for (const [i, answer] of got.entries())
      assert.deepEqual(answer, expected[i], `${BATTERY[i % BATTERY.length]!.slice(0, 2).join(" ")}`);

    await two.close();
    const counts = logs[1]!.lines.find((line) => line.includes("requests served by each"));
    const served = /each: (\d+), (\d+)$/.exec(counts ?? "");
    assert.ok(served !== null, counts);
    assert.ok(Number(served[1]) > 0 && Number(served[2]) > 0, counts);
    assert.equal(Number(served[1]) + Number(served[2]), 2 * BATTERY.length + 2);
    // The front-end thread's log lines reach the main thread's logger.
    assert.ok(logs[1]!.lines.includes("V HTTP GET /v2/pinned: 404 Not Found"));
  });
});

describe("HTTP front end in 2 threads: lifetimes", { timeout: 60_000 }, () => {
  const start = async (core: ReturnType<typeof createFakeCore>) =>
    startServer({
      core,
      modelRepository: REPOSITORY,
      httpPort: 0,
      metricsPort: false,
      httpThreadCount: 2,
      logger: createRecordingLogger(),
    });

  test("close() answers the request the front-end thread has in flight, then the thread ends", async () => {
    const core = createFakeCore({ holdInfer: true });
    const server = await start(core);
    const pinned = pinnedToFrontEndThread(server.httpUrl, inferRequest(JSON.stringify(simple(6))));
    assert.equal(pinned.woken, "ok");
    await core.waitForHeld(1);
    const closed = server.close();
    core.release();
    const answer = await pinned.next();
    assert.ok(answer !== "closed", "answered before the connection closed");
    assert.match(answer.head, /^HTTP\/1\.1 200 OK\r\n/);
    // Told to close, so the client does not send its next request into the connection as it closes.
    assert.match(answer.head, /\r\nConnection: close\r\n/i);
    assert.deepEqual(
      JSON.parse(answer.body).outputs[0].data,
      simple(6)
        .inputs.map((t) => t.data)
        .reduce((a, b) => a.map((x, i) => x + b[i])),
    );
    // As with one thread: a request begun before close() is answered, then its connection is closed.
    assert.equal(await pinned.next(), "closed");
    await closed;
    await pinned.exited;
    await assert.rejects(rawRequest(server.httpUrl, "/v2/health/live"), /ECONNREFUSED/);
  });

  test("HTTPS: the front-end thread serves with the same certificate", async () => {
    const certs = await createTestCertificates();
    const core = createFakeCore();
    const server = await startServer({
      core,
      modelRepository: REPOSITORY,
      httpPort: 0,
      metricsPort: false,
      httpThreadCount: 2,
      httpTls: { cert: certs.pem("server.pem"), key: certs.pem("server.key") },
      logger: createRecordingLogger(),
    });
    try {
      const pinned = pinnedToFrontEndThread(
        server.httpUrl,
        inferRequest(JSON.stringify(simple(8))),
        certs.pem("ca.pem"),
      );
      assert.equal(
        pinned.woken,
        "ok",
        "the front-end thread answered over TLS while the main thread was blocked",
      );
      const answer = await pinned.next();
      assert.ok(answer !== "closed" && answer.head.startsWith("HTTP/1.1 200"), JSON.stringify(answer));
      pinned.client.postMessage("disconnect");
      await pinned.exited;
    } finally {
      await server.close();
      certs.remove();
    }
  });

  test("a client that goes away cancels its request in the core", async () => {
    const core = createFakeCore({ holdInfer: true });
    const server = await start(core);
    try {
      const pinned = pinnedToFrontEndThread(server.httpUrl, inferRequest(JSON.stringify(simple(7))));
      assert.equal(pinned.woken, "ok");
      await core.waitForHeld(1);
      pinned.client.postMessage("disconnect");
      await core.waitForAborted(1);
      assert.equal(core.aborted, 1);
      await pinned.exited;
    } finally {
      await server.close();
    }
  });
});

describe("HTTP front end threads: refusals", () => {
  test("a thread count out of range and an fd that is not a listening socket are refused, saying why", async () => {
    const core = createFakeCore();
    for (const httpThreadCount of [0, 65, 1.5])
      await assert.rejects(
        startServer({ core, modelRepository: REPOSITORY, httpPort: 0, metricsPort: false, httpThreadCount }),
        new RangeError(`threadCount must be a whole number from 1 to 64, got ${httpThreadCount}`),
      );
    const fd = openSync("/dev/null", "r");
    try {
      await assert.rejects(dupListeningSocket(fd), {
        message: `cannot dup the HTTP listening socket (fd ${fd}): listen EINVAL: invalid argument`,
      });
    } finally {
      closeSync(fd);
    }
  });
});
