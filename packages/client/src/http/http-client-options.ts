/**
 * Options of createHttpClient, validated once with zod and resolved into a frozen object that the rest of
 * the client trusts. A zod failure becomes an InvalidArgumentError naming the option, what was given and
 * what is allowed. With `engine: "fetch"` the options go to the fetch transport (fetch/) instead, which
 * has no pool, TLS or proxy settings of its own.
 */
import type { Dispatcher } from "undici";
import { z } from "zod";
import { type TlsOptions, tlsSchema } from "../connection-options.js";
import { InvalidArgumentError } from "../errors.js";
import type { FetchClientOptions, FetchFunction } from "../fetch/fetch-client-options.js";
import { definedOnly, parseOptions } from "../option-validation.js";
import {
  type HttpCommonOptions,
  httpCommonShape,
  type ResolvedHttpCommonOptions,
  resolveHttpCommonOptions,
} from "./http-common-options.js";

export type { CompressionOptions } from "./http-common-options.js";

/** Options of {@link createHttpClient}. */
export interface HttpClientOptions extends HttpCommonOptions {
  /** Keep-alive connections in the pool (default 8). */
  connections?: number;
  /** Connect timeout in ms (default 10000). */
  connectTimeoutMs?: number;
  /** TLS settings (https URLs). */
  tls?: TlsOptions;
  /** HTTP(S) proxy URL. */
  proxy?: string;
  /** An undici Dispatcher to send through instead of the client's own pool (tests, custom agents); not closed by the client. */
  dispatcher?: Dispatcher;
  /**
   * What sends the requests: "undici" (default, an undici Pool), "wire" (the client's minimal keep-alive
   * pool, wire-pool.ts: cheaper per request; no proxy, no HTTP/2, no pipelining) or "fetch" (the standard
   * `fetch`, the transport browsers and edge runtimes get; no `connections`, `connectTimeoutMs`, `tls`,
   * `proxy` or `dispatcher`).
   */
  engine?: HttpEngine;
  /** With engine "fetch": the fetch function to call instead of the global one. */
  fetch?: FetchFunction;
}

/** The engines of {@link HttpClientOptions.engine}. */
export type HttpEngine = "undici" | "wire" | "fetch";

/** The validated, defaulted, frozen options of the Node engines. */
export interface ResolvedHttpClientOptions extends ResolvedHttpCommonOptions {
  readonly connections: number;
  readonly connectTimeoutMs: number;
  readonly tls: Readonly<TlsOptions> | undefined;
  readonly proxy: string | undefined;
  readonly dispatcher: Dispatcher | undefined;
  readonly engine: "undici" | "wire";
}

const schema = z.strictObject({
  ...httpCommonShape,
  connections: z.number().int().min(1).max(1024).optional(),
  connectTimeoutMs: z.number().int().positive().optional(),
  tls: tlsSchema.optional(),
  proxy: z.url({ protocol: /^https?$/, error: "expected an http:// or https:// proxy URL" }).optional(),
  dispatcher: z
    .custom<Dispatcher>((v) => typeof (v as { dispatch?: unknown } | null)?.dispatch === "function", {
      error: "expected an undici Dispatcher",
    })
    .optional(),
  engine: z.enum(["undici", "wire"]).optional(),
});

/** Validates and resolves the options of the Node engines; throws InvalidArgumentError naming the bad option. */
export function resolveHttpClientOptions(options: HttpClientOptions): ResolvedHttpClientOptions {
  if (options?.fetch !== undefined) {
    throw new InvalidArgumentError(
      `createHttpClient: option 'fetch' needs engine "fetch"; given engine ${JSON.stringify(options.engine ?? "undici")}`,
    );
  }
  const o = parseOptions(schema, options, "createHttpClient");
  if (o.engine === "wire" && (o.proxy !== undefined || o.dispatcher !== undefined)) {
    const given = o.proxy !== undefined ? "proxy" : "dispatcher";
    throw new InvalidArgumentError(
      `createHttpClient: option 'engine' "wire" cannot be used with '${given}' (the wire engine connects directly and is its own pool); drop '${given}' or use engine "undici"`,
    );
  }
  return Object.freeze({
    ...resolveHttpCommonOptions(o),
    connections: o.connections ?? 8,
    connectTimeoutMs: o.connectTimeoutMs ?? 10_000,
    tls: o.tls === undefined ? undefined : Object.freeze(definedOnly(o.tls) as TlsOptions),
    proxy: o.proxy,
    dispatcher: o.dispatcher,
    engine: o.engine ?? "undici",
  });
}

/**
 * The options of `engine: "fetch"` as the fetch transport takes them (it validates them); an option of the
 * Node engines only is an InvalidArgumentError naming it.
 */
export function fetchEngineOptions(options: HttpClientOptions): FetchClientOptions {
  const { engine: _engine, connections, connectTimeoutMs, tls, proxy, dispatcher, ...rest } = options;
  const nodeOnly = { connections, connectTimeoutMs, tls, proxy, dispatcher };
  for (const [name, value] of Object.entries(nodeOnly)) {
    if (value !== undefined) {
      throw new InvalidArgumentError(
        `createHttpClient: option '${name}' cannot be used with engine "fetch" (fetch has no connection pool, TLS or proxy settings of its own); drop '${name}' or use engine "undici"`,
      );
    }
  }
  return rest;
}
