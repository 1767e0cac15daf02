import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createTrace, tracedComponents } from "./trace.js";

describe("TBENCH_TRACE", () => {
  it("is silent by default and enables the named components", () => {
    assert.equal(createTrace("batcher", { env: {} }), undefined);
    assert.deepEqual([...tracedComponents({ TBENCH_TRACE: " Batcher, http " })], ["batcher", "http"]);
    const lines: string[] = [];
    const trace = createTrace("batcher", {
      env: { TBENCH_TRACE: "http,batcher" },
      write: (l) => lines.push(l),
    });
    trace?.("send batch 8");
    assert.deepEqual(lines, ["T batcher send batch 8"]);
    assert.equal(createTrace("batcher", { env: { TBENCH_TRACE: "http" } }), undefined);
    assert.notEqual(createTrace("batcher", { env: { TBENCH_TRACE: "all" } }), undefined);
  });
});
