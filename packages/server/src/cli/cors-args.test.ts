/**
 * The CORS flags of tbench-server (ours; Triton has none): --http-cors-allow-origin (repeatable),
 * --http-cors-allow-headers (comma lists, repeatable), --http-cors-max-age, --http-cors-allow-credentials.
 * Values are read as hostile: each mistake is one line naming the flag, the form expected and the value.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { sourceNodeArgs } from "../../../../scripts/testing/source-node.js";
import { CliUsageError, parseServerArgs } from "./server-args.js";

const parse = (...argv: string[]) => parseServerArgs(["--model-repository", "m", ...argv], () => {}).options!;
const fails = (argv: string[], message: string) =>
  assert.throws(
    () => parse(...argv),
    (e: unknown) => {
      assert.ok(e instanceof CliUsageError);
      assert.equal(e.message, message);
      return true;
    },
  );

const EXPECTED_ORIGIN =
  "expected scheme://host[:port] with scheme http or https and no path, query, fragment or user name, or a lone '*'";

test("off unless an origin is given", () => {
  assert.equal("httpCors" in parse(), false);
  assert.equal("httpCors" in parse("--http-cors-allow-credentials", "false"), false);
});

test("origins normalized, header lists split, max-age and credentials read", () => {
  assert.deepEqual(
    parse(
      "--http-cors-allow-origin",
      "https://App.example:443",
      "--http-cors-allow-origin=http://localhost:5173",
      "--http-cors-allow-headers",
      "X-Request-Id, X-Tenant",
      "--http-cors-allow-headers=Authorization",
      "--http-cors-max-age",
      "3600",
      "--http-cors-allow-credentials",
    ).httpCors,
    {
      allowOrigins: ["https://app.example", "http://localhost:5173"],
      allowHeaders: ["X-Request-Id", "X-Tenant", "Authorization"],
      maxAgeSecs: 3600,
      allowCredentials: true,
    },
  );
  assert.deepEqual(parse("--http-cors-allow-origin", "*").httpCors, {
    allowOrigins: ["*"],
    allowHeaders: [],
    maxAgeSecs: 600,
    allowCredentials: false,
  });
  assert.equal(parse("--http-cors-allow-origin", "*", "--http-cors-max-age", "0").httpCors?.maxAgeSecs, 0);
});

test("credentials are never allowed with '*'", () => {
  fails(
    ["--http-cors-allow-origin", "*", "--http-cors-allow-credentials"],
    "--http-cors-allow-credentials cannot be used with --http-cors-allow-origin '*': browsers refuse a " +
      "credentialed answer to a wildcard origin; list the exact origins instead",
  );
});

test("bad origins: one line naming the flag, the form and the value", () => {
  for (const bad of [
    "https://app.example/",
    "https://app.example/v2",
    "app.example",
    "https://u@app.example",
  ])
    fails(["--http-cors-allow-origin", bad], `invalid --http-cors-allow-origin '${bad}': ${EXPECTED_ORIGIN}`);
  fails(
    ["--http-cors-allow-origin", "https://*.example"],
    "invalid --http-cors-allow-origin 'https://*.example': expected an exact origin: no wildcard other than a lone '*'",
  );
  fails(
    ["--http-cors-allow-origin", "ftp://files.example"],
    "invalid --http-cors-allow-origin 'ftp://files.example': expected an http or https origin, not ftp:",
  );
  fails(
    ["--http-cors-allow-origin", "*", "--http-cors-allow-origin", "https://app.example"],
    "invalid --http-cors-allow-origin '*': it allows every origin, give it alone (also given: 'https://app.example')",
  );
  fails(
    ["--http-cors-allow-origin", "https://app.example\nX: y"],
    `invalid --http-cors-allow-origin 'https://app.example\\u000aX: y': ${EXPECTED_ORIGIN}`,
  );
});

test("bad header lists and max-ages", () => {
  const origin = ["--http-cors-allow-origin", "https://app.example"];
  fails(
    [...origin, "--http-cors-allow-headers", "X Foo"],
    "invalid --http-cors-allow-headers 'X Foo': expected a header name (an RFC 7230 token: letters, digits and " +
      "!#$%&'+-.^_`|~; '*' is not accepted)",
  );
  fails(
    [...origin, "--http-cors-allow-headers", "*"],
    "invalid --http-cors-allow-headers '*': expected a header name (an RFC 7230 token: letters, digits and " +
      "!#$%&'+-.^_`|~; '*' is not accepted)",
  );
  for (const list of ["a,,b", "a,", ""])
    fails(
      [...origin, "--http-cors-allow-headers", list],
      `invalid --http-cors-allow-headers '${list}': expected header names separated by commas`,
    );
  for (const age of ["-1", "86401", "1e3", "0x10", "", " 5", "1.5", "9999999"])
    fails(
      [...origin, `--http-cors-max-age=${age}`],
      `invalid --http-cors-max-age '${age}': expected whole seconds from 0 to 86400`,
    );
  fails(
    [...origin, "--http-cors-allow-credentials", "maybe"],
    "invalid --http-cors-allow-credentials 'maybe': expected true or false",
  );
});

test("the other CORS flags without an origin are refused: they would do nothing", () => {
  fails(
    ["--http-cors-allow-headers", "X-Request-Id"],
    "--http-cors-allow-headers needs --http-cors-allow-origin (CORS is off without an origin)",
  );
  fails(
    ["--http-cors-max-age", "60"],
    "--http-cors-max-age needs --http-cors-allow-origin (CORS is off without an origin)",
  );
  fails(
    ["--http-cors-allow-credentials"],
    "--http-cors-allow-credentials needs --http-cors-allow-origin (CORS is off without an origin)",
  );
});

test("tbench-server exits 2 with the credentials error on one line, before loading anything", async () => {
  const dir = mkdtempSync(join(tmpdir(), "tbench-cors-args-"));
  try {
    const main = new URL("./main.ts", import.meta.url).pathname;
    const child = spawn(
      process.execPath,
      [
        ...sourceNodeArgs(main),
        "--model-repository",
        dir,
        "--http-cors-allow-origin",
        "*",
        "--http-cors-allow-credentials",
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const [code] = await once(child, "exit");
    assert.equal(code, 2);
    assert.equal(
      stderr,
      "tbench-server: --http-cors-allow-credentials cannot be used with --http-cors-allow-origin '*': browsers " +
        "refuse a credentialed answer to a wildcard origin; list the exact origins instead\n" +
        "(run tbench-server --help for the options)\n",
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
