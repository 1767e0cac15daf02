/**
 * Restricted APIs, as Triton defines them (server src/restricted_features.h, command_line_parser.cc):
 * `--http-restricted-api <apis>:<key>=<value>` and `--grpc-restricted-protocol <protocols>:<key>=<value>`
 * put groups of endpoints behind a header (HTTP) or metadata entry (gRPC, named
 * `triton-grpc-protocol-<key>`) that must carry `<value>`. Both front ends share the groups and the parser;
 * each checks its own requests (http-server.ts, grpc-front-end.ts) before anything else about them.
 */

/** Triton's restricted categories, in its order. */
export const RESTRICTED_CATEGORIES = [
  "health",
  "metadata",
  "inference",
  "shared-memory",
  "model-config",
  "model-repository",
  "statistics",
  "trace",
  "logging",
] as const;
export type RestrictedCategory = (typeof RESTRICTED_CATEGORIES)[number];

/** The header (HTTP) or metadata key (gRPC, before Triton's prefix) and the value it must carry. */
export interface Restriction {
  readonly key: string;
  readonly value: string;
}

/** The restricted categories of one front end; a category absent is open to everyone. */
export type RestrictedApis = Readonly<Partial<Record<RestrictedCategory, Restriction>>>;

/** The prefix Triton puts before a gRPC restriction's key (grpc_server.h kRestrictedProtocolHeaderTemplate). */
export const GRPC_RESTRICTED_HEADER_PREFIX = "triton-grpc-protocol-";

/** A restriction flag that does not parse; the message is Triton's. */
export class RestrictionFlagError extends Error {
  override readonly name = "RestrictionFlagError";
}

const CATEGORY_SET: ReadonlySet<string> = new Set(RESTRICTED_CATEGORIES);

export function isRestrictedCategory(name: string): name is RestrictedCategory {
  return CATEGORY_SET.has(name);
}

/**
 * Adds one flag's groups to `into` (a fresh object is returned), as Triton's ParseRestrictedFeatureOption:
 * `<a>[,<b>...]:<key>=<value>` with all three parts non-empty (the `=` is looked for after the first `:`,
 * so a value may hold both characters), every name a known category, none restricted twice.
 * `flag` is the option's name without dashes, `noun` "api" or "protocol" (Triton's words in its messages).
 */
export function addRestrictions(
  into: RestrictedApis,
  arg: string,
  flag: string,
  noun: "api" | "protocol",
): RestrictedApis {
  const colon = arg.indexOf(":");
  const equals = colon < 0 ? -1 : arg.indexOf("=", colon + 1);
  const names = colon < 0 ? "" : arg.slice(0, colon);
  const key = equals < 0 ? "" : arg.slice(colon + 1, equals);
  const value = equals < 0 ? "" : arg.slice(equals + 1);
  if (names === "" || key === "" || value === "")
    throw new RestrictionFlagError(
      `--${flag} option format is '<config name>:<setting>=<value>'. Got ${arg}`,
    );
  const result: Partial<Record<RestrictedCategory, Restriction>> = { ...into };
  for (const name of names.split(",")) {
    if (!isRestrictedCategory(name))
      throw new RestrictionFlagError(
        `unknown restricted ${noun} '${name}' (expected one of ${RESTRICTED_CATEGORIES.join(", ")})`,
      );
    if (result[name] !== undefined)
      throw new RestrictionFlagError(
        `restricted ${noun} '${name}' can not be specified in multiple config groups`,
      );
    result[name] = Object.freeze({ key, value });
  }
  return Object.freeze(result);
}

/** Every flag's groups, in order; throws RestrictionFlagError on the first that does not parse. */
export function parseRestrictions(
  args: readonly string[],
  flag: string,
  noun: "api" | "protocol",
): RestrictedApis {
  let apis: RestrictedApis = Object.freeze({});
  for (const arg of args) apis = addRestrictions(apis, arg, flag, noun);
  return apis;
}

/** Checks options given in code (not through the flags): known categories, non-empty key and value. */
export function checkRestrictedApis(apis: RestrictedApis, option: string): void {
  for (const [name, restriction] of Object.entries(apis)) {
    if (!isRestrictedCategory(name))
      throw new RestrictionFlagError(
        `${option}: unknown category '${name}' (expected one of ${RESTRICTED_CATEGORIES.join(", ")})`,
      );
    if (restriction === undefined) continue;
    if (typeof restriction.key !== "string" || restriction.key === "")
      throw new RestrictionFlagError(`${option}.${name}: expected a non-empty key`);
    if (typeof restriction.value !== "string" || restriction.value === "")
      throw new RestrictionFlagError(`${option}.${name}: expected a non-empty value`);
  }
}
