/**
 * --http-max-connections (issue 14 "overload"): with a limit of 2, two kept-alive connections are served and
 * a third is closed unanswered as it is accepted; once one of the two closes, a new connection is served.
 */
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { after, before, describe, test } from "node:test";
import { silentLogger } from "../core/logger.js";
import { type RunningServer, startServer } from "../server.js";
import { createFixtureRepository, type FixtureRepository } from "../testing/test-fixtures.js";

let repository: FixtureRepository;
let server: RunningServer;

before(async () => {
  repository = createFixtureRepository({ simple: { config: "bundled" } });
  server = await startServer({
    modelRepository: repository.dir,
    httpPort: 0,
    metricsPort: false,
    logger: silentLogger,
    httpMaxConnections: 2,
  });
});
after(async () => {
  await server.close();
  repository.remove();
});

/** Opens a connection; resolves once connected. */
function open(): Promise<Socket> {
  const { hostname, port } = new URL(server.httpUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => resolve(socket));
    socket.once("error", reject);
  });
}

/**
 * Sends a kept-alive GET /v2/health/live; resolves with the status line, or "closed" when the server closed
 * the connection without an answer.
 */
function live(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let data = "";
    const onData = (chunk: Buffer) => {
      data += chunk.toString();
      if (data.includes("\r\n\r\n")) finish(data.split("\r\n")[0]!);
    };
    const onEnd = () => finish(data === "" ? "closed" : data.split("\r\n")[0]!);
    const finish = (result: string) => {
      socket.off("data", onData).off("end", onEnd).off("close", onEnd).off("error", onEnd);
      resolve(result);
    };
    socket.on("data", onData).on("end", onEnd).on("close", onEnd).on("error", onEnd);
    socket.write("GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n", () => {});
  });
}

describe("--http-max-connections", { timeout: 30_000 }, () => {
  test("a connection past the limit is closed unanswered; a freed slot serves again", async () => {
    const first = await open();
    const second = await open();
    assert.equal(await live(first), "HTTP/1.1 200 OK");
    assert.equal(await live(second), "HTTP/1.1 200 OK");
    const third = await open().catch(() => undefined);
    assert.equal(third === undefined ? "closed" : await live(third), "closed");
    third?.destroy();

    first.destroy();
    // The server learns of the close asynchronously: retry until a new connection is served (a state).
    let answer = "closed";
    while (answer === "closed") {
      const next = await open().catch(() => undefined);
      answer = next === undefined ? "closed" : await live(next);
      next?.destroy();
    }
    assert.equal(answer, "HTTP/1.1 200 OK");
    assert.equal(await live(second), "HTTP/1.1 200 OK");
    second.destroy();
  });
});
