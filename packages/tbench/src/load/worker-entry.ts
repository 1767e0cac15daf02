// Entry point of a load worker thread (`--workers N`): builds its own sender and in-process driver and
// answers the commands of worker-driver.ts.
import { parentPort } from "node:worker_threads";
import { createLocalLoadDriver, type LoadDriver } from "./load-driver.js";
import type { RequestSender } from "./request-sender.js";
import { encodeWindowPart } from "./window-part.js";
import { WORKER_PROGRESS_INTERVAL_MS, type WorkerCommand, type WorkerMessage } from "./worker-protocol.js";

const port = parentPort;
if (port === null) throw new Error("worker-entry must run inside a worker thread");

let driver: LoadDriver | undefined;
let progressTimer: NodeJS.Timeout | undefined;

function post(message: WorkerMessage): void {
  port?.postMessage(message);
}

async function handle(command: WorkerCommand): Promise<unknown> {
  if (command.type === "init") {
    const module = (await import(command.init.senderModule)) as {
      createSender(spec: unknown): Promise<RequestSender>;
    };
    const sender = await module.createSender(command.init.senderSpec);
    driver = createLocalLoadDriver({
      sender,
      rate: command.init.rate,
      mode: command.init.mode,
      keepRequests: command.init.keepRequests,
      firstIndex: command.init.firstIndex,
      indexStride: command.init.indexStride,
      sequences: command.init.sequences,
    });
    progressTimer = setInterval(() => {
      if (driver !== undefined) post({ type: "progress", completed: driver.completedCount() });
    }, WORKER_PROGRESS_INTERVAL_MS);
    progressTimer.unref();
    return undefined;
  }
  if (driver === undefined) throw new Error(`worker received "${command.type}" before "init"`);
  switch (command.type) {
    case "apply":
      return driver.apply(command.level);
    case "budget":
      return driver.setBudget(command.requests);
    case "collect":
      return encodeWindowPart(await driver.collect());
    case "stop":
      return driver.stop();
    case "close":
      if (progressTimer !== undefined) clearInterval(progressTimer);
      await driver.close();
      port?.close();
      return undefined;
  }
}

port.on("message", (command: WorkerCommand) => {
  handle(command).then(
    (result) => post({ type: "reply", id: command.id, result }),
    (error: unknown) =>
      post({ type: "reply", id: command.id, error: error instanceof Error ? error.message : String(error) }),
  );
});
