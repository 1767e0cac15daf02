/**
 * Writes a response body under back-pressure with a send timeout. A client that never reads its answer
 * must not make the server buffer it whole in the socket (a probe's 20 such clients of 60 MiB answers held
 * ~130 MB each, for minutes): the body goes out in slices, the next one only once the socket has drained,
 * so what waits in the socket's own buffer stays under a slice plus its high-water mark. A response that
 * makes no progress (no drain) for `sendTimeoutMs` has its connection cut, which releases the answer.
 */
import type { ServerResponse } from "node:http";

/** Largest piece handed to the socket at once; a slow reader pins at most about this much in Node. */
export const SEND_SLICE_BYTES = 256 * 1024;

/** What a writer reports when it cuts a connection. */
export type SendTimeoutListener = (res: ServerResponse, unsentBytes: number) => void;

/**
 * Ends `res` with `chunks` (headers already set, Content-Length included). `sendTimeoutMs` 0 turns the
 * timeout off (back-pressure still applies).
 */
export function writeBody(
  res: ServerResponse,
  chunks: readonly Uint8Array[],
  sendTimeoutMs: number,
  onTimeout: SendTimeoutListener,
): void {
  let total = 0;
  for (const chunk of chunks) total += chunk.byteLength;
  if (total <= SEND_SLICE_BYTES) {
    // The usual small answer: one corked write, watched only when the kernel did not take it at once.
    if (chunks.length === 1) res.end(chunks[0]);
    else {
      res.cork();
      for (let i = 0; i < chunks.length - 1; i++) res.write(chunks[i]);
      res.end(chunks[chunks.length - 1]);
    }
    if ((res.socket?.writableLength ?? 0) > 0) watchUntilFinished(res, total, sendTimeoutMs, onTimeout);
    return;
  }
  let index = 0;
  let offset = 0;
  let sent = 0;
  const watch = watchUntilFinished(res, total, sendTimeoutMs, onTimeout, () => total - sent);
  const pump = (): void => {
    watch.progress();
    while (index < chunks.length) {
      const chunk = chunks[index]!;
      const end = Math.min(chunk.byteLength, offset + SEND_SLICE_BYTES);
      const piece = offset === 0 && end === chunk.byteLength ? chunk : chunk.subarray(offset, end);
      sent += end - offset;
      offset = end;
      if (offset === chunk.byteLength) {
        index++;
        offset = 0;
      }
      if (index === chunks.length) {
        res.end(piece);
        return;
      }
      if (!res.write(piece)) {
        if (!res.destroyed) res.once("drain", pump);
        return;
      }
    }
  };
  res.once("close", () => res.off("drain", pump));
  pump();
}

interface Watch {
  /** The socket drained: the timeout starts again. */
  progress(): void;
}

/** Cuts `res`'s connection when it makes no progress for `timeoutMs`, until it finishes or closes. */
function watchUntilFinished(
  res: ServerResponse,
  total: number,
  timeoutMs: number,
  onTimeout: SendTimeoutListener,
  notHanded: () => number = () => 0,
): Watch {
  if (timeoutMs <= 0) return { progress() {} };
  let timer: NodeJS.Timeout | undefined;
  const fire = () => {
    const left = notHanded() + (res.socket?.writableLength ?? 0);
    onTimeout(res, Math.min(total, left));
    res.destroy();
  };
  const stop = () => clearTimeout(timer);
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(fire, timeoutMs);
    timer.unref();
  };
  res.once("finish", stop);
  res.once("close", stop);
  // The last slice can wait in the socket too: its drain is progress until the response finishes.
  const socket = res.socket;
  const onDrain = () => arm();
  socket?.on("drain", onDrain);
  const detach = () => socket?.off("drain", onDrain);
  res.once("finish", detach);
  res.once("close", detach);
  arm();
  return { progress: arm };
}
