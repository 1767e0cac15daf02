/**
 * TLS of the gRPC endpoint, as Triton's `--grpc-use-ssl`, `--grpc-use-ssl-mutual`, `--grpc-server-cert`,
 * `--grpc-server-key` and `--grpc-root-cert` set it up (grpc_server.cc): the server's key and certificate,
 * and the root certificates that client certificates must chain to when mutual TLS requires and verifies
 * one (GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY). Where Triton reads an unreadable file
 * as empty and fails later inside gRPC, the PEM text is checked here and a bad one named.
 */
import { createSecureContext } from "node:tls";
import * as grpcJs from "@grpc/grpc-js";

/** PEM text (or bytes) of the endpoint's TLS. */
export interface GrpcTlsOptions {
  /** `--grpc-server-cert`: the server's certificate chain. */
  readonly serverCert: string | Uint8Array;
  /** `--grpc-server-key`: the server's private key. */
  readonly serverKey: string | Uint8Array;
  /** `--grpc-root-cert`: the CA certificates client certificates are verified against (mutual TLS). */
  readonly rootCert?: string | Uint8Array;
  /** `--grpc-use-ssl-mutual`: require a client certificate signed by `rootCert`. */
  readonly mutual: boolean;
}

/** An unusable TLS setup: the message names the part. */
export class GrpcTlsError extends Error {
  override readonly name = "GrpcTlsError";
}

const toBuffer = (pem: string | Uint8Array) =>
  typeof pem === "string" ? Buffer.from(pem) : Buffer.from(pem.buffer, pem.byteOffset, pem.byteLength);

/** grpc-js server credentials for `tls`; insecure ones when it is undefined. */
export function serverCredentials(tls: GrpcTlsOptions | undefined): grpcJs.ServerCredentials {
  if (tls === undefined) return grpcJs.ServerCredentials.createInsecure();
  const cert = toBuffer(tls.serverCert);
  const key = toBuffer(tls.serverKey);
  const root = tls.rootCert === undefined ? undefined : toBuffer(tls.rootCert);
  if (tls.mutual && (root === undefined || root.byteLength === 0))
    throw new GrpcTlsError(
      "mutual TLS needs the root certificate that client certificates are verified against (--grpc-root-cert)",
    );
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    throw new GrpcTlsError(
      `the server certificate and key (--grpc-server-cert, --grpc-server-key) do not load: ${(error as Error).message}`,
    );
  }
  if (root !== undefined && root.byteLength > 0) {
    try {
      createSecureContext({ ca: root });
    } catch (error) {
      throw new GrpcTlsError(
        `the root certificate (--grpc-root-cert) does not load: ${(error as Error).message}`,
      );
    }
  }
  return grpcJs.ServerCredentials.createSsl(
    root !== undefined && root.byteLength > 0 ? root : null,
    [{ private_key: key, cert_chain: cert }],
    tls.mutual,
  );
}
