/**
 * The body of one `--http-thread-count` front-end thread: the same createHttpFrontEnd as the main thread's,
 * listening on its own dup of the main thread's socket, with a core and a logger that forward to the main
 * thread (remote-core.ts, core-bridge.ts). Closes gracefully when asked, then lets the thread end.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { Logger } from "../../core/logger.js";
import { createHttpFrontEnd, type HttpFrontEndThread } from "../http-server.js";
import { dupListeningSocket } from "./listening-socket-dup.js";
import { createRemoteCore } from "./remote-core.js";
import type {
  FromFrontEndThread,
  FrontEndThreadInit,
  LogLevel,
  ToFrontEndThread,
} from "./thread-protocol.js";

const port = parentPort!;
const init = workerData as FrontEndThreadInit;
const post = (message: FromFrontEndThread, transfer: ArrayBuffer[] = []) =>
  port.postMessage(message, transfer);
const remote = createRemoteCore(post);
const line = (level: LogLevel) => (message: string) => post({ type: "log", level, message });
const logger: Logger = {
  info: line("info"),
  warn: line("warn"),
  error: line("error"),
  verbose: line("verbose"),
};

let frontEnd: HttpFrontEndThread | undefined;
let closing = false;

const close = async () => {
  if (closing) return;
  closing = true;
  await frontEnd?.close();
  post({ type: "closed", served: frontEnd?.requestsServed() ?? 0 });
  // Nothing else holds the thread: it ends once the port is closed.
  port.close();
};

port.on("message", (message: ToFrontEndThread) => {
  if (message.type === "close") void close();
  else remote.receive(message);
});

try {
  const handle = await dupListeningSocket(init.fd);
  try {
    frontEnd = await createHttpFrontEnd({ ...init.options, core: remote.core, logger, listenHandle: handle });
  } catch (error) {
    handle.close();
    throw error;
  }
  post({ type: "started" });
} catch (error) {
  post({ type: "failed", message: error instanceof Error ? error.message : String(error) });
  port.close();
}
