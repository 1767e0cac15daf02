import assert from "node:assert/strict";
import { test } from "node:test";
import {
  addRestrictions,
  parseRestrictions,
  RESTRICTED_CATEGORIES,
  RestrictionFlagError,
} from "./restricted-api.js";

const parse = (...args: string[]) => parseRestrictions(args, "http-restricted-api", "api");
const fails = (args: string[], message: string, noun: "api" | "protocol" = "api") =>
  assert.throws(
    () => parseRestrictions(args, noun === "api" ? "http-restricted-api" : "grpc-restricted-protocol", noun),
    (e: unknown) => e instanceof RestrictionFlagError && e.message === message,
  );

test("Triton's nine categories, in its order", () => {
  assert.deepEqual(RESTRICTED_CATEGORIES, [
    "health",
    "metadata",
    "inference",
    "shared-memory",
    "model-config",
    "model-repository",
    "statistics",
    "trace",
    "logging",
  ]);
});

test("groups: comma-separated categories, repeated flags, the value may hold ':' and '='", () => {
  assert.deepEqual(parse("model-repository,statistics:admin-key=s3cret", "inference:infer-key=a:b=c"), {
    "model-repository": { key: "admin-key", value: "s3cret" },
    statistics: { key: "admin-key", value: "s3cret" },
    inference: { key: "infer-key", value: "a:b=c" },
  });
  assert.deepEqual(parse(), {});
  // Each front end parses its own flags: a category may be restricted once per front end.
  const http = parse("health:k=v");
  const grpc = parseRestrictions(["health:k=w"], "grpc-restricted-protocol", "protocol");
  assert.deepEqual(
    [http.health, grpc.health],
    [
      { key: "k", value: "v" },
      { key: "k", value: "w" },
    ],
  );
});

test("format errors name the flag and what was given, as Triton's parser", () => {
  const format = (arg: string, flag = "http-restricted-api") =>
    `--${flag} option format is '<config name>:<setting>=<value>'. Got ${arg}`;
  for (const arg of ["health", "health:key", "health=key:v", ":k=v", "health:=v", "health:k=", ""])
    fails([arg], format(arg));
  fails(["trace"], format("trace", "grpc-restricted-protocol"), "protocol");
});

test("an unknown category, an empty one, or a category in two groups is refused", () => {
  const known = RESTRICTED_CATEGORIES.join(", ");
  fails(["healthz:k=v"], `unknown restricted api 'healthz' (expected one of ${known})`);
  fails(["health,:k=v"], `unknown restricted api '' (expected one of ${known})`);
  fails(["Health:k=v"], `unknown restricted protocol 'Health' (expected one of ${known})`, "protocol");
  fails(
    ["health,metadata:k=v", "metadata:k2=v2"],
    "restricted api 'metadata' can not be specified in multiple config groups",
  );
  fails(["trace,trace:k=v"], "restricted api 'trace' can not be specified in multiple config groups");
  // addRestrictions never changes what it was given.
  const before = parse("health:k=v");
  addRestrictions(before, "metadata:k=v", "http-restricted-api", "api");
  assert.deepEqual(Object.keys(before), ["health"]);
});
