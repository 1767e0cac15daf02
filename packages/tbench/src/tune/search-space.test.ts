import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { UsageError } from "../run/usage-error.js";
import {
  autoPreferredSizes,
  candidateConfig,
  defaultSearchSpace,
  expandSearchSpace,
  isCurrentSettings,
  type ModelConfigJson,
  resolveSearchSpace,
} from "./search-space.js";

/** heavy's config as the server prints it: Triton fills preferred_batch_size with max_batch_size. */
const HEAVY: ModelConfigJson = {
  name: "heavy",
  max_batch_size: 32,
  dynamic_batching: {
    preferred_batch_size: [32],
    max_queue_delay_microseconds: "1000",
    preserve_ordering: false,
    priority_levels: "0",
  },
  instance_group: [{ name: "heavy_0", kind: "KIND_CPU", count: 1, gpus: [] }],
};

describe("tune search space", () => {
  it("derives defaults from the model's config", () => {
    assert.deepEqual(defaultSearchSpace(HEAVY), {
      batching: ["off", "on"],
      maxQueueDelayUs: [0, 1000, 4000],
      preferredBatchSize: ["none"],
      maxBatchSize: [32],
      instanceCount: [1, 2],
    });
    const noBatch = { ...HEAVY, max_batch_size: 0, instance_group: [{ count: 3 }] };
    delete (noBatch as Record<string, unknown>)["dynamic_batching"];
    assert.deepEqual(defaultSearchSpace(noBatch), {
      batching: ["off"],
      maxQueueDelayUs: [0, 500, 2000],
      preferredBatchSize: ["none"],
      maxBatchSize: [0],
      instanceCount: [3, 6],
    });
  });

  it("expands off once per instance count, on per delay and preferred sizes, instances fastest", () => {
    const space = resolveSearchSpace(
      {
        batching: "off,on",
        maxQueueDelayUs: "0,2000",
        preferredBatchSize: "none,auto",
        instanceCount: "1,2",
      },
      HEAVY,
    );
    const labels = expandSearchSpace(space, HEAVY).map((c) => c.label);
    assert.deepEqual(labels, [
      "off inst=1",
      "off inst=2",
      "on delay=0us inst=1",
      "on delay=0us inst=2",
      "on delay=0us pref=auto inst=1",
      "on delay=0us pref=auto inst=2",
      "on delay=2000us inst=1",
      "on delay=2000us inst=2",
      "on delay=2000us pref=auto inst=1",
      "on delay=2000us pref=auto inst=2",
    ]);
    const groups = new Set(expandSearchSpace(space, HEAVY).map((c) => c.group));
    assert.equal(groups.size, 5);
  });

  it("names max_batch_size in labels when it varies, and reads explicit preferred lists", () => {
    const space = resolveSearchSpace(
      {
        batching: "on",
        maxQueueDelayUs: "100",
        preferredBatchSize: "4+8",
        maxBatchSize: "8,16",
        instanceCount: "1",
      },
      HEAVY,
    );
    const candidates = expandSearchSpace(space, HEAVY);
    assert.deepEqual(
      candidates.map((c) => c.label),
      ["mbs=8 on delay=100us pref=4+8 inst=1", "mbs=16 on delay=100us pref=4+8 inst=1"],
    );
    assert.deepEqual(candidates[0]?.preferredBatchSize, [4, 8]);
    assert.deepEqual(autoPreferredSizes(32), [2, 4, 8, 16, 32]);
    assert.deepEqual(autoPreferredSizes(12), [2, 4, 8, 12]);
  });

  it("builds each candidate's config from the original, keeping the other fields", () => {
    const [off, on] = expandSearchSpace(
      resolveSearchSpace({ batching: "off,on", maxQueueDelayUs: "250", instanceCount: "2" }, HEAVY),
      HEAVY,
    );
    const offConfig = candidateConfig(HEAVY, off!);
    assert.equal(offConfig["dynamic_batching"], undefined);
    assert.deepEqual(offConfig["instance_group"], [
      { name: "heavy_0", kind: "KIND_CPU", count: 2, gpus: [] },
    ]);
    const onConfig = candidateConfig(HEAVY, on!);
    assert.deepEqual(onConfig["dynamic_batching"], {
      preferred_batch_size: [],
      max_queue_delay_microseconds: "250",
      preserve_ordering: false,
      priority_levels: "0",
    });
    // The original is not touched.
    assert.equal((HEAVY["instance_group"] as { count: number }[])[0]?.count, 1);
  });

  it("recognises the settings the model runs with now", () => {
    const candidates = expandSearchSpace(defaultSearchSpace(HEAVY), HEAVY);
    assert.deepEqual(
      candidates.filter((c) => isCurrentSettings(HEAVY, c)).map((c) => c.label),
      ["on delay=1000us inst=1"],
    );
  });

  it("refuses bad lists naming the flag, what was expected and what was given", () => {
    const cases: [Parameters<typeof resolveSearchSpace>[0], RegExp][] = [
      [{ batching: "off,maybe" }, /^--batching: expected a list of off\|on, got "maybe"$/],
      [{ maxQueueDelayUs: "0,-5" }, /^--max-queue-delay-us: expected a list of microseconds .*got "-5"$/],
      [{ instanceCount: "0" }, /^--instance-count: expected .*>= 1.*got "0"$/],
      [{ instanceCount: "1,,2" }, /^--instance-count: expected a comma-separated list with no empty items/],
      [
        { preferredBatchSize: "4+x" },
        /^--preferred-batch-size: expected none, auto or sizes joined by \+.*got "4\+x"$/,
      ],
      [{ maxBatchSize: "big" }, /^--max-batch-size: expected a list of batch sizes.*got "big"$/],
    ];
    for (const [flags, message] of cases) {
      assert.throws(
        () => resolveSearchSpace(flags, HEAVY),
        (e: unknown) => e instanceof UsageError && message.test(e.message),
      );
    }
  });
});
