/**
 * The gRPC endpoint over TLS (`--grpc-use-ssl`) and mutual TLS (`--grpc-use-ssl-mutual`), on the real
 * server with certificates made in this process (testing/tls-certificates.ts), driven by @tbench/client's
 * createGrpcClient: a client that trusts the CA is served (infer included); one without it (verification is
 * on by default), one trusting another CA and a plaintext one are refused; with mTLS a client without a
 * certificate is refused. A certificate that does not load fails startup with its flag's name.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ConnectionError, createGrpcClient, type GrpcClientOptions } from "@tbench/client";
import {
  createTestCertificates,
  type TestCertificates,
} from "../../../../scripts/testing/tls-certificates.js";
import { silentLogger } from "../core/logger.js";
import { type RunningServer, type ServerOptions, startServer } from "../server.js";
import { createFixtureRepository, type FixtureRepository } from "../testing/test-fixtures.js";

describe("gRPC over TLS and mutual TLS", () => {
  let certs: TestCertificates;
  let repo: FixtureRepository;
  const servers: RunningServer[] = [];

  before(async () => {
    certs = await createTestCertificates();
    repo = createFixtureRepository({ simple: { config: "bundled" } });
  });
  after(async () => {
    for (const s of servers) await s.close();
    repo?.remove();
    certs?.remove();
  });

  const start = async (tls: ServerOptions["grpcTls"]) => {
    const server = await startServer({
      modelRepository: repo.dir,
      httpPort: 0,
      grpcPort: 0,
      metricsPort: false,
      logger: silentLogger,
      ...(tls !== undefined ? { grpcTls: tls } : {}),
    });
    servers.push(server);
    return server;
  };

  /** Whether a client with `options` is served: true, or the error it got. */
  const served = async (options: GrpcClientOptions): Promise<true | unknown> => {
    const client = createGrpcClient({ maxRetries: 0, timeoutMs: 10_000, ...options });
    try {
      assert.equal(await client.isServerLive(), true);
      const data = Int32Array.from({ length: 16 }, (_, i) => i);
      const result = await client.infer("simple", {
        inputs: [
          { name: "INPUT0", datatype: "INT32", shape: [1, 16], data },
          { name: "INPUT1", datatype: "INT32", shape: [1, 16], data },
        ],
      });
      assert.deepEqual(
        [...result.output("OUTPUT0")!.as("INT32")],
        [...data].map((v) => 2 * v),
      );
      return true;
    } catch (error) {
      return error;
    } finally {
      await client.close();
    }
  };

  test("TLS: the CA's clients are served; no CA, another CA or plaintext are refused", async () => {
    const server = await start({
      serverCert: certs.pem("server.pem"),
      serverKey: certs.pem("server.key"),
      mutual: false,
    });
    const address = server.grpcAddress ?? "";
    assert.equal(await served({ url: `grpcs://${address}`, tls: { ca: certs.pem("ca.pem") } }), true);
    // host:port with `tls` is TLS too, as the client documents; PEM text works as well as bytes.
    assert.equal(await served({ url: address, tls: { ca: certs.pem("ca.pem").toString() } }), true);
    for (const options of [
      { url: `grpcs://${address}` }, // the system's roots only: the test CA is not among them
      { url: `grpcs://${address}`, tls: { ca: certs.pem("other-ca.pem") } },
      { url: address }, // plaintext
    ]) {
      const outcome = await served(options);
      assert.ok(outcome instanceof ConnectionError, `${JSON.stringify(options.url)}: ${String(outcome)}`);
    }
  });

  test("mutual TLS: a client certificate signed by the root is required", async () => {
    const server = await start({
      serverCert: certs.pem("server.pem"),
      serverKey: certs.pem("server.key"),
      rootCert: certs.pem("ca.pem"),
      mutual: true,
    });
    const url = `grpcs://${server.grpcAddress ?? ""}`;
    const ca = certs.pem("ca.pem");
    assert.equal(
      await served({ url, tls: { ca, cert: certs.pem("client.pem"), key: certs.pem("client.key") } }),
      true,
    );
    const without = await served({ url, tls: { ca } });
    assert.ok(without instanceof ConnectionError, String(without));
    const stranger = await served({
      url,
      tls: { ca, cert: certs.pem("stranger.pem"), key: certs.pem("stranger.key") },
    });
    assert.ok(stranger instanceof ConnectionError, `a certificate from another CA: ${String(stranger)}`);
  });

  test("certificates that do not load fail startup, naming the flag", async () => {
    const garbage = Buffer.from("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n");
    await assert.rejects(
      start({ serverCert: garbage, serverKey: certs.pem("server.key"), mutual: false }),
      /--grpc-server-cert, --grpc-server-key\) do not load/,
    );
    await assert.rejects(
      start({ serverCert: certs.pem("server.pem"), serverKey: certs.pem("client.key"), mutual: false }),
      /do not load/,
    );
    await assert.rejects(
      start({ serverCert: certs.pem("server.pem"), serverKey: certs.pem("server.key"), mutual: true }),
      /mutual TLS needs the root certificate .*--grpc-root-cert/,
    );
  });
});
