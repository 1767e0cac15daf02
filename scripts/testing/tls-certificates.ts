/**
 * Certificates for TLS tests, made in this process (@peculiar/x509 over Node's WebCrypto, no openssl CLI)
 * and written as PEM files to a temporary directory: a CA, a server certificate it signs for 127.0.0.1 and
 * localhost (or another DNS name), a client certificate it signs, and an unrelated CA with a client
 * certificate of its own (a stranger's). Keys are P-256 in PKCS#8 PEM, which Node's tls and grpc-js take as
 * they are. One file for the tests of every package (like scripts/testing/system-tools.ts): no package
 * ships it.
 */
import "reflect-metadata"; // @peculiar/x509's dependency injection (tsyringe) needs it loaded first
import { randomBytes, webcrypto } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as x509 from "@peculiar/x509";

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

const crypto = webcrypto;
const P256 = { name: "ECDSA", namedCurve: "P-256" } as const;
const SIGNING = { name: "ECDSA", hash: "SHA-256" } as const;
const DAY_MS = 86_400_000;

interface Issued {
  readonly cert: x509.X509Certificate;
  readonly keys: webcrypto.CryptoKeyPair;
}

export interface TestCertificatesOptions {
  /** The server certificate's DNS name, beside IP 127.0.0.1; "localhost" unless given. */
  readonly serverDnsName?: string;
}

/**
 * Makes a fresh PKI (one day of validity, P-256 keys) in a temporary directory; `remove()` deletes it.
 */
export async function createTestCertificates(
  options: TestCertificatesOptions = {},
): Promise<TestCertificates> {
  const now = Date.now();
  // A minute back, so a certificate is valid at once even if clocks disagree by a little.
  const validity = { notBefore: new Date(now - 60_000), notAfter: new Date(now + DAY_MS) };
  const serialNumber = () => {
    const bytes = randomBytes(16);
    bytes[0] = (bytes[0]! & 0x7f) | 0x01; // positive and of full length, as DER wants
    return bytes.toString("hex");
  };
  const newKeys = () => crypto.subtle.generateKey(P256, true, ["sign", "verify"]);

  const createCa = async (name: string): Promise<Issued> => {
    const keys = await newKeys();
    const cert = await x509.X509CertificateGenerator.createSelfSigned(
      {
        serialNumber: serialNumber(),
        name: `CN=${name}`,
        keys,
        signingAlgorithm: SIGNING,
        ...validity,
        extensions: [
          new x509.BasicConstraintsExtension(true, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
          await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, crypto),
        ],
      },
      crypto,
    );
    return { cert, keys };
  };

  const createLeaf = async (name: string, issuer: Issued, usage: "server" | "client"): Promise<Issued> => {
    const keys = await newKeys();
    const extensions: x509.Extension[] = [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension(
        [usage === "server" ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth],
        false,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, crypto),
      await x509.AuthorityKeyIdentifierExtension.create(issuer.cert, false, crypto),
    ];
    if (usage === "server") {
      extensions.push(
        new x509.SubjectAlternativeNameExtension([
          { type: "ip", value: "127.0.0.1" },
          { type: "dns", value: options.serverDnsName ?? "localhost" },
        ]),
      );
    }
    const cert = await x509.X509CertificateGenerator.create(
      {
        serialNumber: serialNumber(),
        subject: `CN=${name}`,
        issuer: issuer.cert.subject,
        publicKey: keys.publicKey,
        signingKey: issuer.keys.privateKey,
        signingAlgorithm: SIGNING,
        ...validity,
        extensions,
      },
      crypto,
    );
    return { cert, keys };
  };

  const ca = await createCa("ca");
  const otherCa = await createCa("other-ca");
  const leaves = {
    server: await createLeaf("server", ca, "server"),
    client: await createLeaf("client", ca, "client"),
    stranger: await createLeaf("stranger", otherCa, "client"),
  };

  const dir = mkdtempSync(join(tmpdir(), "tbench-tls-"));
  const write = (name: TestPemName, text: string) => writeFileSync(join(dir, name), text);
  write("ca.pem", ca.cert.toString("pem"));
  write("other-ca.pem", otherCa.cert.toString("pem"));
  for (const [name, { cert, keys }] of Object.entries(leaves) as [keyof typeof leaves, Issued][]) {
    write(`${name}.pem`, cert.toString("pem"));
    const pkcs8 = await crypto.subtle.exportKey("pkcs8", keys.privateKey);
    write(`${name}.key`, x509.PemConverter.encode(pkcs8, "PRIVATE KEY"));
  }
  return {
    dir,
    path: (name) => join(dir, name),
    pem: (name) => readFileSync(join(dir, name)),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
