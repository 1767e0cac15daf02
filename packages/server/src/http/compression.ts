/**
 * Response compression as Triton chooses it: the Accept-Encoding entry among identity, gzip and deflate with
 * the highest q weight (first wins on ties); malformed entries are skipped.
 */
import { promisify } from "node:util";
import * as zlib from "node:zlib";

const gzip = promisify(zlib.gzip);
const deflate = promisify(zlib.deflate);
const Q_WEIGHT = /^\s*q=([0-9.]+)\s*$/;

/** A content coding the server can answer with. */
export type ResponseEncoding = "identity" | "gzip" | "deflate";

/** The encoding to answer with for an Accept-Encoding header value. */
export function negotiateEncoding(accept: string | undefined): ResponseEncoding {
  if (accept === undefined || accept === "") return "identity";
  let best: ResponseEncoding = "identity";
  let bestWeight = 0;
  for (const entry of accept.split(",")) {
    const semi = entry.indexOf(";");
    const type = (semi < 0 ? entry : entry.slice(0, semi)).trim();
    let weight = 1;
    if (semi >= 0) {
      const match = Q_WEIGHT.exec(entry.slice(semi + 1));
      if (match === null) continue;
      weight = Number(match[1]);
      if (!Number.isFinite(weight)) continue;
    }
    if ((type === "identity" || type === "gzip" || type === "deflate") && weight > bestWeight) {
      best = type;
      bestWeight = weight;
    }
  }
  return best;
}

/** Compresses `pieces` (concatenated) with `encoding`. */
export function compressBody(pieces: readonly Uint8Array[], encoding: "gzip" | "deflate"): Promise<Buffer> {
  const whole = pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces);
  return encoding === "gzip" ? gzip(whole) : deflate(whole);
}
