import { decodeHistogram, encodeHistogram, mergeHistograms } from "../stats/histogram.js";
import { mergeMoments } from "../stats/latency-stats.js";
import type { RequestRecord, WindowPart } from "./window-recorder.js";

/** A {@link WindowPart} with its histograms encoded, so it can cross a thread (or a file) losslessly. */
export type EncodedWindowPart = Omit<WindowPart, "latency" | "uncorrected" | "sendDelay"> & {
  latency: string;
  uncorrected: string | undefined;
  sendDelay: string | undefined;
};

/** Encodes a window part for postMessage. */
export function encodeWindowPart(part: WindowPart): EncodedWindowPart {
  return {
    ...part,
    latency: encodeHistogram(part.latency),
    uncorrected: part.uncorrected === undefined ? undefined : encodeHistogram(part.uncorrected),
    sendDelay: part.sendDelay === undefined ? undefined : encodeHistogram(part.sendDelay),
  };
}

/** Decodes a window part encoded by {@link encodeWindowPart}. */
export function decodeWindowPart(part: EncodedWindowPart): WindowPart {
  return {
    ...part,
    latency: decodeHistogram(part.latency),
    uncorrected: part.uncorrected === undefined ? undefined : decodeHistogram(part.uncorrected),
    sendDelay: part.sendDelay === undefined ? undefined : decodeHistogram(part.sendDelay),
  };
}

/** Adds window parts (from several workers, or several consecutive windows): counts, histograms, records. */
export function mergeWindowParts(parts: readonly WindowPart[]): WindowPart {
  const errorsByKind: Record<string, number> = {};
  let requests: RequestRecord[] | undefined;
  for (const part of parts) {
    for (const [kind, count] of Object.entries(part.errorsByKind)) {
      errorsByKind[kind] = (errorsByKind[kind] ?? 0) + count;
    }
    if (part.requests !== undefined) requests = (requests ?? []).concat(part.requests);
  }
  const withUncorrected = parts.filter((p) => p.uncorrected !== undefined);
  const sendDelays = parts.map((p) => p.sendDelay).filter((h) => h !== undefined);
  const sequenceEnds = parts.map((p) => p.sequenceEndCount).filter((n) => n !== undefined);
  return {
    sentCount: sum(parts, (p) => p.sentCount),
    successCount: sum(parts, (p) => p.successCount),
    errorCount: sum(parts, (p) => p.errorCount),
    errorsByKind,
    lateSendCount: sum(parts, (p) => p.lateSendCount),
    maxSendLagUs: Math.max(0, ...parts.map((p) => p.maxSendLagUs)),
    sendDelay: sendDelays.length === 0 ? undefined : mergeHistograms(sendDelays),
    latency: mergeHistograms(parts.map((p) => p.latency)),
    latencyMoments: mergeMoments(parts.map((p) => p.latencyMoments)),
    uncorrected:
      withUncorrected.length === 0 ? undefined : mergeHistograms(withUncorrected.map((p) => p.uncorrected!)),
    uncorrectedMoments:
      withUncorrected.length === 0
        ? undefined
        : mergeMoments(withUncorrected.map((p) => p.uncorrectedMoments!)),
    requests,
    http: {
      count: sum(parts, (p) => p.http.count),
      sendNs: sum(parts, (p) => p.http.sendNs),
      recvNs: sum(parts, (p) => p.http.recvNs),
      requestNs: sum(parts, (p) => p.http.requestNs),
    },
    sequenceEndCount: sequenceEnds.length === 0 ? undefined : sum(sequenceEnds, (n) => n),
  };
}

function sum<T>(items: readonly T[], pick: (item: T) => number): number {
  let total = 0;
  for (const item of items) total += pick(item);
  return total;
}
