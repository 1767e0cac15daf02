import { readFile } from "node:fs/promises";
import type { GrpcTlsPem } from "../load/transport.js";
import type { GrpcSslFiles } from "./bench-config.js";
import { UsageError } from "./usage-error.js";

async function readPem(flag: string, path: string | undefined): Promise<string | undefined> {
  if (path === undefined) return undefined;
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new UsageError(`${flag} ${path}: cannot read the file (${(error as Error).message})`);
  }
  // grpc-js's own error for a file that is not PEM comes late and names no flag.
  if (!text.includes("-----BEGIN ")) {
    throw new UsageError(`${flag} ${path}: expected a PEM file (-----BEGIN ...), the file has none`);
  }
  return text;
}

/**
 * Reads the `--ssl-grpc-*` PEM files once, in the main thread (load workers get the text, not the paths),
 * turning a missing or unreadable file into a one-line usage error naming the flag and the path.
 */
export async function readGrpcTls(files: GrpcSslFiles): Promise<GrpcTlsPem> {
  const [ca, key, cert] = await Promise.all([
    readPem("--ssl-grpc-root-certifications-file", files.rootCertificationsFile),
    readPem("--ssl-grpc-private-key-file", files.privateKeyFile),
    readPem("--ssl-grpc-certificate-chain-file", files.certificateChainFile),
  ]);
  return {
    ...(ca !== undefined ? { ca } : {}),
    ...(cert !== undefined ? { cert } : {}),
    ...(key !== undefined ? { key } : {}),
  };
}
