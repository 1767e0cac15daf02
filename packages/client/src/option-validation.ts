/**
 * Options objects are validated once, at the factory, with zod; a failure becomes an InvalidArgumentError a
 * person can act on: which option, what zod expected (in English, zod-english.ts), and what was given.
 */
import * as z from "zod/mini";
import type * as core from "zod/v4/core";
import { InvalidArgumentError } from "./errors.js";
import { ZOD_ENGLISH } from "./zod-english.js";

function describe(value: unknown): string {
  if (typeof value === "function") return "a function";
  if (typeof value === "string") return JSON.stringify(value);
  if (value === undefined) return "nothing";
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v = input;
  for (const key of path) v = (v as Record<PropertyKey, unknown> | undefined)?.[key];
  return v;
}

/**
 * Parses `options` with `schema`; throws InvalidArgumentError(`factory: invalid option 'a.b': <what zod
 * says>; given <value>`) on the first issue.
 */
export function parseOptions<S extends core.$ZodType>(
  schema: S,
  options: unknown,
  factory: string,
): core.output<S> {
  const parsed = z.safeParse(schema, options, { error: ZOD_ENGLISH });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = issue.path.length > 0 ? issue.path.join(".") : "(options)";
  const given =
    issue.code === "unrecognized_keys" ? issue.keys.join(", ") : describe(valueAt(options, issue.path));
  throw new InvalidArgumentError(`${factory}: invalid option '${field}': ${issue.message}; given ${given}`, {
    cause: parsed.error,
  });
}

/** `o` without its undefined members (zod's output of optional fields, before spreading over defaults). */
export function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
