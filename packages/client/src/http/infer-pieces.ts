/**
 * An infer request body in pieces for the wire engine (Node only: its pieces are Buffers): the JSON header,
 * then each binary input's bytes as they are, so a large tensor goes from the caller's memory to the socket
 * without being copied into one body first (see http-client.ts).
 */
import type { InferRequest } from "../tensor-types.js";
import { encodeInferParts } from "./infer-encoding.js";

/** A request body in pieces: the JSON header, then each binary input's bytes as they are (no copy). */
export interface EncodedInferPieces {
  readonly pieces: Buffer[];
  /** Bytes in all pieces. */
  readonly length: number;
  readonly jsonLength: number | undefined;
}

/**
 * Encodes a request without assembling it: a TypedArray input's bytes are a view of the caller's memory,
 * which is sent as it is when the call is made (the wire engine writes the pieces one after the other).
 */
export function encodeInferRequestPieces(request: InferRequest): EncodedInferPieces {
  const { json, jsonLength, parts, binaryTotal } = encodeInferParts(request);
  const pieces: Buffer[] = [Buffer.from(json, "utf8")];
  for (const part of parts) pieces.push(Buffer.from(part.buffer, part.byteOffset, part.byteLength));
  return { pieces, length: jsonLength + binaryTotal, jsonLength: parts.length > 0 ? jsonLength : undefined };
}
