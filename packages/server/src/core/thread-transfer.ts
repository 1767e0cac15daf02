/**
 * What crosses between threads by transfer and what by copy, for every thread hop of the server (model
 * instances, the HTTP front-end threads, the JSON decode threads): one threshold for all of them.
 */

/**
 * Buffers from this size up are transferred, smaller ones copied: detaching and adopting a buffer costs
 * more than copying a few KiB (bench/worker-hop-probe.mjs, two 64-byte inputs and a 64-byte output, three
 * runs each at load 1.1: 64.3-65.9 µs a round trip with transfer, 57.9-59.0 µs with copies).
 */
export const TRANSFER_MIN_BYTES = 64 * 1024;

/** The buffers of `buffers` worth transferring (see TRANSFER_MIN_BYTES). */
export function worthTransferring(buffers: Iterable<ArrayBuffer>): ArrayBuffer[] {
  const chosen: ArrayBuffer[] = [];
  for (const buffer of buffers) if (buffer.byteLength >= TRANSFER_MIN_BYTES) chosen.push(buffer);
  return chosen;
}
