/**
 * Authentication options, the same for every transport (HTTP over undici or fetch, gRPC): the types, the zod
 * schema that validates them, and how they become headers. zod/mini, as every schema the browser entry
 * reaches: it tree-shakes, where the classic API pulls all of zod (and its locales) into a page.
 */
import * as z from "zod/mini";
import { base64Of, utf8Bytes } from "./bytes.js";

/** A hook that sets authentication headers on each request (it may refresh a token first). */
export type AuthHook = (headers: Record<string, string>) => void | Promise<void>;

/** Built-in authentication, or a hook. */
export type AuthOptions =
  | { type: "basic"; username: string; password: string }
  | { type: "bearer"; token: string }
  | AuthHook;

/** Validates {@link AuthOptions}. */
export const authSchema = z.union([
  z.strictObject({ type: z.literal("basic"), username: z.string(), password: z.string() }),
  z.strictObject({ type: z.literal("bearer"), token: z.string().check(z.minLength(1)) }),
  z.custom<AuthHook>((v) => typeof v === "function"),
]);

/**
 * Applies validated auth options: basic and bearer set `authorization` in `headers` (names in lower case);
 * a hook is returned, to run on every request.
 */
export function applyAuth(
  auth: AuthOptions | undefined,
  headers: Record<string, string>,
): AuthHook | undefined {
  if (typeof auth === "function") return auth;
  if (auth?.type === "basic") {
    headers["authorization"] = `Basic ${base64Of(utf8Bytes(`${auth.username}:${auth.password}`))}`;
  } else if (auth?.type === "bearer") headers["authorization"] = `Bearer ${auth.token}`;
  return undefined;
}
