/**
 * close() while requests are in flight: each of them is answered with `Connection: close`, and every
 * request that arrives from then on, on a kept-alive connection that was already open as on a new one, is
 * answered 503 with `Connection: close`, so clients move to another server instead of sending on a
 * connection about to go, and clients that keep sending cannot hold the drain open. Ordering only, no
 * timers: the fake core holds the in-flight infers, and a request whose body the test has not finished
 * (`Expect: 100-continue` says the server has it) stays in flight until the test sends the rest.
 */
import assert from "node:assert/strict";
import { Agent, type ClientRequest, type IncomingMessage, request } from "node:http";
import { connect, type Socket } from "node:net";
import { describe, test } from "node:test";
import { silentLogger } from "../core/logger.js";
import { createFakeCore } from "../testing/fake-core.js";
import { rawRequest } from "../testing/raw-http-client.js";
import { createHttpFrontEnd, SHUTTING_DOWN_MESSAGE } from "./http-server.js";

const LIVE = "GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n";

/** A raw keep-alive connection: send bytes, read one whole answer (headers and Content-Length body). */
interface RawConnection {
  ask(request: string): Promise<{ head: string; body: string }>;
  /** Resolves when the server closes the connection. */
  readonly ended: Promise<void>;
  readonly socket: Socket;
}

function rawConnection(port: number): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let buffered = Buffer.alloc(0);
    let waiting: (() => void) | undefined;
    socket.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      waiting?.();
    });
    const ended = new Promise<void>((done) => socket.once("end", done));
    const answer = (): { head: string; body: string } | undefined => {
      const end = buffered.indexOf("\r\n\r\n");
      if (end < 0) return undefined;
      const head = buffered.subarray(0, end).toString("latin1");
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffered.length < end + 4 + length) return undefined;
      const body = buffered.subarray(end + 4, end + 4 + length).toString("utf8");
      buffered = buffered.subarray(end + 4 + length);
      return { head, body };
    };
    socket.once("error", reject);
    socket.once("connect", () =>
      resolve({
        socket,
        ended,
        ask(request) {
          socket.write(request);
          return new Promise((done, fail) => {
            const check = () => {
              const got = answer();
              if (got !== undefined) {
                waiting = undefined;
                done(got);
              }
            };
            waiting = check;
            socket.once("close", () => fail(new Error("connection closed before the whole answer")));
            check();
          });
        },
      }),
    );
  });
}

const connectionHeader = (head: string) => /\r\nconnection: *([^\r]*)/i.exec(head)?.[1]?.toLowerCase();

const INFER_BODY = JSON.stringify({
  inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 1], data: [1] }],
});
const CLIENTS = 4;
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** An answer as a client saw it, or the code of the error it got instead (`ECONNRESET`: socket hang up). */
type Outcome = { status: number; connection: string | undefined; body: string } | string;

function outcomeOf(req: ClientRequest): Promise<Outcome> {
  return new Promise((resolve) => {
    req.on("response", (res: IncomingMessage) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
      res.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });
    req.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

/** One request through `agent`. */
function ask(agent: Agent, url: string, path: string, body?: string): Promise<Outcome> {
  const req = request(`${url}${path}`, { method: body === undefined ? "GET" : "POST", agent });
  const outcome = outcomeOf(req);
  req.end(body);
  return outcome;
}

/** Connects until a connection is refused (those accepted are closed at once); false after 10,000 tries. */
async function untilRefused(port: number): Promise<boolean> {
  for (let i = 0; i < 10_000; i++) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(false);
      });
      socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"));
    });
    if (refused) return true;
  }
  return false;
}

/**
 * A repository index request whose body is held back: resolves once the server has it (its `100 Continue`)
 * or the request failed; `finish()` sends the body.
 */
async function heldRequest(
  agent: Agent,
  url: string,
): Promise<{ finish(): void; outcome: Promise<Outcome> }> {
  const req = request(`${url}/v2/repository/index`, {
    method: "POST",
    agent,
    headers: { "content-type": "application/json", "content-length": 2, expect: "100-continue" },
  });
  const outcome = outcomeOf(req);
  req.flushHeaders();
  await Promise.race([new Promise((resolve) => req.once("continue", resolve)), outcome]);
  return { finish: () => req.end("{}"), outcome };
}

describe("HTTP front end: close() with a request in flight", { timeout: 30_000 }, () => {
  test("during close(), a request on a kept-alive connection gets 503 and Connection: close; a new one is refused", async () => {
    const core = createFakeCore({ holdInfer: true });
    const server = await createHttpFrontEnd({
      core,
      port: 0,
      address: "127.0.0.1",
      maxInputSize: 1 << 20,
      logger: silentLogger,
    });
    const open: Socket[] = [];
    try {
      const kept = await rawConnection(server.port);
      open.push(kept.socket);
      const before = await kept.ask(LIVE);
      assert.match(before.head, /^HTTP\/1\.1 200 /);
      assert.equal(connectionHeader(before.head), "keep-alive", "before close(): kept alive");

      const body = JSON.stringify({
        inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 1], data: [1] }],
      });
      const inFlight = rawRequest(server.url, "/v2/models/identity_int32/infer", { method: "POST", body });
      await core.waitForHeld(1);
      const closing = server.close();

      // The connection opened before close() asks again: refused, told to close, then closed.
      const during = await kept.ask(LIVE);
      assert.match(during.head, /^HTTP\/1\.1 503 /);
      assert.deepEqual(JSON.parse(during.body), { error: SHUTTING_DOWN_MESSAGE });
      assert.equal(
        connectionHeader(during.head),
        "close",
        "an answer during close() on a kept-alive connection",
      );
      await kept.ended;

      // New connections are refused while the request is still in flight (once the backlog is taken).
      assert.ok(await untilRefused(server.port), "a new connection refused during close()");

      core.release();
      assert.equal((await inFlight).status, 200);
      await closing;
      await assert.rejects(rawRequest(server.url, "/v2/health/live"));
    } finally {
      core.release();
      for (const socket of open) socket.destroy();
      await server.close();
    }
  });
  test("keep-alive clients in flight get Connection: close, and their next request is refused cleanly: no hang up", async () => {
    const core = createFakeCore({ holdInfer: true });
    const server = await createHttpFrontEnd({
      core,
      port: 0,
      address: "127.0.0.1",
      maxInputSize: 1 << 20,
      logger: silentLogger,
    });
    const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
    try {
      // Each client's connection is kept alive by a first answer; then an infer is in flight on each.
      for (const answer of await Promise.all(
        range(CLIENTS).map(() => ask(agent, server.url, "/v2/health/live")),
      ))
        assert.deepEqual(answer, { status: 200, connection: "keep-alive", body: "" });
      const infers = range(CLIENTS).map(() =>
        ask(agent, server.url, "/v2/models/identity_int32/infer", INFER_BODY),
      );
      await core.waitForHeld(CLIENTS);
      const closing = server.close();
      const refused = await untilRefused(server.port);
      core.release();
      for (const answer of await Promise.all(infers)) {
        assert.ok(typeof answer !== "string", `an infer in flight got ${answer as string}`);
        assert.equal(answer.status, 200);
        assert.equal(
          answer.connection,
          "close",
          "an answer in flight when close() began says Connection: close",
        );
      }
      assert.ok(refused, "new connections are refused during close()");
      // Their next request goes on a new connection (the agent does not reuse one told to close), refused.
      for (const answer of await Promise.all(
        range(CLIENTS).map(() => ask(agent, server.url, "/v2/health/live")),
      ))
        assert.equal(answer, "ECONNREFUSED");
      await closing;
    } finally {
      core.release();
      agent.destroy();
      await server.close();
    }
  });

  test("a client that keeps sending during close() does not hold the drain: close() resolves while it sends", async () => {
    const core = createFakeCore({ holdInfer: true });
    const server = await createHttpFrontEnd({
      core,
      port: 0,
      address: "127.0.0.1",
      maxInputSize: 1 << 20,
      logger: silentLogger,
      closeGraceMs: 60_000,
    });
    const agent = new Agent({ keepAlive: true });
    /** Answers the client takes at most (a count, not a time: before the fix the drain never ended first). */
    const MAX_ANSWERS = 500;
    /** Rounds sent during the drain before the work it waits for is done. */
    const RELEASE_AFTER = 20;
    try {
      const infer = ask(agent, server.url, "/v2/models/identity_int32/infer", INFER_BODY);
      await core.waitForHeld(1);
      let closed = false;
      const closing = server.close().then(() => {
        closed = true;
      });
      // The steady client: the next request is sent, and the server has it, before the previous one's body
      // goes, so the server is never without a request from it.
      const outcomes = new Map<string, number>();
      const count = (outcome: Outcome) => {
        const key = typeof outcome === "string" ? outcome : `${outcome.status} ${outcome.connection}`;
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      };
      let previous = await heldRequest(agent, server.url);
      let answers = 0;
      let rounds = 0;
      while (!closed && answers < MAX_ANSWERS) {
        if (++rounds === RELEASE_AFTER) core.release();
        const next = await heldRequest(agent, server.url);
        previous.finish();
        const outcome = await previous.outcome;
        count(outcome);
        if (typeof outcome !== "string") answers++;
        previous = next;
      }
      const stillSending = !closed;
      previous.finish();
      count(await previous.outcome);
      await closing;
      assert.ok(!stillSending, `close() resolved only once the client stopped (${answers} answers)`);
      assert.ok(typeof (await infer) !== "string");
      // Every answer during the drain said Connection: close; the port, closed, refused the rest. This client
      // is always connecting, so the one connection waiting in the backlog as the port closes is reset.
      for (const key of outcomes.keys())
        assert.ok(["200 close", "503 close", "ECONNREFUSED"].includes(key) || key === "ECONNRESET", key);
      assert.ok((outcomes.get("ECONNRESET") ?? 0) <= 1, JSON.stringify([...outcomes]));
    } finally {
      core.release();
      agent.destroy();
      await server.close();
    }
  });
});
