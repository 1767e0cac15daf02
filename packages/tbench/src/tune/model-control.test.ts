import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConnectionError, type InferenceClient } from "@tbench/client";
import { createModelControl, restoreInstructions } from "./model-control.js";

const ORIGINAL = { name: "m", max_batch_size: 8, dynamic_batching: { max_queue_delay_microseconds: "100" } };

/** A client double (injected through options) whose server is down for `downFor` calls, then serves `config`. */
function fakeClient(downFor: number, fromRepository: Record<string, unknown>) {
  let calls = 0;
  let serving: Record<string, unknown> = { name: "m", max_batch_size: 8 };
  const loads: (string | undefined)[] = [];
  const reachable = () => {
    calls += 1;
    if (calls <= downFor) throw new ConnectionError("connect ECONNREFUSED 127.0.0.1:1");
  };
  const client = {
    async loadModel(_model: string, request?: { config?: string }) {
      reachable();
      loads.push(request?.config);
      serving = request?.config === undefined ? fromRepository : JSON.parse(request.config);
    },
    async isModelReady() {
      reachable();
      return true;
    },
    async modelConfig() {
      reachable();
      return serving;
    },
  } as unknown as InferenceClient;
  return { client, loads };
}

describe("tune model control: restoring the original config", () => {
  let clock = 0;
  const timing = {
    now: () => clock,
    sleep: async (ms: number) => {
      clock += ms;
    },
  };

  it("reloads from the repository when that gives back the original", async () => {
    const { client, loads } = fakeClient(0, ORIGINAL);
    const outcome = await createModelControl({ client, model: "m", ...timing }).restore(ORIGINAL, 10_000);
    assert.deepEqual(outcome, { restored: true, how: "repository", error: undefined });
    assert.deepEqual(loads, [undefined]);
  });

  it("loads the original as an override when the repository holds something else", async () => {
    const { client, loads } = fakeClient(0, { name: "m", max_batch_size: 4 });
    const outcome = await createModelControl({ client, model: "m", ...timing }).restore(ORIGINAL, 10_000);
    assert.deepEqual(outcome, { restored: true, how: "override", error: undefined });
    assert.deepEqual(loads, [undefined, JSON.stringify(ORIGINAL)]);
  });

  it("retries while the server is down, within the time given", async () => {
    clock = 0;
    const { client } = fakeClient(5, ORIGINAL);
    const outcome = await createModelControl({ client, model: "m", ...timing }).restore(ORIGINAL, 10_000);
    assert.equal(outcome.restored, true);
    assert.ok(clock >= 2500 && clock <= 10_000, `waited ${clock} ms of simulated time`);
  });

  it("gives up after the time given, with the last error and the request to restore by hand", async () => {
    clock = 0;
    const { client } = fakeClient(Number.POSITIVE_INFINITY, ORIGINAL);
    const outcome = await createModelControl({ client, model: "m", ...timing }).restore(ORIGINAL, 3000);
    assert.equal(outcome.restored, false);
    assert.match(outcome.error ?? "", /ECONNREFUSED/);
    const text = restoreInstructions("http://127.0.0.1:8000", "m", ORIGINAL);
    assert.ok(text.includes("curl -X POST http://127.0.0.1:8000/v2/repository/models/m/load -d '"));
    assert.ok(text.includes(JSON.stringify({ parameters: { config: JSON.stringify(ORIGINAL) } })));
    assert.ok(text.endsWith(`${JSON.stringify(ORIGINAL)}\n`));
  });
});
