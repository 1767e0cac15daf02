// TLS (server verification and mTLS, with certificates made in this process by testing/tls-certificates.ts)
// and an HTTP proxy (a node:http CONNECT tunnel), on 127.0.0.1:0. TLS runs on both HTTP engines (undici's
// Pool, the wire pool).
import assert from "node:assert/strict";
import { createServer as createHttpServer } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { type AddressInfo, connect, type Socket } from "node:net";
import { after, before, describe, test } from "node:test";
import {
  createTestCertificates,
  type TestCertificates,
  type TestPemName,
} from "../../../../scripts/testing/tls-certificates.js";
import { ConnectionError } from "../errors.js";
import { startFakeServer } from "../testing/fake-server.js";
import { createHttpClient } from "./http-client.js";

let certs: TestCertificates;
const pem = (name: TestPemName) => certs.pem(name).toString("utf8");

before(async () => {
  certs = await createTestCertificates({ serverDnsName: "inference.test" });
});
after(() => certs?.remove());

async function startTlsServer(requestCert: boolean) {
  const sockets = new Set<Socket>();
  const seen: { authorized: boolean; cn: string | undefined }[] = [];
  const server = createHttpsServer(
    {
      key: pem("server.key"),
      cert: pem("server.pem"),
      ca: pem("ca.pem"),
      requestCert,
      rejectUnauthorized: requestCert,
    },
    (req, res) => {
      const socket = req.socket as import("node:tls").TLSSocket;
      const cn = socket.getPeerCertificate()?.subject?.CN;
      seen.push({ authorized: socket.authorized, cn: Array.isArray(cn) ? cn[0] : cn });
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    },
  );
  server.on("secureConnection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

for (const engine of ["undici", "wire"] as const) {
  describe(`TLS, engine ${engine}`, () => {
    test("verifies the server against the given CA; an unknown CA is a ConnectionError", async () => {
      const server = await startTlsServer(false);
      const trusted = createHttpClient({ url: server.url, tls: { ca: pem("ca.pem") }, engine });
      const untrusted = createHttpClient({ url: server.url, maxRetries: 0, engine });
      try {
        assert.equal(await trusted.isServerLive(), true);
        await assert.rejects(untrusted.isServerLive(), ConnectionError);
      } finally {
        await trusted.close();
        await untrusted.close();
        await server.close();
      }
    });

    test("mTLS: the client certificate reaches the server; servername is used for verification", async () => {
      const server = await startTlsServer(true);
      const client = createHttpClient({
        url: server.url,
        tls: {
          ca: pem("ca.pem"),
          cert: pem("client.pem"),
          key: pem("client.key"),
          servername: "inference.test",
        },
        engine,
      });
      const without = createHttpClient({
        url: server.url,
        tls: { ca: pem("ca.pem") },
        maxRetries: 0,
        engine,
      });
      try {
        assert.equal(await client.isServerLive(), true);
        assert.deepEqual(server.seen.at(-1), { authorized: true, cn: "client" });
        await assert.rejects(without.isServerLive(), ConnectionError);
      } finally {
        await client.close();
        await without.close();
        await server.close();
      }
    });
  });
}

describe("proxy", () => {
  test("calls go through the proxy (CONNECT tunnel) to the server", async () => {
    const target = await startFakeServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
    const tunnels: string[] = [];
    const sockets = new Set<Socket>();
    const proxy = createHttpServer((_req, res) => {
      res.writeHead(405);
      res.end();
    });
    proxy.on("connect", (req, client: Socket, head: Buffer) => {
      tunnels.push(req.url ?? "");
      const [host, port] = (req.url ?? "").split(":");
      const upstream = connect(Number(port), host, () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on("close", () => sockets.delete(s));
        s.on("error", () => s.destroy());
      }
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const client = createHttpClient({ url: target.url, proxy: proxyUrl });
    try {
      assert.equal(await client.isServerLive(), true);
      assert.deepEqual(tunnels, [`127.0.0.1:${target.port}`]);
      assert.equal(target.requests[0]!.url, "/v2/health/live");
    } finally {
      await client.close();
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => proxy.close(() => r()));
      await target.close();
    }
  });
});
