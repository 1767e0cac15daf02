/**
 * Options of the fetch client (browsers, edge runtimes, Deno, Bun, and Node with `engine: "fetch"`):
 * validated once with zod and resolved into a frozen object. The common HTTP options, plus the fetch
 * function to call; connection pools, TLS and proxies are the runtime's business, not the client's.
 */
import * as z from "zod/mini";
import { InvalidArgumentError } from "../errors.js";
import {
  type HttpCommonOptions,
  httpCommonShape,
  type ResolvedHttpCommonOptions,
  resolveHttpCommonOptions,
} from "../http/http-common-options.js";
import { parseOptions } from "../option-validation.js";

/** The fetch function the client calls (the global `fetch` fits, as does a service binding's `fetch`). */
export type FetchFunction = (url: string, init: RequestInit) => Promise<Response>;

/** Options of the fetch client's `createHttpClient`. */
export interface FetchClientOptions extends HttpCommonOptions {
  /**
   * The fetch to call instead of the global one, e.g. a Cloudflare service binding's `fetch`, or a wrapper
   * that adds `credentials: "include"` for a cross-origin server that authenticates with cookies.
   */
  fetch?: FetchFunction;
}

/** The validated, defaulted, frozen options. */
export interface ResolvedFetchClientOptions extends ResolvedHttpCommonOptions {
  readonly fetch: FetchFunction;
}

const schema = z.strictObject({
  ...httpCommonShape,
  fetch: z.optional(
    z.custom<FetchFunction>((v) => typeof v === "function", { error: "expected a function" }),
  ),
});

/** The global fetch, looked up at each call (so a polyfill or instrumentation installed later is used). */
const globalFetch: FetchFunction = (url, init) => globalThis.fetch(url, init);

/** Validates and resolves the options; throws InvalidArgumentError naming the bad option. */
export function resolveFetchClientOptions(options: FetchClientOptions): ResolvedFetchClientOptions {
  const o = parseOptions(schema, options, "createHttpClient");
  if (o.fetch === undefined && typeof globalThis.fetch !== "function") {
    throw new InvalidArgumentError(
      "createHttpClient: this runtime has no global fetch; pass the 'fetch' option (a function like fetch)",
    );
  }
  if (o.compression?.request !== undefined && typeof globalThis.CompressionStream !== "function") {
    throw new InvalidArgumentError(
      `createHttpClient: option 'compression.request' "${o.compression.request}" needs CompressionStream, which this runtime lacks; drop the option to send uncompressed bodies`,
    );
  }
  return Object.freeze({ ...resolveHttpCommonOptions(o), fetch: o.fetch ?? globalFetch });
}
