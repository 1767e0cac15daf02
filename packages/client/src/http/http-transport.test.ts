// Transport behaviour against small node:http servers on 127.0.0.1:0: retries, retry-after, timeouts,
// aborts, connection failures, malformed answers, compression, auth and lifetimes; once over undici's Pool
// and once over the fetch transport (on Node's own fetch), which must behave the same.
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { after, describe, test } from "node:test";
import zlib from "node:zlib";
import { buildConnector, Pool } from "undici";
import {
  AbortedError,
  ClientClosedError,
  ConnectionError,
  DeadlineExceededError,
  InvalidArgumentError,
  MalformedResponseError,
  UnavailableError,
} from "../errors.js";
import type { InferenceClient } from "../inference-client.js";
import {
  type FakeHandler,
  type FakeServer,
  sendBinary,
  sendJson,
  startFakeServer,
} from "../testing/fake-server.js";
import { createHttpClient } from "./http-client.js";
import type { HttpClientOptions, HttpEngine } from "./http-client-options.js";

const open: { close(): Promise<void> }[] = [];
after(async () => {
  for (const r of open.reverse()) await r.close();
});

async function setup(engine: HttpEngine, handler: FakeHandler, options: Partial<HttpClientOptions> = {}) {
  const server = await startFakeServer(handler);
  open.push(server);
  const client = createHttpClient({
    url: server.url,
    backoff: { initialDelayMs: 1, maxDelayMs: 50 },
    engine,
    ...options,
  });
  open.push(client);
  return { server, client };
}

const inferOk: FakeHandler = (_req, res) =>
  sendBinary(
    res,
    {
      model_name: "m",
      model_version: "1",
      outputs: [{ name: "o", datatype: "FP32", shape: [1], parameters: { binary_data_size: 4 } }],
    },
    [new Uint8Array(new Float32Array([3]).buffer)],
  );

const input = { inputs: [{ name: "x", datatype: "FP32" as const, shape: [1], data: [1] }] };

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

for (const engine of ["undici", "fetch"] as const) {
  describe(`engine ${engine}`, () => {
    describe("retries", () => {
      test("an idempotent call is retried on 503 and honours retry-after", async () => {
        const { server, client } = await setup(
          engine,
          (_req, res, i) => {
            if (i === 0) sendJson(res, 503, { error: "Server not ready" }, { "retry-after": "0" });
            else sendJson(res, 200, { name: "s", version: "1", extensions: [] });
          },
          { backoff: { initialDelayMs: 60_000, maxDelayMs: 60_000 } },
        ); // only retry-after (0 s) can make this fast
        const meta = await client.serverMetadata({ timeoutMs: 10_000 });
        assert.equal(meta.name, "s");
        assert.equal(server.requests.length, 2);
      });

      test("gives up after maxRetries with UnavailableError keeping the server's message and retry-after", async () => {
        const { server, client } = await setup(engine, (_req, res) =>
          sendJson(res, 503, { error: "Exceeds maximum queue size" }, { "retry-after": "0" }),
        );
        await assert.rejects(client.serverMetadata({ maxRetries: 3 }), (e: unknown) => {
          assert.ok(e instanceof UnavailableError);
          assert.equal(e.serverMessage, "Exceeds maximum queue size");
          assert.equal(e.status, 503);
          assert.equal(e.retryAfterMs, 0);
          return true;
        });
        assert.equal(server.requests.length, 4);
      });

      test("infer is not retried unless the caller opts in", async () => {
        const { server, client } = await setup(engine, (_req, res, i) => {
          if (i === 0) sendJson(res, 503, { error: "Exceeds maximum queue size" });
          else inferOk(_req, res, i);
        });
        await assert.rejects(client.infer("m", input), UnavailableError);
        assert.equal(server.requests.length, 1);
        const result = await client.infer("m", input, { maxRetries: 1 });
        assert.equal(result.output("o")!.as("FP32")[0], 3);
        assert.equal(server.requests.length, 2);
      });

      test("retryInfer: true applies the client's maxRetries to infer", async () => {
        const { server, client } = await setup(
          engine,
          (req, res, i) => {
            if (i < 2) sendJson(res, 503, { error: "busy" });
            else inferOk(req, res, i);
          },
          { retryInfer: true, maxRetries: 2 },
        );
        await client.infer("m", input);
        assert.equal(server.requests.length, 3);
      });

      test("a non-idempotent call (load) is not retried on 503", async () => {
        const { server, client } = await setup(engine, (_req, res) => sendJson(res, 503, { error: "busy" }));
        await assert.rejects(client.loadModel("m"), UnavailableError);
        assert.equal(server.requests.length, 1);
      });

      test("connection refused (never sent) is retried, then a ConnectionError with requestSent false", async () => {
        const port = await closedPort();
        // Each attempt counted where it starts: undici's real connector opens one connection per attempt; the
        // fetch transport calls its `fetch` option (Node's fetch here) once per attempt. Each is refused.
        let attempts = 0;
        let options: Partial<HttpClientOptions>;
        if (engine === "fetch") {
          options = {
            fetch: (url, init) => {
              attempts += 1;
              return fetch(url, init);
            },
          };
        } else {
          const connector = buildConnector({});
          const dispatcher = new Pool(`http://127.0.0.1:${port}`, {
            connect: (opts, callback) => {
              attempts += 1;
              connector(opts, callback);
            },
          });
          open.push(dispatcher);
          options = { dispatcher };
        }
        const client = createHttpClient({
          url: `http://127.0.0.1:${port}`,
          backoff: { initialDelayMs: 1 },
          engine,
          ...options,
        });
        open.push(client);
        await assert.rejects(
          client.loadModel("m", {}, { maxRetries: 2 }),
          (e: unknown) =>
            e instanceof ConnectionError && e.requestSent === false && /ECONNREFUSED/.test(e.message),
        );
        assert.equal(attempts, 3, "one attempt and two retries");
        attempts = 0;
        await assert.rejects(client.infer("m", input), ConnectionError);
        assert.equal(attempts, 1, "infer is not retried unless the caller opts in, even when never sent");
      });
    });

    describe("deadlines and aborts cancel the HTTP request", () => {
      const hang: FakeHandler = () => new Promise<void>(() => {}); // never answers

      test("timeoutMs rejects with DeadlineExceededError and the server sees the request abandoned", async () => {
        const { server, client } = await setup(engine, hang);
        await assert.rejects(client.infer("m", input, { timeoutMs: 50 }), DeadlineExceededError);
        // On a loaded machine the deadline can pass before the request is out; whatever the server did
        // receive, it sees abandoned (the abort test below cancels a request the server surely holds).
        await waitFor(() => server.abandoned.length === server.requests.length);
      });

      test("the client's default timeoutMs applies to every call", async () => {
        const { client } = await setup(engine, hang, { timeoutMs: 50 });
        await assert.rejects(client.serverMetadata(), DeadlineExceededError);
      });

      test("abort rejects with AbortedError whose cause is signal.reason, and the request is cancelled", async () => {
        const { server, client } = await setup(engine, hang);
        const controller = new AbortController();
        const call = client.infer("m", input, { signal: controller.signal });
        await waitFor(() => server.requests.length === 1);
        const reason = new Error("user went away");
        controller.abort(reason);
        await assert.rejects(call, (e: unknown) => e instanceof AbortedError && e.cause === reason);
        await waitFor(() => server.abandoned.length === 1);
      });

      test("an already-aborted signal rejects before anything is sent", async () => {
        const { server, client } = await setup(engine, inferOk);
        await assert.rejects(
          client.infer("m", input, { signal: AbortSignal.abort("stop") }),
          (e: unknown) => e instanceof AbortedError && e.cause === "stop",
        );
        assert.equal(server.requests.length, 0);
      });

      test("abort during a retry wait stops retrying", async () => {
        const { server, client } = await setup(engine, (_req, res) => sendJson(res, 503, { error: "busy" }), {
          backoff: { initialDelayMs: 60_000, maxDelayMs: 60_000, jitter: 0 },
        });
        const controller = new AbortController();
        const call = client.serverMetadata({ signal: controller.signal, maxRetries: 5 });
        await waitFor(() => server.requests.length === 1);
        controller.abort();
        await assert.rejects(call, AbortedError);
        assert.equal(server.requests.length, 1);
      });

      test("a retry wait longer than the deadline gives the last error instead of waiting", async () => {
        const { server, client } = await setup(
          engine,
          (_req, res) => sendJson(res, 503, { error: "busy" }, { "retry-after": "30" }),
          {
            backoff: { maxDelayMs: 60_000 },
          },
        );
        await assert.rejects(client.serverMetadata({ timeoutMs: 5_000 }), UnavailableError);
        assert.equal(server.requests.length, 1);
      });
    });

    describe("malformed answers", () => {
      test("a metadata answer missing fields is a MalformedResponseError naming the field", async () => {
        const { client } = await setup(engine, (_req, res) =>
          sendJson(res, 200, { name: "s", extensions: [] }),
        );
        await assert.rejects(
          client.serverMetadata(),
          (e: unknown) => e instanceof MalformedResponseError && /'version'/.test(e.message),
        );
      });
      test("a non-JSON answer", async () => {
        const { client } = await setup(engine, (_req, res) => {
          res.writeHead(200, { "content-type": "text/html" });
          res.end("<html>");
        });
        await assert.rejects(
          client.modelMetadata("m"),
          (e: unknown) => e instanceof MalformedResponseError && /not JSON/.test(e.message),
        );
      });
      test("an infer answer whose binary section is short", async () => {
        const { client } = await setup(engine, (_req, res) =>
          sendBinary(
            res,
            {
              model_name: "m",
              outputs: [{ name: "o", datatype: "FP32", shape: [2], parameters: { binary_data_size: 8 } }],
            },
            [new Uint8Array(4)],
          ),
        );
        await assert.rejects(client.infer("m", input), MalformedResponseError);
      });
      test("an error answer that is not JSON keeps its text", async () => {
        const { client } = await setup(engine, (_req, res) => {
          res.writeHead(502);
          res.end("bad gateway from the proxy");
        });
        await assert.rejects(
          client.serverMetadata({ maxRetries: 0 }),
          (e: unknown) => e instanceof UnavailableError && e.serverMessage === "bad gateway from the proxy",
        );
      });
    });

    describe("compression", () => {
      for (const algorithm of ["gzip", "deflate"] as const) {
        test(`${algorithm} request bodies; Inference-Header-Content-Length counts the uncompressed JSON`, async () => {
          const { server, client } = await setup(engine, inferOk, { compression: { request: algorithm } });
          await client.infer("m", input);
          const seen = server.requests[0]!;
          assert.equal(seen.headers["content-encoding"], algorithm);
          const plain = algorithm === "gzip" ? zlib.gunzipSync(seen.body) : zlib.inflateSync(seen.body);
          const jsonLength = Number(seen.headers["inference-header-content-length"]);
          assert.deepEqual(JSON.parse(plain.toString("utf8", 0, jsonLength)).inputs[0].parameters, {
            binary_data_size: 4,
          });
          assert.equal(plain.length, jsonLength + 4);
        });
        test(`${algorithm} responses are decompressed`, async () => {
          const { server, client } = await setup(
            engine,
            (_req, res) => {
              const json = Buffer.from(
                JSON.stringify({
                  model_name: "m",
                  model_version: "1",
                  outputs: [{ name: "o", datatype: "FP32", shape: [1], parameters: { binary_data_size: 4 } }],
                }),
              );
              const plain = Buffer.concat([json, Buffer.from(new Float32Array([5]).buffer)]);
              const body = algorithm === "gzip" ? zlib.gzipSync(plain) : zlib.deflateSync(plain);
              res.writeHead(200, {
                "content-encoding": algorithm,
                "inference-header-content-length": String(json.length),
                "content-length": body.length,
              });
              res.end(body);
            },
            { compression: { response: true } },
          );
          const result = await client.infer("m", input);
          assert.equal(server.requests[0]!.headers["accept-encoding"], "gzip, deflate");
          assert.equal(result.output("o")!.as("FP32")[0], 5);
        });
      }
    });

    describe("headers and auth", () => {
      test("default headers, per-call headers, basic auth", async () => {
        const { server, client } = await setup(engine, inferOk, {
          headers: { "X-Team": "a" },
          auth: { type: "basic", username: "u", password: "p" },
        });
        await client.infer("m", input, { headers: { "x-call": "1" } });
        const h = server.requests[0]!.headers;
        assert.equal(h["x-team"], "a");
        assert.equal(h["x-call"], "1");
        assert.equal(h["authorization"], `Basic ${Buffer.from("u:p").toString("base64")}`);
      });
      test("a call's own headers and a hook's changes stay with that call (header objects are shared)", async () => {
        let n = 0;
        const { server, client } = await setup(engine, inferOk, {
          headers: { "x-team": "a" },
          auth: (headers) => {
            if (n++ === 0) headers["x-first-only"] = "1";
          },
        });
        const plain = createHttpClient({ url: server.url, headers: { "x-team": "b" }, engine });
        open.push(plain);
        await client.isServerLive({ headers: { "x-call": "1" } });
        await client.isServerLive();
        await plain.infer("m", input, { headers: { "x-call": "2" } });
        await plain.infer("m", input);
        await plain.isServerLive({ headers: { "X-Team": "c" } });
        await plain.isServerLive();
        const h = server.requests.map((r) => r.headers);
        assert.deepEqual(
          h.map((x) => [x["x-team"], x["x-call"], x["x-first-only"]]),
          [
            ["a", "1", "1"],
            ["a", undefined, undefined],
            ["b", "2", undefined],
            ["b", undefined, undefined],
            ["c", undefined, undefined],
            ["b", undefined, undefined],
          ],
        );
      });
      test("an invalid header value is an InvalidArgumentError, nothing is sent", async () => {
        const { server, client } = await setup(engine, inferOk);
        await assert.rejects(
          client.isServerLive({ headers: { "x-bad": "a\nb" } }),
          (e: unknown) => e instanceof InvalidArgumentError && /x-bad/.test(e.message),
        );
        assert.equal(server.requests.length, 0);
      });
      test("bearer token and an async auth hook", async () => {
        const { server, client } = await setup(engine, inferOk, { auth: { type: "bearer", token: "t0k" } });
        await client.infer("m", input);
        assert.equal(server.requests[0]!.headers["authorization"], "Bearer t0k");
        let n = 0;
        const hooked = createHttpClient({
          url: server.url,
          engine,
          auth: async (headers) => {
            headers["authorization"] = `Bearer refreshed-${++n}`;
          },
        });
        open.push(hooked);
        await hooked.isServerLive();
        assert.equal(server.requests[1]!.headers["authorization"], "Bearer refreshed-1");
      });
    });

    describe("lifetimes", () => {
      test("close() is graceful and idempotent; calls after it reject with ClientClosedError", async () => {
        const { client } = await setup(engine, inferOk);
        await client.infer("m", input);
        await Promise.all([client.close(), client.close()]);
        await assert.rejects(client.infer("m", input), ClientClosedError);
        await assert.rejects(client.isServerLive(), ClientClosedError);
      });
      test("close() lets calls in flight finish", async () => {
        const { client } = await setup(engine, async (req, res, i) => {
          await new Promise((r) => setTimeout(r, 50));
          inferOk(req, res, i);
        });
        const call = client.infer("m", input);
        await new Promise((r) => setTimeout(r, 10));
        await client.close();
        assert.equal((await call).output("o")!.as("FP32")[0], 3);
      });
      test("destroy() fails calls in flight with ClientClosedError carrying the reason", async () => {
        const { server, client } = await setup(engine, () => new Promise<void>(() => {}));
        const call = client.infer("m", input);
        const outcome = call.then(
          () => undefined,
          (e: unknown) => e,
        );
        await waitFor(() => server.requests.length === 1);
        const reason = new Error("shutting down");
        await client.destroy(reason);
        await assert.rejects(
          Promise.reject(await outcome),
          (e: unknown) => e instanceof ClientClosedError && e.cause === reason,
        );
        await client.destroy();
      });
      test("destroy() fails every call still in flight, after others in between have finished", async () => {
        const { server, client } = await setup(engine, (req, res) => {
          if (req.url.endsWith("/live")) res.end();
          else if (req.url.endsWith("/ready")) setTimeout(() => res.end(), 20);
          else return new Promise<void>(() => {}); // infer hangs
        });
        const settled = (p: Promise<unknown>) =>
          p.then(
            (v) => v,
            (e: unknown) => e,
          );
        const first = settled(client.infer("m", input));
        const live = await client.isServerLive(); // finished: removed from the head of the in-flight list
        const second = settled(client.infer("m", input));
        const ready = settled(client.isServerReady()); // finishes while the others hang: removed from between them
        const third = settled(client.infer("m", input));
        assert.equal(live, true);
        assert.equal(await ready, true);
        await waitFor(() => server.requests.length === 5);
        await client.destroy();
        for (const outcome of [first, second, third]) assert.ok((await outcome) instanceof ClientClosedError);
      });
      test("Symbol.asyncDispose closes", async () => {
        const { server } = await setup(engine, inferOk);
        let kept: InferenceClient;
        {
          await using client = createHttpClient({ url: server.url, engine });
          kept = client;
          await client.isServerLive();
        }
        await assert.rejects(kept.isServerLive(), ClientClosedError);
      });
    });
  });
}

describe("options are validated once", () => {
  const cases: [unknown, RegExp][] = [
    [{ url: "ftp://x" }, /invalid option 'url': expected an http:\/\/ or https:\/\/ URL; given "ftp:\/\/x"/],
    [{ url: "http://x", connections: 0 }, /invalid option 'connections': .*>=1.*; given 0/],
    [
      { url: "http://x", compression: { request: "br" } },
      /invalid option 'compression.request'.*"gzip".*given "br"/,
    ],
    [{ url: "http://x", auth: { type: "digest" } }, /invalid option 'auth'/],
    [{ url: "http://x", retries: 3 }, /invalid option '\(options\)'.*given retries/],
  ];
  for (const [options, pattern] of cases) {
    test(JSON.stringify(options), () => {
      assert.throws(
        () => createHttpClient(options as HttpClientOptions),
        (e: unknown) => e instanceof InvalidArgumentError && pattern.test(e.message),
      );
    });
  }
});

async function waitFor(condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}

export type { FakeServer };
