// What is particular to the fetch client (the calls themselves are the HTTP suites', run over both
// transports): its options, checked once at creation, and an infer answer whose binary layout header a
// cross-origin page cannot read.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { InvalidArgumentError, MalformedResponseError } from "../errors.js";
import { createHttpClient } from "../http/http-client.js";
import type { HttpClientOptions } from "../http/http-client-options.js";
import { type FakeServer, startFakeServer } from "../testing/fake-server.js";
import { createFetchClient } from "./fetch-client.js";

const open: { close(): Promise<void> }[] = [];
after(async () => {
  for (const r of open.reverse()) await r.close();
});

describe("options", () => {
  const cases: [unknown, RegExp][] = [
    [{ url: "http://x", engine: "fetch", tls: {} }, /option 'tls' cannot be used with engine "fetch"/],
    [
      { url: "http://x", engine: "fetch", connections: 2 },
      /option 'connections' cannot be used with engine "fetch"/,
    ],
    [
      { url: "http://x", engine: "fetch", proxy: "http://p" },
      /option 'proxy' cannot be used with engine "fetch"/,
    ],
    [{ url: "http://x", fetch: fetch }, /option 'fetch' needs engine "fetch"; given engine "undici"/],
    [
      { url: "http://x", engine: "fetch", fetch: "no" },
      /invalid option 'fetch': expected a function; given "no"/,
    ],
    [{ url: "ftp://x", engine: "fetch" }, /invalid option 'url': expected an http:\/\/ or https:\/\/ URL/],
    [
      { url: "http://x", engine: "fetch", compression: { request: "br" } },
      /invalid option 'compression.request'.*"gzip".*given "br"/,
    ],
  ];
  for (const [options, pattern] of cases) {
    test(JSON.stringify(options), () => {
      assert.throws(
        () => createHttpClient(options as HttpClientOptions),
        (e: unknown) => e instanceof InvalidArgumentError && pattern.test(e.message),
      );
    });
  }
  test("unknown options are named", () => {
    assert.throws(
      () => createFetchClient({ url: "http://x", retries: 3 } as never),
      (e: unknown) =>
        e instanceof InvalidArgumentError && /invalid option '\(options\)'.*given retries/.test(e.message),
    );
  });
});

describe("answers", () => {
  test("binary tensors without a readable Inference-Header-Content-Length: the error says what the server must expose", async () => {
    const server: FakeServer = await startFakeServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.end(Buffer.from('{"model_name":"m","outputs":[]}'));
    });
    open.push(server);
    const client = createHttpClient({ url: server.url, engine: "fetch" });
    open.push(client);
    await assert.rejects(
      client.infer("m", { inputs: [{ name: "x", datatype: "FP32", shape: [1], data: [1] }] }),
      (e: unknown) => e instanceof MalformedResponseError && /Access-Control-Expose-Headers/.test(e.message),
    );
  });
});
