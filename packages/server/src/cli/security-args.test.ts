/**
 * The access-control and TLS flags of tbench-server: --http-restricted-api, --grpc-restricted-protocol
 * (Triton's syntax and errors) and --grpc-use-ssl, --grpc-use-ssl-mutual, --grpc-server-cert,
 * --grpc-server-key, --grpc-root-cert (PEM files read once, a missing one named).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { sourceNodeArgs } from "../../../../scripts/testing/source-node.js";
import { CliUsageError, parseServerArgs } from "./server-args.js";

const parse = (...argv: string[]) => parseServerArgs(["--model-repository", "m", ...argv], () => {}).options!;
const fails = (argv: string[], message: string) =>
  assert.throws(
    () => parse(...argv),
    (e: unknown) => e instanceof CliUsageError && e.message === message,
  );

let dir = "";
before(() => {
  dir = mkdtempSync(join(tmpdir(), "tbench-security-args-"));
  for (const name of ["cert.pem", "key.pem", "root.pem"]) writeFileSync(join(dir, name), `PEM ${name}\n`);
});
after(() => rmSync(dir, { recursive: true, force: true }));

test("restricted APIs and protocols: repeated flags, comma-separated groups, per front end", () => {
  const options = parse(
    "--http-restricted-api",
    "model-repository,statistics:admin-key=s3cret",
    "--http-restricted-api=inference:infer-key=v",
    "--grpc-restricted-protocol",
    "model-repository:admin-key=other",
  );
  assert.deepEqual(options.httpRestrictedApis, {
    "model-repository": { key: "admin-key", value: "s3cret" },
    statistics: { key: "admin-key", value: "s3cret" },
    inference: { key: "infer-key", value: "v" },
  });
  assert.deepEqual(options.grpcRestrictedProtocols, {
    "model-repository": { key: "admin-key", value: "other" },
  });
  const plain = parse();
  assert.equal("httpRestrictedApis" in plain, false);
  assert.equal("grpcRestrictedProtocols" in plain, false);
});

test("restriction flag errors are Triton's, one line each", () => {
  fails(
    ["--http-restricted-api", "health"],
    "--http-restricted-api option format is '<config name>:<setting>=<value>'. Got health",
  );
  fails(
    ["--grpc-restricted-protocol", "health:key"],
    "--grpc-restricted-protocol option format is '<config name>:<setting>=<value>'. Got health:key",
  );
  fails(
    ["--http-restricted-api", "healthz:k=v"],
    "unknown restricted api 'healthz' (expected one of health, metadata, inference, shared-memory, " +
      "model-config, model-repository, statistics, trace, logging)",
  );
  fails(
    ["--grpc-restricted-protocol", "health:k=v", "--grpc-restricted-protocol", "metadata,health:k2=v"],
    "restricted protocol 'health' can not be specified in multiple config groups",
  );
});

test("gRPC TLS: files read once; mutual needs the root; as in Triton, --grpc-use-ssl-mutual turns TLS on", () => {
  const file = (name: string) => join(dir, name);
  const tls = parse(
    "--grpc-use-ssl",
    "--grpc-server-cert",
    file("cert.pem"),
    "--grpc-server-key",
    file("key.pem"),
  );
  assert.deepEqual(
    {
      ...tls.grpcTls,
      serverCert: tls.grpcTls?.serverCert.toString(),
      serverKey: tls.grpcTls?.serverKey.toString(),
    },
    { serverCert: "PEM cert.pem\n", serverKey: "PEM key.pem\n", mutual: false },
  );
  const mutual = parse(
    "--grpc-use-ssl-mutual=false",
    "--grpc-server-cert",
    file("cert.pem"),
    "--grpc-server-key",
    file("key.pem"),
    "--grpc-root-cert",
    file("root.pem"),
  );
  assert.equal(mutual.grpcTls?.mutual, false, "TLS on, client certificates not required");
  assert.equal(mutual.grpcTls?.rootCert?.toString(), "PEM root.pem\n");
  assert.equal(
    parse(
      "--grpc-use-ssl-mutual",
      "--grpc-server-cert",
      file("cert.pem"),
      "--grpc-server-key",
      file("key.pem"),
      "--grpc-root-cert",
      file("root.pem"),
    ).grpcTls?.mutual,
    true,
  );
  // The file flags alone, or --grpc-use-ssl false, leave gRPC plaintext (Triton ignores them too).
  assert.equal(parse("--grpc-server-cert", file("cert.pem")).grpcTls, undefined);
  assert.equal(parse("--grpc-use-ssl", "false", "--grpc-server-cert", "/nope").grpcTls, undefined);
  assert.equal(parse("--grpc-use-ssl", "--allow-grpc", "false").grpcTls, undefined);

  fails(["--grpc-use-ssl"], "--grpc-use-ssl needs --grpc-server-cert and --grpc-server-key (PEM files)");
  fails(
    ["--grpc-use-ssl-mutual", "--grpc-server-cert", file("cert.pem"), "--grpc-server-key", file("key.pem")],
    "--grpc-use-ssl-mutual needs --grpc-root-cert (the CA certificates that verify client certificates)",
  );
  fails(
    ["--grpc-use-ssl", "--grpc-server-cert", file("missing.pem"), "--grpc-server-key", file("key.pem")],
    `--grpc-server-cert '${file("missing.pem")}': cannot read the file (ENOENT)`,
  );
  fails(["--grpc-use-ssl", "maybe"], "invalid --grpc-use-ssl 'maybe': expected true or false");
});

test("HTTPS (ours): --http-ssl-cert and --http-ssl-key together, files read once", () => {
  const file = (name: string) => join(dir, name);
  const https = parse("--http-ssl-cert", file("cert.pem"), "--http-ssl-key", file("key.pem")).httpTls;
  assert.deepEqual([https?.cert.toString(), https?.key.toString()], ["PEM cert.pem\n", "PEM key.pem\n"]);
  assert.equal(parse().httpTls, undefined);
  fails(
    ["--http-ssl-cert", file("cert.pem")],
    "--http-ssl-cert and --http-ssl-key go together (HTTPS needs both PEM files)",
  );
  fails(
    ["--http-ssl-cert", file("cert.pem"), "--http-ssl-key", file("nope.pem")],
    `--http-ssl-key '${file("nope.pem")}': cannot read the file (ENOENT)`,
  );
});

test("tbench-server exits 2 with the restriction error on one line", async () => {
  const main = new URL("./main.ts", import.meta.url).pathname;
  const child = spawn(
    process.execPath,
    [...sourceNodeArgs(main), "--model-repository", dir, "--http-restricted-api", "trace,bogus:k=v"],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const [code] = await once(child, "exit");
  assert.equal(code, 2);
  assert.match(
    stderr,
    /^tbench-server: unknown restricted api 'bogus' \(expected one of [^\n]+\)\n\(run tbench-server --help for the options\)\n$/,
  );
});
