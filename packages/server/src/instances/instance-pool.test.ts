/**
 * The pool on fake instances (startInstance injected): a batch for a named instance runs there and only
 * there, `hasIdleInstance` says whether that one could take it, and an instance's death is reported with
 * its index and name (replacing, then not replaced when its replacement fails), while the any-instance
 * path goes on as before.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { silentLogger } from "../core/logger.js";
import { createInstancePool, type InstanceLoss } from "./instance-pool.js";
import type { InstanceRun, ModelInstanceOptions, StartedInstance } from "./instance-types.js";
import type { WorkerInit } from "./worker-protocol.js";

interface Fake {
  readonly name: string;
  readonly batches: InstanceRun[];
  /** Ends the instance as a dying worker does. */
  die(reason: string): void;
  /** Answers its oldest batch. */
  answer(): void;
}

function fakes(failStarts = 0) {
  const started: Fake[] = [];
  let failures = failStarts;
  const startInstance = async (options: ModelInstanceOptions): Promise<StartedInstance> => {
    if (started.length >= 2 && failures-- > 0) throw new Error("no session today");
    const pending: { resolve: () => void; reject: (error: Error) => void }[] = [];
    const fake: Fake = {
      name: options.init.instanceName,
      batches: [],
      die(reason) {
        for (const run of pending.splice(0))
          run.reject(new Error(`died while running the request: ${reason}`));
        options.onExit?.(reason);
      },
      answer: () => pending.shift()?.resolve(),
    };
    started.push(fake);
    return {
      instance: {
        name: options.init.instanceName,
        run(batch) {
          fake.batches.push(batch);
          return new Promise((resolve, reject) =>
            pending.push({
              resolve: () => resolve({ outputs: [], inputNs: 0, inferNs: 0, outputNs: 0 }),
              reject,
            }),
          );
        },
        close: async () => {},
        setExitHandler: () => {},
      },
      info: { inputs: [], outputs: [], provider: "cpu" },
    };
  };
  return { started, startInstance };
}

const init = (name: string): WorkerInit => ({
  modelPath: "/nowhere/model.onnx",
  instanceName: name,
  intraOpThreads: 1,
  interOpThreads: 1,
});

const batch = (tag: string): InstanceRun => ({ inputs: [], outputNames: [tag], transfer: [] });

async function pool(failStarts = 0) {
  const { started, startInstance } = fakes(failStarts);
  const losses: InstanceLoss[] = [];
  const created = await createInstancePool({
    modelName: "seq",
    version: "1",
    inits: [init("seq_0"), init("seq_1")],
    logger: silentLogger,
    onIdle: () => {},
    onInstanceLost: (loss) => losses.push(loss),
    startInstance,
  });
  return { pool: created, started, losses };
}

describe("instance pool: a batch for a named instance", () => {
  it("runs on that instance only; hasIdleInstance says whether it could take one now", async () => {
    const { pool: p, started } = await pool();
    assert.equal(p.hasIdleInstance(1), true);
    const running = p.run(batch("b1"), { instance: 1 });
    assert.deepEqual(
      started.map((f) => f.batches.map((b) => b.outputNames[0])),
      [[], ["b1"]],
    );
    assert.equal(p.hasIdleInstance(0), true);
    assert.equal(p.hasIdleInstance(5), false, "no such instance");
    // The any-instance path takes the idle one, as before.
    const any = p.run(batch("any"));
    assert.deepEqual(started[0]!.batches[0]!.outputNames, ["any"]);
    started[1]!.answer();
    started[0]!.answer();
    await Promise.all([running, any]);
    await p.close();
    assert.equal(p.hasIdleInstance(0), false, "closed");
    await assert.rejects(p.run(batch("late"), { instance: 0 }), { status: "UNAVAILABLE" });
  });

  it("an instance's death is reported with its index and name, and its batch is not run elsewhere", async () => {
    const { pool: p, started, losses } = await pool();
    const doomed = p.run(batch("b0"), { instance: 0 });
    started[0]!.die("worker exited with code 70");
    assert.deepEqual(losses, [
      { index: 0, name: "seq_0", reason: "worker exited with code 70", replacing: true },
    ]);
    assert.equal(p.hasIdleInstance(0), false, "being replaced");
    await assert.rejects(doomed, /died while running the request: worker exited with code 70/);
    assert.equal(started[1]!.batches.length, 0, "not run again on instance 1");
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(p.hasIdleInstance(0), true, "the replacement is up");
    assert.equal(started.length, 3);
    await p.close();
  });

  it("a replacement that fails to start is reported as not replacing", async () => {
    const { pool: p, started, losses } = await pool(1);
    started[1]!.die("worker exited with code 70");
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      losses.map((l) => [l.index, l.replacing]),
      [
        [1, true],
        [1, false],
      ],
    );
    assert.match(losses[1]!.reason, /its replacement failed to start: Error: no session today/);
    assert.equal(p.hasIdleInstance(1), false);
    assert.equal(p.hasIdleInstance(0), true);
    await p.close();
  });
});
