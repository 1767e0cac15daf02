import { subscribe, unsubscribe } from "node:diagnostics_channel";

/**
 * Client-library time of the requests timed in a window, summed (perf_analyzer's send/recv split). Only a
 * sample of the requests is timed (see {@link createHttpTiming}); `count` says how many, and the averages
 * (`sendNs / count`, ...) are what the reports use.
 */
export interface HttpTimingTotals {
  /** Requests timed (a sample of those completed, not all of them). */
  count: number;
  /** Request created until fully written (headers and body). */
  sendNs: number;
  /** Response headers received until the response is complete. */
  recvNs: number;
  /** Request created until the response is complete. */
  requestNs: number;
}

/** Sums HTTP timings from the client's diagnostics channels for a sample of the load's own requests. */
export interface HttpTiming {
  swap(): HttpTimingTotals;
  close(): void;
}

/** Options of {@link createHttpTiming}. */
export interface HttpTimingOptions {
  /**
   * Share of the time during which one request is being timed, in (0, 1] (default 0.1). After a timed
   * request of duration d, the next one starts at least `d * (1 / share - 1)` later. 1 times one request
   * after another with no gap (every request at concurrency 1).
   */
  timedShare?: number;
  /** Upper bound of that gap, ms (default 20), so slow requests are still timed often. */
  maxGapMs?: number;
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
 * Times a sample of the load's requests through the HTTP client's diagnostics channels (this thread only):
 * undici's `undici:request:*` and the wire engine's `tbench:http:request:*` (the engine tbench's own clients
 * use), which see each request's phases without any change to the client. A request's send time runs from
 * its creation to `bodySent`, its receive time from `headers` to `trailers`.
 *
 * Why a sample: timing every request (a clock read and a WeakMap lookup at each of four phases, path
 * checks, an entry object) cost about 1.5-2 µs of CPU per request, 10-20% of tbench's rate against a
 * trivial endpoint. So one request at a time is timed, and a request's phase handlers do one identity
 * compare unless it is the timed one. The channels stay subscribed for the whole run: subscribing and
 * unsubscribing around each timed request was measured slower than timing everything (it flips the
 * channels' prototypes, which de-optimizes undici's `hasSubscribers` checks). The next request to time is
 * picked by its creation time alone (the first load request created after the gap), never by its
 * duration, so the window's averages are unbiased estimates of the averages over all its requests.
 */
export function createHttpTiming(options: HttpTimingOptions = {}): HttpTiming {
  const share = options.timedShare ?? 0.1;
  if (!(share > 0 && share <= 1)) throw new Error(`timedShare must be in (0, 1], got ${share}`);
  const gapFactor = 1 / share - 1;
  const maxGapMs = options.maxGapMs ?? 20;
  let totals = emptyHttpTiming();
  // The request being timed (at most one), its phase times (performance.now() ms), and when the next may start.
  let tracked: object | null = null;
  let createdMs = 0;
  let sentMs = 0;
  let headersMs = 0;
  let nextAtMs = 0;
  let closed = false;

  const onBodySent = (message: unknown) => {
    if ((message as { request: object }).request === tracked) sentMs = performance.now();
  };
  const onHeaders = (message: unknown) => {
    if ((message as { request: object }).request === tracked) headersMs = performance.now();
  };
  const onTrailers = (message: unknown) => {
    if ((message as { request: object }).request !== tracked) return;
    const endMs = performance.now();
    totals.count += 1;
    totals.sendNs += (sentMs - createdMs) * 1e6;
    totals.recvNs += (endMs - headersMs) * 1e6;
    totals.requestNs += (endMs - createdMs) * 1e6;
    finish(endMs, Math.min((endMs - createdMs) * gapFactor, maxGapMs));
  };
  // A failed request is not timed (perf_analyzer averages successful requests); the next may start at once.
  const onError = (message: unknown) => {
    if ((message as { request: object }).request === tracked) finish(performance.now(), 0);
  };
  function finish(nowMs: number, gapMs: number): void {
    tracked = null;
    nextAtMs = nowMs + gapMs;
  }

  const onCreate = (message: unknown) => {
    if (tracked !== null || closed) return;
    const now = performance.now();
    if (now < nextAtMs) return;
    const { request } = message as { request: UndiciRequest };
    if (!isLoadRequest(request)) return;
    tracked = request;
    createdMs = now;
    sentMs = now;
    headersMs = now;
  };
  const phases: [string, (message: unknown) => void][] = [
    ["create", onCreate],
    ["bodySent", onBodySent],
    ["headers", onHeaders],
    ["trailers", onTrailers],
    ["error", onError],
  ];
  // Both HTTP engines of @tbench/client publish the same phases: undici's Pool on `undici:request:*`, the
  // wire pool on `tbench:http:request:*`. A request is seen on one set only, so one set of handlers serves.
  const channels = ["undici:request:", "tbench:http:request:"].flatMap((prefix) =>
    phases.map(([phase, handler]) => [`${prefix}${phase}`, handler] as const),
  );
  for (const [name, handler] of channels) subscribe(name, handler);

  return {
    swap() {
      const done = totals;
      totals = emptyHttpTiming();
      return done;
    },
    close() {
      if (closed) return;
      closed = true;
      tracked = null;
      for (const [name, handler] of channels) unsubscribe(name, handler);
    },
  };
}
