/**
 * tbench's `--ssl-grpc-*` flags (perf_analyzer's names) end to end against tbench-server's TLS gRPC
 * endpoint (`grpcTls`, the server's `--grpc-use-ssl` / `--grpc-use-ssl-mutual`), with certificates made in
 * this process (testing/tls-certificates.ts): the run succeeds trusting the CA, and with mutual TLS only
 * when it presents its client certificate; without the CA it fails before measuring.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { type RunningServer, startServer } from "@tbench/server";
import {
  createTestCertificates,
  type TestCertificates,
} from "../../../../scripts/testing/tls-certificates.js";
import { parseResultJson } from "../report/json-result.js";
import { runTbench } from "../testing/cli-harness.js";

const MODELS = fileURLToPath(new URL("../../../../examples/models", import.meta.url));
const quiet = { error() {}, warn() {}, info() {}, verbose() {}, debug() {} };
const run = runTbench;

describe("tbench --ssl-grpc-* against tbench-server over TLS", { timeout: 120_000 }, () => {
  let certs: TestCertificates;
  const servers: RunningServer[] = [];
  const fast = ["-m", "simple", "-p", "300", "-r", "3", "-s", "100", "-i", "grpc"];
  /** A file in the certificates' temporary directory: a PEM file, or a result tbench writes there. */
  const file = (name: string) => join(certs.dir, name);

  before(async () => {
    certs = await createTestCertificates();
  });
  after(async () => {
    for (const s of servers) await s.close();
    certs?.remove();
  });

  const start = async (mutual: boolean) => {
    const server = await startServer({
      modelRepository: MODELS,
      httpPort: 0,
      grpcPort: 0,
      metricsPort: false,
      modelControlMode: "explicit",
      loadModels: ["simple"],
      logger: quiet as never,
      grpcTls: {
        serverCert: await readFile(file("server.pem")),
        serverKey: await readFile(file("server.key")),
        ...(mutual ? { rootCert: await readFile(file("ca.pem")) } : {}),
        mutual,
      },
    });
    servers.push(server);
    return server.grpcAddress ?? "";
  };

  it("TLS with the CA measures without errors; mutual TLS needs the client certificate", async () => {
    const tlsAddress = await start(false);
    const trusted = ["--ssl-grpc-use-ssl", "--ssl-grpc-root-certifications-file", file("ca.pem")];
    const json = file("tls.json");
    const ok = await run([...fast, "-u", tlsAddress, ...trusted, "--json", json]);
    assert.equal(ok.code, 0, ok.stderr);
    const level = parseResultJson(await readFile(json, "utf8"), json).levels[0]!;
    assert.equal(level.errorCount, 0);
    assert.ok(level.requestCount > 0);

    // Verification is on by default: without the CA nothing is measured.
    const untrusted = await run([...fast, "-u", tlsAddress, "--ssl-grpc-use-ssl"]);
    assert.notEqual(untrusted.code, 0);
    assert.match(untrusted.stderr, /^tbench: error: .*unable to verify the first certificate/);
    // Plaintext against a TLS endpoint fails the same way.
    assert.notEqual((await run([...fast, "-u", tlsAddress])).code, 0);

    const mtlsAddress = await start(true);
    const clientCert = [
      "--ssl-grpc-private-key-file",
      file("client.key"),
      "--ssl-grpc-certificate-chain-file",
      file("client.pem"),
    ];
    const mjson = file("mtls.json");
    const mutual = await run([...fast, "-u", mtlsAddress, ...trusted, ...clientCert, "--json", mjson]);
    assert.equal(mutual.code, 0, mutual.stderr);
    const m = parseResultJson(await readFile(mjson, "utf8"), mjson).levels[0]!;
    assert.equal(m.errorCount, 0);
    assert.ok(m.requestCount > 0);
    const anonymous = await run([...fast, "-u", mtlsAddress, ...trusted]);
    assert.notEqual(anonymous.code, 0);
    assert.match(anonymous.stderr, /certificate required/);
    assert.doesNotMatch(anonymous.stderr, /at .*\.ts:\d+/, "one-line error, no stack trace");
  });
});
