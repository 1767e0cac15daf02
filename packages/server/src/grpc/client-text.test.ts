// The bounds on what a gRPC error repeats: one echo cut to MAX_ECHO_CHARS without splitting a character,
// the whole grpc-message bounded after percent-encoding, never a lone surrogate (encodeURI throws on one).
import assert from "node:assert/strict";
import { test } from "node:test";
import { MAX_ECHO_CHARS, truncateEcho, truncateEchoesIn } from "../core/echo-text.js";
import { boundedMessage, boundGrpcMessage, longTextsOf, MAX_GRPC_MESSAGE_BYTES } from "./client-text.js";

test("truncateEcho keeps short text, cuts long text with its length, never splits a surrogate pair", () => {
  assert.equal(truncateEcho("simple"), "simple");
  assert.equal(truncateEcho("a".repeat(300), 4), "aaaa… (300 characters)");
  const emoji = "😀".repeat(10); // 20 UTF-16 units
  assert.equal(truncateEcho(emoji, 5), `${"😀".repeat(2)}… (20 characters)`);
  assert.equal(
    truncateEchoesIn("model 'xxxxxx' and 'xxxxxx'", ["xxxxxx"], 2),
    "model 'xx… (6 characters)' and 'xx… (6 characters)'",
  );
});

test("longTextsOf finds long names, keys and parameter strings, not bytes", () => {
  const long = "n".repeat(MAX_ECHO_CHARS + 1);
  const texts = longTextsOf({
    model_name: long,
    inputs: [{ name: `${long}i`, contents: { bytes_contents: [new Uint8Array(1000)] } }],
    parameters: { [`${long}k`]: { string_param: `${long}v` } },
    raw_input_contents: [new Uint8Array(5000)],
  });
  assert.deepEqual(new Set(texts), new Set([long, `${long}i`, `${long}k`, `${long}v`]));
});

test("boundGrpcMessage bounds the percent-encoded message and marks the cut", () => {
  for (const unit of ["x", "€", "😀", " "]) {
    const bounded = boundGrpcMessage(`internal error: ${unit.repeat(100_000)}`);
    assert.ok(encodeURI(bounded).length <= MAX_GRPC_MESSAGE_BYTES, unit);
    assert.ok(bounded.endsWith("… (message truncated)"));
  }
  assert.equal(boundGrpcMessage("short"), "short");
  assert.equal(boundGrpcMessage("lone \ud800 surrogate"), "lone \ufffd surrogate");
  assert.equal(
    boundedMessage("Request for unknown model: 'zzz' is not found", { name: "zzz" }),
    "Request for unknown model: 'zzz' is not found",
  );
});
