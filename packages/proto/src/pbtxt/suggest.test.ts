import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { editDistance, suggestName } from "./suggest.js";

describe("did-you-mean suggestions", () => {
  test("edit distance counts insertions, deletions, substitutions and transpositions", () => {
    assert.equal(editDistance("", ""), 0);
    assert.equal(editDistance("abc", ""), 3);
    assert.equal(editDistance("max_batchsize", "max_batch_size"), 1);
    assert.equal(editDistance("TYPE_FP23", "TYPE_FP32"), 1);
    assert.equal(editDistance("kitten", "sitting"), 3);
  });

  test("picks the closest candidate within the limit, else undefined", () => {
    const fields = ["name", "platform", "max_batch_size", "input", "output", "instance_group"];
    assert.equal(suggestName("max_batchsize", fields), "max_batch_size");
    assert.equal(suggestName("MaxBatchSize", fields), "max_batch_size");
    assert.equal(suggestName("inptu", fields), "input");
    assert.equal(suggestName("instance_groups", fields), "instance_group");
    assert.equal(suggestName("nam", fields), "name");
    assert.equal(suggestName("plat", fields), "platform");
    assert.equal(suggestName("xyz", fields), undefined);
    assert.equal(suggestName("dims", fields), undefined);
  });
});
