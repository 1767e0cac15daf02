/**
 * close() while a request is in flight: the endpoint keeps answering, and every answer it gives from then on
 * says `Connection: close`, on a kept-alive connection that was already open as on a new one, so clients
 * move to another server instead of sending on a connection about to go. Ordering only, no timers: the fake
 * core holds the in-flight infer until the test releases it.
 */
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { describe, test } from "node:test";
import { silentLogger } from "../core/logger.js";
import { createFakeCore } from "../testing/fake-core.js";
import { rawRequest } from "../testing/raw-http-client.js";
import { createHttpFrontEnd } from "./http-server.js";

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

describe("HTTP front end: close() with a request in flight", { timeout: 30_000 }, () => {
  test("busy and new connections are told Connection: close while the in-flight request finishes", async () => {
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

      // The connection opened before close() asks again: answered, told to close, then closed.
      const during = await kept.ask(LIVE);
      assert.match(during.head, /^HTTP\/1\.1 200 /);
      assert.equal(
        connectionHeader(during.head),
        "close",
        "an answer during close() on a kept-alive connection",
      );
      await kept.ended;

      // A new connection is still accepted while the request is in flight, and told the same.
      const fresh = await rawConnection(server.port);
      open.push(fresh.socket);
      const answered = await fresh.ask(LIVE);
      assert.match(answered.head, /^HTTP\/1\.1 200 /);
      assert.equal(connectionHeader(answered.head), "close", "an answer during close() on a new connection");
      await fresh.ended;

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
});
