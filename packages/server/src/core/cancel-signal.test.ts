import assert from "node:assert/strict";
import { test } from "node:test";
import { Cancellation, type CancelSignal } from "./cancel-signal.js";

test("Cancellation: listeners run once, in order, when cancelled; none after, as an AbortSignal's", () => {
  const cancellation = new Cancellation();
  const calls: string[] = [];
  cancellation.addEventListener("abort", () => calls.push("first"));
  cancellation.addEventListener("abort", () => calls.push("second"));
  assert.equal(cancellation.aborted, false);
  cancellation.abort();
  cancellation.abort();
  assert.equal(cancellation.aborted, true);
  assert.deepEqual(calls, ["first", "second"]);
  // An AbortSignal does not call a listener added after it aborted; neither does a Cancellation.
  cancellation.addEventListener("abort", () => calls.push("late"));
  assert.deepEqual(calls, ["first", "second"]);
});

test("an AbortSignal is a CancelSignal", () => {
  const controller = new AbortController();
  const signal: CancelSignal = controller.signal;
  let called = 0;
  signal.addEventListener("abort", () => called++, { once: true });
  controller.abort();
  assert.equal(signal.aborted, true);
  assert.equal(called, 1);
});
