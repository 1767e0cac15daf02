/**
 * A front-end thread's own handle on the main thread's listening socket. Node 20 has no SO_REUSEPORT
 * (`reusePort` came in 22.12), and listening on the main thread's fd by number would close it twice, once
 * per thread. So a short-lived child process inherits the fd, wraps it in a net.Server and sends it back
 * over IPC: the handle that arrives holds a new fd (SCM_RIGHTS) of the same socket, which this thread alone
 * closes. The kernel then gives each new connection to whichever thread accepts first.
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { Server } from "node:net";

/**
 * The child: listen on the inherited fd 3 without accepting, send the server, exit once it is sent; a
 * failure is sent as its message instead.
 */
const CHILD_SOURCE =
  "const net = require('node:net');" +
  "const server = net.createServer({ pauseOnConnect: true });" +
  "server.once('error', (e) => process.send({ error: e.message }, () => process.exit(1)));" +
  "server.listen({ fd: 3 }, () => process.send('listening-socket', server, () => process.exit(0)));";

const FAILED = "cannot dup the HTTP listening socket";

/** Resolves with a listening net.Server on a dup of `fd`, once the child that made it has exited. */
export async function dupListeningSocket(fd: number): Promise<Server> {
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, ["-e", CHILD_SOURCE], {
      stdio: ["ignore", "inherit", "inherit", fd, "ipc"],
      // The child runs plain JavaScript: none of this process's loader hooks (tsx) is needed.
      env: { ...process.env, NODE_OPTIONS: "" },
    });
  } catch (error) {
    throw new Error(`${FAILED} (fd ${fd}): ${(error as Error).message}`);
  }
  return new Promise<Server>((resolve, reject) => {
    let received: Server | undefined;
    let reason: string | undefined;
    child.once("message", (message: unknown, handle: unknown) => {
      if (handle !== undefined) received = handle as Server;
      else reason = (message as { error?: string }).error;
    });
    child.once("error", (error) => reject(new Error(`${FAILED} (fd ${fd}): ${error.message}`)));
    child.once("exit", (code, signal) => {
      if (received !== undefined) resolve(received);
      else
        reject(
          new Error(
            `${FAILED} (fd ${fd}): ${reason ?? `the helper process exited (${signal ?? `code ${code}`}) without sending it`}`,
          ),
        );
    });
  });
}
