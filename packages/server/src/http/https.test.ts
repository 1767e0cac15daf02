/**
 * HTTPS on the HTTP front end (tbench-server's own --http-ssl-cert / --http-ssl-key; Triton has no HTTP
 * TLS), with certificates made in this process (testing/tls-certificates.ts), driven by @tbench/client's
 * createHttpClient: a client that trusts the CA is served; one without it (verification on by default) and
 * plain HTTP are refused; a restricted API is still restricted over HTTPS; a certificate that does not load
 * fails startup naming the flags.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ConnectionError, createHttpClient, PermissionDeniedError } from "@tbench/client";
import {
  createTestCertificates,
  type TestCertificates,
} from "../../../../scripts/testing/tls-certificates.js";
import { silentLogger } from "../core/logger.js";
import { type RunningServer, startServer } from "../server.js";
import { rawRequest } from "../testing/raw-http-client.js";
import { createFixtureRepository, type FixtureRepository } from "../testing/test-fixtures.js";

describe("HTTPS (--http-ssl-cert, --http-ssl-key)", () => {
  let certs: TestCertificates;
  let repo: FixtureRepository;
  let server: RunningServer;

  before(async () => {
    certs = await createTestCertificates();
    repo = createFixtureRepository({ simple: { config: "bundled" } });
    server = await startServer({
      modelRepository: repo.dir,
      httpPort: 0,
      metricsPort: false,
      logger: silentLogger,
      httpTls: { cert: certs.pem("server.pem"), key: certs.pem("server.key") },
      httpRestrictedApis: { "model-repository": { key: "admin-key", value: "s3cret" } },
    });
  });
  after(async () => {
    await server?.close();
    repo?.remove();
    certs?.remove();
  });

  test("the CA's clients are served; without it, or in plain HTTP, nothing is", async () => {
    assert.match(server.httpUrl, /^https:\/\/127\.0\.0\.1:\d+$/);
    await using client = createHttpClient({ url: server.httpUrl, tls: { ca: certs.pem("ca.pem") } });
    assert.equal(await client.isServerLive(), true);
    const data = Int32Array.from({ length: 16 }, (_, i) => i);
    const result = await client.infer("simple", {
      inputs: [
        { name: "INPUT0", datatype: "INT32", shape: [1, 16], data },
        { name: "INPUT1", datatype: "INT32", shape: [1, 16], data },
      ],
    });
    assert.deepEqual([...result.output("OUTPUT1")!.as("INT32")], new Array(16).fill(0));

    await using untrusted = createHttpClient({ url: server.httpUrl, maxRetries: 0 });
    await assert.rejects(untrusted.isServerLive(), ConnectionError);
    await using otherCa = createHttpClient({
      url: server.httpUrl,
      tls: { ca: certs.pem("other-ca.pem") },
      maxRetries: 0,
    });
    await assert.rejects(otherCa.isServerLive(), ConnectionError);
    await assert.rejects(rawRequest(server.httpUrl.replace(/^https:/, "http:"), "/v2/health/live"));
  });

  test("restrictions hold over HTTPS", async () => {
    await using client = createHttpClient({ url: server.httpUrl, tls: { ca: certs.pem("ca.pem") } });
    await assert.rejects(
      client.repositoryIndex(),
      (e: unknown) =>
        e instanceof PermissionDeniedError &&
        /This API is restricted, expecting header 'admin-key'/.test(e.message),
    );
    const index = await client.repositoryIndex({}, { headers: { "admin-key": "s3cret" } });
    assert.ok(index.some((m) => m.name === "simple"));
  });

  test("a key that does not match the certificate fails startup naming the flags", async () => {
    await assert.rejects(
      startServer({
        modelRepository: repo.dir,
        httpPort: 0,
        metricsPort: false,
        logger: silentLogger,
        httpTls: { cert: certs.pem("server.pem"), key: certs.pem("client.key") },
      }),
      /the HTTPS certificate and key \(--http-ssl-cert, --http-ssl-key\) do not load/,
    );
  });
});
