import { subscribe, unsubscribe } from "node:diagnostics_channel";

/** Client-library time of the requests completed in a window, summed (perf_analyzer's send/recv split). */
export interface HttpTimingTotals {
  count: number;
  /** Request created until fully written (headers and body). */
  sendNs: number;
  /** Response headers received until the response is complete. */
  recvNs: number;
  /** Request created until the response is complete. */
  requestNs: number;
}

/** Sums HTTP timings from undici's diagnostics channels for the load's own requests. */
export interface HttpTiming {
  swap(): HttpTimingTotals;
  close(): void;
}

/** Creates empty totals. */
export function emptyHttpTiming(): HttpTimingTotals {
  return { count: 0, sendNs: 0, recvNs: 0, requestNs: 0 };
}

interface UndiciRequest {
  path?: string;
}

/** Only the requests that make the load: infer and the readiness probe (not statistics or metadata). */
function isLoadRequest(request: UndiciRequest): boolean {
  const path = request.path ?? "";
  const end = path.indexOf("?");
  const bare = end < 0 ? path : path.slice(0, end);
  return bare.endsWith("/infer") || bare.endsWith("/health/ready");
}

/**
 * Subscribes to undici's `undici:request:*` diagnostics channels (this thread only): `@tbench/client`
 * sends over undici, and the channels see each request's phases without any change to the client. A
 * request's send time runs from its creation to `bodySent`, its receive time from `headers` to `trailers`.
 */
export function createHttpTiming(): HttpTiming {
  const started = new WeakMap<object, { createdNs: bigint; sentNs: bigint; headersNs: bigint }>();
  let totals = emptyHttpTiming();
  const onCreate = (message: unknown) => {
    const { request } = message as { request: UndiciRequest };
    if (!isLoadRequest(request)) return;
    const now = process.hrtime.bigint();
    started.set(request, { createdNs: now, sentNs: now, headersNs: now });
  };
  const onBodySent = (message: unknown) => {
    const entry = started.get((message as { request: object }).request);
    if (entry !== undefined) entry.sentNs = process.hrtime.bigint();
  };
  const onHeaders = (message: unknown) => {
    const entry = started.get((message as { request: object }).request);
    if (entry !== undefined) entry.headersNs = process.hrtime.bigint();
  };
  const onTrailers = (message: unknown) => {
    const request = (message as { request: object }).request;
    const entry = started.get(request);
    if (entry === undefined) return;
    started.delete(request);
    const end = process.hrtime.bigint();
    totals.count += 1;
    totals.sendNs += Number(entry.sentNs - entry.createdNs);
    totals.recvNs += Number(end - entry.headersNs);
    totals.requestNs += Number(end - entry.createdNs);
  };
  const channels: [string, (message: unknown) => void][] = [
    ["undici:request:create", onCreate],
    ["undici:request:bodySent", onBodySent],
    ["undici:request:headers", onHeaders],
    ["undici:request:trailers", onTrailers],
  ];
  for (const [name, handler] of channels) subscribe(name, handler);
  let closed = false;
  return {
    swap() {
      const done = totals;
      totals = emptyHttpTiming();
      return done;
    },
    close() {
      if (closed) return;
      closed = true;
      for (const [name, handler] of channels) unsubscribe(name, handler);
    },
  };
}
