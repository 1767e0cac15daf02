/**
 * The wire pool's diagnostics channels: the phases of each request, as undici publishes them on its own
 * `undici:request:*` channels, under names of our own (a subscriber of undici's channels expects undici's
 * objects). Each message is `{ request }` (a WireRequest: `method`, `path`, `origin`; the same object in
 * every phase of one request); `headers` adds `response: { statusCode, statusText }` and `error` adds
 * `error`. Publishers check `hasSubscribers` first, so an unobserved pool builds no message at all.
 */
import { channel } from "node:diagnostics_channel";

/** Channel names, for subscribers. */
export const WIRE_CHANNEL_NAMES = {
  create: "tbench:http:request:create",
  bodySent: "tbench:http:request:bodySent",
  headers: "tbench:http:request:headers",
  trailers: "tbench:http:request:trailers",
  error: "tbench:http:request:error",
} as const;

/** The channels themselves. */
export const wireChannels = {
  create: channel(WIRE_CHANNEL_NAMES.create),
  bodySent: channel(WIRE_CHANNEL_NAMES.bodySent),
  headers: channel(WIRE_CHANNEL_NAMES.headers),
  trailers: channel(WIRE_CHANNEL_NAMES.trailers),
  error: channel(WIRE_CHANNEL_NAMES.error),
};
