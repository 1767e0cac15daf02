// The wire pool against real servers on 127.0.0.1:0 (node:http, and raw net servers for answers node:http
// cannot give): keep-alive reuse counted in sockets, the queue, Connection: close, the Keep-Alive hint, a
// server closing idle or busy sockets, resets, connect failures, aborts, close() and destroy() with requests
// in flight and queued, the diagnostics channels, and that nothing (socket or timer) outlives the pool.
import assert from "node:assert/strict";
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { once } from "node:events";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { type AddressInfo, createServer as createNetServer, type Server, Socket } from "node:net";
import { afterEach, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { ConnectionError, InvalidArgumentError } from "../../errors.js";
import type { ExchangeHandler, ExchangeRequest } from "../exchange.js";
import { createHttpClient } from "../http-client.js";
import { WIRE_CHANNEL_NAMES } from "./wire-diagnostics.js";
import { createWirePool, type WirePool, type WirePoolOptions } from "./wire-pool.js";

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Dispatches `request` and resolves with the answer, or rejects with the pool's (undici-coded) error. */
function send(
  pool: WirePool,
  request: Partial<ExchangeRequest> & { path: string },
  onConnect?: (abort: (error?: Error) => void) => void,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let status = 0;
    const headers: Record<string, string> = {};
    const chunks: Buffer[] = [];
    const handler: ExchangeHandler = {
      onConnect: (abort) => onConnect?.(abort),
      onHeaders(code, raw) {
        status = code;
        for (let i = 0; i < raw.length; i += 2)
          headers[raw[i]!.toString().toLowerCase()] = raw[i + 1]!.toString();
        return true;
      },
      onData: (chunk) => chunks.push(Buffer.from(chunk)) > 0,
      onComplete: () => resolve({ status, headers, body: Buffer.concat(chunks).toString() }),
      onError: reject,
    };
    pool.dispatch({ origin: "http://unused", method: "GET", headers: {}, body: null, ...request }, handler);
  });
}

const code = (expected: string) => (e: unknown) => (e as { code?: string }).code === expected;

/** Open handles of the kinds the pool creates. */
function handles(): { tcp: number; timers: number } {
  const all = process.getActiveResourcesInfo();
  return {
    tcp: all.filter((r) => r === "TCPSocketWrap").length,
    timers: all.filter((r) => r === "Timeout").length,
  };
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A node:http server counting the connections it accepted; `handler` answers. */
async function httpServer(handler: Parameters<typeof createHttpServer>[1]) {
  const server: HttpServer = createHttpServer(handler);
  let connections = 0;
  server.on("connection", () => connections++);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  cleanups.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
  };
}

/** A raw TCP server: `onRequest(socket, index)` is called per request head received, on any connection. */
async function rawServer(onRequest: (socket: Socket, index: number) => void) {
  const sockets = new Set<Socket>();
  let requests = 0;
  const server: Server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    let text = "";
    socket.on("data", (chunk) => {
      text += chunk.toString("latin1");
      for (let end = text.indexOf("\r\n\r\n"); end >= 0; end = text.indexOf("\r\n\r\n")) {
        text = text.slice(end + 4);
        onRequest(socket, requests++);
      }
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  cleanups.push(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sockets };
}

function pool(url: string, options: WirePoolOptions = {}): WirePool {
  const p = createWirePool(url, options);
  cleanups.push(() => p.destroy(null).then(() => undefined));
  return p;
}

describe("requests and keep-alive", () => {
  test("20 requests one after another share one socket; heads and bodies arrive intact", async () => {
    const seen: { method: string; url: string; headers: Record<string, unknown>; body: string }[] = [];
    const s = await httpServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      seen.push({
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      res.end(`answer ${seen.length}`);
    });
    const p = pool(s.url);
    const headers = Object.freeze({ "x-custom": "a b", "content-type": "text/plain" });
    const large = "x".repeat(100_000); // written corked, not copied
    for (let i = 0; i < 20; i++) {
      const body = i === 3 ? large : i % 2 === 0 ? `body ${i}` : null;
      const answer = await send(p, {
        method: i % 2 === 0 ? "POST" : "GET",
        path: `/p?i=${i}`,
        headers,
        body,
      });
      assert.equal(answer.body, `answer ${i + 1}`);
    }
    assert.equal(s.connections(), 1);
    assert.equal(seen[0]!.method, "POST");
    assert.equal(seen[0]!.url, "/p?i=0");
    assert.equal(seen[0]!.body, "body 0");
    assert.equal(seen[0]!.headers["x-custom"], "a b");
    assert.equal(seen[0]!.headers.host, new URL(s.url).host);
    assert.equal(seen[0]!.headers["content-length"], "6");
    assert.equal(seen[1]!.headers["content-length"], undefined); // a GET without a body says nothing
    assert.equal(seen[3]!.body, large);
  });

  test("a body in pieces arrives whole, with their summed Content-Length, small (joined) and large (corked)", async () => {
    const seen: { length: string | undefined; body: string }[] = [];
    const s = await httpServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      seen.push({ length: req.headers["content-length"], body: Buffer.concat(chunks).toString() });
      res.end("ok");
    });
    const p = pool(s.url);
    const big = "y".repeat(70_000);
    for (const pieces of [
      ["{json}", "", "tail"],
      ["{json}", big, "z".repeat(30_000)],
    ]) {
      const body = pieces.map((piece) => Buffer.from(piece));
      assert.equal((await send(p, { method: "POST", path: "/pieces", body })).body, "ok");
    }
    assert.deepEqual(seen, [
      { length: "10", body: "{json}tail" },
      { length: String(6 + 70_000 + 30_000), body: `{json}${big}${"z".repeat(30_000)}` },
    ]);
    assert.equal(s.connections(), 1);
  });

  test("at most `connections` sockets; the rest wait in a FIFO queue", async () => {
    const order: string[] = [];
    const s = await httpServer((req, res) => {
      order.push(req.url!);
      res.end(req.url);
    });
    const p = pool(s.url, { connections: 1 });
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => send(p, { path: `/${i}` })));
    assert.deepEqual(
      answers.map((a) => a.body),
      ["/0", "/1", "/2", "/3", "/4", "/5"],
    );
    assert.deepEqual(order, ["/0", "/1", "/2", "/3", "/4", "/5"]);
    assert.equal(s.connections(), 1);
    const four = pool(s.url, { connections: 4 });
    await Promise.all(Array.from({ length: 12 }, (_, i) => send(four, { path: `/${i}` })));
    assert.ok(s.connections() <= 1 + 4, `${s.connections()} connections`);
  });

  test("Connection: close is honoured: the next request opens a new socket and nobody fails", async () => {
    const s = await httpServer((_req, res) => {
      res.setHeader("connection", "close");
      res.end("bye");
    });
    const p = pool(s.url);
    for (let i = 0; i < 3; i++) assert.equal((await send(p, { path: "/" })).body, "bye");
    assert.equal(s.connections(), 3);
  });

  test("Keep-Alive: timeout=N: a socket is not reused once idle for N s less 2 s", async () => {
    const s = await httpServer((req, res) => {
      res.setHeader("keep-alive", req.url === "/short" ? "timeout=2" : "timeout=3");
      res.end("ok");
    });
    const p = pool(s.url);
    await send(p, { path: "/short" }); // 2 s - 2 s: never idle
    await send(p, { path: "/short" });
    assert.equal(s.connections(), 2);
    await send(p, { path: "/long" }); // 3 s - 2 s: reused within 1 s...
    await send(p, { path: "/long" });
    assert.equal(s.connections(), 3);
    await delay(1100); // ...and not after (the limit is a lower bound on the idle time here)
    await send(p, { path: "/long" });
    assert.equal(s.connections(), 4);
  });

  test("an idle socket the server closed is dropped without failing anyone", async () => {
    const s = await httpServer((_req, res) => res.end("ok"));
    const p = pool(s.url);
    await send(p, { path: "/" });
    s.server.closeIdleConnections();
    while (p.openSockets > 0) await delay(5);
    assert.equal((await send(p, { path: "/" })).body, "ok");
    assert.equal(s.connections(), 2);
  });

  test("a request on a reused socket that the server closes unanswered fails with UND_ERR_SOCKET", async () => {
    const s = await rawServer((socket, index) => {
      if (index === 0) socket.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
      else socket.destroy(); // as a server closing an idle socket just as the request arrives
    });
    const p = pool(s.url);
    assert.equal((await send(p, { path: "/" })).body, "ok");
    await assert.rejects(send(p, { path: "/" }), code("UND_ERR_SOCKET"));
  });
});

describe("bad answers and broken connections", () => {
  test("a malformed answer fails its request and closes its socket; the next request gets a new one", async () => {
    const s = await rawServer((socket, index) => {
      socket.write(
        index === 0 ? "HTTP/1.1 2xx OK\r\n\r\n" : "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
      );
    });
    const p = pool(s.url);
    await assert.rejects(send(p, { path: "/" }), code("HPE_INVALID_STATUS"));
    assert.equal((await send(p, { path: "/" })).body, "ok");
  });

  // Whether the client reads the reset (ECONNRESET) or an EOF first is the kernel's business: the code is the same.
  test("a server reset mid-body and an EOF mid-body: UND_ERR_SOCKET", async () => {
    const s = await rawServer((socket, index) => {
      socket.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part", () => {
        if (index === 0) socket.resetAndDestroy();
        else socket.end();
      });
    });
    const p = pool(s.url);
    await assert.rejects(send(p, { path: "/" }), code("UND_ERR_SOCKET"));
    await assert.rejects(
      send(p, { path: "/" }),
      (e: unknown) => code("UND_ERR_SOCKET")(e) && /other side closed/.test(String(e)),
    );
  });

  test("a body until close is complete when the server closes", async () => {
    const s = await rawServer((socket) => socket.end("HTTP/1.1 200 OK\r\n\r\nall of it"));
    assert.equal((await send(pool(s.url), { path: "/" })).body, "all of it");
  });

  test("connect refused fails every queued request with the socket's error", async () => {
    const server = createNetServer();
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    server.close();
    const p = pool(url, { connections: 1 });
    const results = await Promise.allSettled([send(p, { path: "/a" }), send(p, { path: "/b" })]);
    for (const r of results) assert.ok(r.status === "rejected" && code("ECONNREFUSED")(r.reason));
  });

  test("a connect that never completes: UND_ERR_CONNECT_TIMEOUT (an injected socket that never connects)", async () => {
    const p = pool("http://192.0.2.1:80", { connectTimeoutMs: 30, connect: () => new Socket() });
    await assert.rejects(
      send(p, { path: "/" }),
      (e: unknown) => code("UND_ERR_CONNECT_TIMEOUT")(e) && /30 ms/.test(String(e)),
    );
  });

  test("invalid requests: UND_ERR_INVALID_ARG, nothing sent", async () => {
    const p = pool("http://127.0.0.1:9");
    for (const request of [
      { path: "no-slash" },
      { path: "/a b" },
      { path: "/", headers: { "x-a": "line\r\nbreak" } },
      { path: "/", headers: { "bad name": "v" } },
      { path: "/", headers: { "transfer-encoding": "chunked" } },
      { path: "/", body: 42 as unknown as string },
    ]) {
      await assert.rejects(send(p, request), code("UND_ERR_INVALID_ARG"), JSON.stringify(request));
    }
    assert.equal(p.openSockets, 0);
  });
});

describe("aborts and lifetimes", () => {
  test("abort mid-request ends that socket only; an abort in onConnect writes nothing and keeps it", async () => {
    const s = await rawServer((socket, index) => {
      if (index > 0) socket.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
      // the first request is never answered
    });
    const p = pool(s.url, { connections: 1 });
    let abort: ((e?: Error) => void) | undefined;
    const held = send(p, { path: "/held" }, (a) => {
      abort = a;
    });
    while (s.sockets.size === 0) await delay(5);
    abort!(new Error("changed my mind"));
    await assert.rejects(held, /changed my mind/);
    assert.equal((await send(p, { path: "/next" })).body, "ok");
    await assert.rejects(
      send(p, { path: "/never" }, (a) => a()),
      code("UND_ERR_ABORTED"),
    );
    assert.equal((await send(p, { path: "/after" })).body, "ok");
    assert.equal(p.openSockets, 1);
  });

  test("with other requests in flight a write waits for the loop's turn; aborted meanwhile, nothing is sent", async () => {
    const seen: string[] = [];
    const held: Socket[] = [];
    const s = await rawServer((socket, index) => {
      seen.push(`request ${index}`);
      if (index === 0)
        held.push(socket); // answered at the end
      else socket.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    });
    const p = pool(s.url, { connections: 2 });
    const first = send(p, { path: "/held" });
    while (held.length === 0) await delay(5);
    // On the second socket, with the first request in flight: deferred, then aborted before its turn.
    const aborted = send(p, { path: "/aborted" }, (abort) => queueMicrotask(() => abort()));
    await assert.rejects(aborted, code("UND_ERR_ABORTED"));
    assert.equal((await send(p, { path: "/next" })).body, "ok"); // on the same second socket
    assert.deepEqual(seen, ["request 0", "request 1"]);
    assert.equal(s.sockets.size, 2);
    held[0]!.write("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nheld");
    assert.equal((await first).body, "held");
  });

  test("close(): queued and in-flight requests finish, new ones fail with UND_ERR_CLOSED, no socket or timer is left", async () => {
    const baseline = handles();
    const waiting: Socket[] = [];
    const s = await rawServer((socket) => waiting.push(socket));
    const p = createWirePool(s.url, { connections: 1 });
    const calls = [send(p, { path: "/1" }), send(p, { path: "/2" }), send(p, { path: "/3" })];
    while (waiting.length === 0) await delay(5);
    const closed = p.close();
    await assert.rejects(send(p, { path: "/late" }), code("UND_ERR_CLOSED"));
    for (let answered = 0; answered < 3; answered++) {
      while (waiting.length === 0) await delay(5);
      waiting.shift()!.write("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nk");
      await calls[answered];
    }
    await closed;
    assert.equal(p.openSockets, 0);
    assert.equal(p.timers, 0);
    for (const socket of s.sockets) socket.destroy();
    while (handles().tcp > baseline.tcp + 1) await delay(5); // + the listening server
    assert.ok(handles().timers <= baseline.timers, "a timer outlived the pool");
  });

  test("timers: the idle sweep while a socket is idle, a connect timeout while connecting; none after close or destroy", async () => {
    const s = await httpServer((_req, res) => res.end("ok"));
    const p = createWirePool(s.url);
    await send(p, { path: "/" });
    assert.equal(p.timers, 1); // the sweep of idle sockets
    await p.close();
    assert.equal(p.timers, 0);
    const baseline = handles().timers;
    const connecting = createWirePool("http://192.0.2.1:80", { connect: () => new Socket() });
    const call = assert.rejects(send(connecting, { path: "/" }), code("UND_ERR_DESTROYED"));
    assert.equal(connecting.timers, 1);
    assert.equal(handles().timers, baseline + 1);
    await connecting.destroy(null);
    await call;
    assert.equal(connecting.timers, 0);
    assert.equal(handles().timers, baseline);
  });

  test("destroy(): in-flight and queued requests fail (UND_ERR_DESTROYED, or the given error); sockets close", async () => {
    const s = await rawServer(() => undefined);
    const p = createWirePool(s.url, { connections: 1 });
    const settled = Promise.allSettled([send(p, { path: "/1" }), send(p, { path: "/2" })]);
    while (s.sockets.size === 0) await delay(5);
    await p.destroy(null);
    assert.equal(p.timers, 0);
    for (const r of await settled) assert.ok(r.status === "rejected" && code("UND_ERR_DESTROYED")(r.reason));
    assert.equal(p.openSockets, 0);
    const q = createWirePool(s.url, { connections: 1 });
    const failed = assert.rejects(send(q, { path: "/x" }), /shutting down/);
    await q.destroy(new Error("shutting down"));
    await failed;
    await assert.rejects(send(q, { path: "/late" }), code("UND_ERR_DESTROYED"));
  });
});

describe("diagnostics channels", () => {
  test("create, bodySent, headers, trailers (and error) with the same request object; undici's channels stay silent", async () => {
    const s = await httpServer((_req, res) => res.end("ok"));
    const p = pool(s.url);
    const seen: string[] = [];
    const handlers = Object.entries(WIRE_CHANNEL_NAMES).map(([phase, name]) => {
      const handler = (message: unknown) => {
        const { request } = message as { request: { method: string; path: string; origin: string } };
        seen.push(`${phase} ${request.method} ${request.path} ${request.origin}`);
      };
      subscribe(name, handler);
      return [name, handler] as const;
    });
    const undiciSeen: unknown[] = [];
    const onUndici = (m: unknown) => undiciSeen.push(m);
    subscribe("undici:request:create", onUndici);
    try {
      await send(p, { origin: s.url, method: "POST", path: "/d", body: "x" });
      await assert.rejects(send(p, { origin: s.url, path: "/e" }, (abort) => abort()));
    } finally {
      for (const [name, handler] of handlers) unsubscribe(name, handler);
      unsubscribe("undici:request:create", onUndici);
    }
    assert.deepEqual(seen, [
      `create POST /d ${s.url}`,
      `bodySent POST /d ${s.url}`,
      `headers POST /d ${s.url}`,
      `trailers POST /d ${s.url}`,
      `create GET /e ${s.url}`,
      `error GET /e ${s.url}`,
    ]);
    assert.deepEqual(undiciSeen, []);
  });
});

describe('through the client (engine: "wire")', () => {
  test("refused with proxy or dispatcher, naming both", () => {
    for (const extra of [
      { proxy: "http://127.0.0.1:3128" },
      { dispatcher: createWirePool("http://127.0.0.1:9") },
    ]) {
      assert.throws(
        () => createHttpClient({ url: "http://127.0.0.1:9", engine: "wire", ...extra } as never),
        (e: unknown) =>
          e instanceof InvalidArgumentError &&
          /'engine' "wire" cannot be used with '(proxy|dispatcher)'/.test(e.message),
      );
    }
    assert.throws(() => createHttpClient({ url: "http://x", engine: "h2" as never }), InvalidArgumentError);
  });

  test("a request the server drops on a reused socket: ConnectionError (requestSent), retried only by policy", async () => {
    const META = JSON.stringify({ name: "raw", version: "1", extensions: [] });
    let requests = 0;
    const s = await rawServer((socket, index) => {
      requests++;
      // the second request of each client, on its reused socket, is dropped unanswered
      if (index === 1 || index === 3) socket.destroy();
      else
        socket.write(
          `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${META.length}\r\n\r\n${META}`,
        );
    });
    const once = createHttpClient({ url: s.url, engine: "wire", maxRetries: 0 });
    const retrying = createHttpClient({ url: s.url, engine: "wire", backoff: { initialDelayMs: 1 } });
    cleanups.push(
      () => once.close(),
      () => retrying.close(),
    );
    assert.equal((await once.serverMetadata()).name, "raw");
    await assert.rejects(
      once.serverMetadata(),
      (e: unknown) => e instanceof ConnectionError && e.requestSent,
    );
    assert.equal((await retrying.serverMetadata()).name, "raw");
    assert.equal((await retrying.serverMetadata()).name, "raw"); // a GET is idempotent: retried on a new socket
    assert.equal(requests, 5);
  });
});
