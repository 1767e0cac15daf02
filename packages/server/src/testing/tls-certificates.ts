/**
 * Certificates for TLS tests, made by the openssl CLI in a temporary directory: a CA, a server certificate
 * it signs for 127.0.0.1 and localhost, a client certificate it signs, and an unrelated CA with a client
 * certificate of its own (a stranger's). `unavailable` says why they could not be made (no openssl), so
 * tests can skip with a reason instead of failing.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** PEM files of a test PKI; `path(name)` is the file, `pem(name)` its bytes. */
export interface TestCertificates {
  readonly dir: string;
  path(name: TestPemName): string;
  pem(name: TestPemName): Buffer;
  remove(): void;
}

export type TestPemName =
  | "ca.pem"
  | "other-ca.pem"
  | "server.pem"
  | "server.key"
  | "client.pem"
  | "client.key"
  | "stranger.pem"
  | "stranger.key";

/**
 * Makes a fresh PKI (one day of validity, P-256 keys) with the openssl CLI. Without it this throws, so the
 * tests that need certificates fail, saying why, rather than skip (.ci/run installs openssl).
 */
export function createTestCertificates(): TestCertificates {
  if (spawnSync("openssl", ["version"]).status !== 0)
    throw new Error("this test needs the openssl CLI (apt-get install openssl; .ci/run installs it)");
  const dir = mkdtempSync(join(tmpdir(), "tbench-tls-"));
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "ignore" });
  const key = (name: string) => openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", name);
  for (const ca of ["ca", "other-ca"]) {
    key(`${ca}.key`);
    openssl(
      "req",
      "-x509",
      "-new",
      "-key",
      `${ca}.key`,
      "-subj",
      `/CN=${ca}`,
      "-days",
      "1",
      "-out",
      `${ca}.pem`,
    );
  }
  writeFileSync(join(dir, "server.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  for (const [name, ca, ext] of [
    ["server", "ca", ["-extfile", "server.ext"]],
    ["client", "ca", []],
    ["stranger", "other-ca", []],
  ] as const) {
    key(`${name}.key`);
    openssl("req", "-new", "-key", `${name}.key`, "-subj", `/CN=${name}`, "-out", `${name}.csr`);
    openssl(
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      `${ca}.pem`,
      "-CAkey",
      `${ca}.key`,
      "-CAcreateserial",
      "-days",
      "1",
      "-out",
      `${name}.pem`,
      ...ext,
    );
  }
  return {
    dir,
    path: (name) => join(dir, name),
    pem: (name) => readFileSync(join(dir, name)),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
