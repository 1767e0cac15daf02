import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createLocalLoadDriver } from "./load-driver.js";
import type { RequestSender, SequenceFields } from "./request-sender.js";
import { createSequenceLoad, type SequenceSettings } from "./sequence-load.js";
import { DEFAULT_SEQUENCE_OPTIONS } from "./sequence-manager.js";
import { splitSequenceSettings } from "./worker-driver.js";

interface Sent {
  index: number;
  sequence: SequenceFields | undefined;
  answer(error?: Error): void;
}

/** A sender whose answers the test gives by hand (or at once, with `instant`). */
function manualSender(instant = false): RequestSender & { sent: Sent[] } {
  const sent: Sent[] = [];
  return {
    sent,
    send(index, sequence) {
      return new Promise<void>((resolve, reject) => {
        const answer = (error?: Error) => (error === undefined ? resolve() : reject(error));
        sent.push({ index, sequence, answer });
        if (instant) setImmediate(answer);
      });
    },
    async close() {},
  };
}

function settings(options: Partial<SequenceSettings["options"]> = {}): SequenceSettings {
  return {
    options: { ...DEFAULT_SEQUENCE_OPTIONS, length: 3, lengthVariationPercent: 0, ...options },
    streamSteps: undefined,
    seed: 1,
  };
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("createSequenceLoad", () => {
  it("concurrency mode: each send takes a free sequence (FIFO); one request in flight per sequence", async () => {
    const sender = manualSender();
    let ends = 0;
    const load = createSequenceLoad({
      sender,
      settings: settings(),
      mode: "concurrency",
      recordSequenceEnd: () => ends++,
    });
    load.resize(2);
    const a = load.sender.send(100);
    const b = load.sender.send(101);
    await assert.rejects(load.sender.send(102), /no free sequence/);
    assert.deepEqual(
      sender.sent.map((s) => s.sequence),
      [
        { id: 1, start: true, end: false, dataIndex: 0 },
        { id: 2, start: true, end: false, dataIndex: 0 },
      ],
      "the ticket index is not the data index: a sequence's data comes from its stream",
    );
    sender.sent[1]!.answer();
    await b;
    void load.sender.send(103); // sequence 2 was freed first
    sender.sent[0]!.answer();
    await a;
    void load.sender.send(104);
    assert.deepEqual(
      sender.sent.slice(2).map((s) => [s.sequence?.id, s.sequence?.start, s.sequence?.end]),
      [
        [2, false, false],
        [1, false, false],
      ],
    );
    sender.sent[2]!.answer();
    await settle();
    void load.sender.send(105);
    assert.deepEqual(sender.sent[4]?.sequence, { id: 2, start: false, end: true, dataIndex: 0 });
    sender.sent[4]!.answer();
    await settle();
    assert.equal(ends, 1, "the END that completed counts one sequence");
  });

  it("a failed END is not a completed sequence; the sequence still ends client-side", async () => {
    const sender = manualSender();
    let ends = 0;
    const load = createSequenceLoad({
      sender,
      settings: settings({ length: 1 }),
      mode: "concurrency",
      recordSequenceEnd: () => ends++,
    });
    load.resize(1);
    const failed = load.sender.send(0);
    sender.sent[0]!.answer(new Error("refused"));
    await assert.rejects(failed, /refused/);
    assert.equal(ends, 0);
    void load.sender.send(1);
    assert.deepEqual(sender.sent[1]?.sequence, { id: 2, start: true, end: true, dataIndex: 0 });
  });

  it("request-rate mode: any sequence at random (seeded); a sequence's next request waits for its answer", async () => {
    const run = async () => {
      const sender = manualSender();
      const load = createSequenceLoad({
        sender,
        settings: settings({ length: 4, numOfSequences: 3 }),
        mode: "request_rate",
        recordSequenceEnd: () => {},
      });
      load.resize(3);
      const all = Array.from({ length: 60 }, (_, i) => load.sender.send(i));
      assert.ok(sender.sent.length <= 3, "one request per sequence on the wire; the others wait their turn");
      let answered = 0;
      while (answered < sender.sent.length) {
        const open = new Set<number>();
        for (const s of sender.sent.slice(answered)) {
          assert.ok(!open.has(s.sequence!.id), "never two requests of a sequence on the wire at once");
          open.add(s.sequence!.id);
        }
        for (const s of sender.sent.slice(answered)) s.answer();
        answered = sender.sent.length;
        await settle();
      }
      await Promise.all(all);
      return sender.sent.map((s) => s.sequence!);
    };
    const sent = await run();
    assert.equal(sent.length, 60);
    const byId = new Map<number, SequenceFields[]>();
    for (const sequence of sent) {
      const list = byId.get(sequence.id) ?? [];
      list.push(sequence);
      byId.set(sequence.id, list);
    }
    for (const [id, steps] of byId) {
      const flags = steps.map((s) => (s.start ? "S" : s.end ? "E" : "-")).join("");
      assert.match(flags, /^(S--E)*(S-{0,2})?$/, `sequence ${id}: ${flags}`);
    }
    const perSequence = [...byId.values()].map((steps) => steps.length);
    assert.notDeepEqual(perSequence, [20, 20, 20], "random, not round-robin");
    assert.deepEqual(await run(), sent, "the same seed picks the same sequences");
  });

  it("--serial-sequences: round-robin over free sequences, one in flight each", async () => {
    const sender = manualSender();
    const load = createSequenceLoad({
      sender,
      settings: settings({ numOfSequences: 2, serial: true }),
      mode: "request_rate",
      recordSequenceEnd: () => {},
    });
    load.resize(2);
    void load.sender.send(0);
    void load.sender.send(1);
    await assert.rejects(load.sender.send(2), /no free sequence/);
    sender.sent[0]!.answer();
    await settle();
    void load.sender.send(3);
    assert.deepEqual(
      sender.sent.map((s) => s.sequence?.id),
      [1, 2, 1],
    );
  });

  it("completeOngoing sends one END to each unfinished sequence, and waits for its answer", async () => {
    const sender = manualSender();
    const load = createSequenceLoad({
      sender,
      settings: settings({ length: 5 }),
      mode: "concurrency",
      recordSequenceEnd: () => {},
    });
    load.resize(3);
    const first = [0, 1, 2].map((i) => load.sender.send(i));
    for (const s of sender.sent) s.answer();
    await Promise.all(first);
    let done = false;
    const completing = load.completeOngoing().then(() => {
      done = true;
    });
    await settle();
    assert.deepEqual(
      sender.sent.slice(3).map((s) => s.sequence),
      [1, 2, 3].map((id) => ({ id, start: false, end: true, dataIndex: 0 })),
    );
    await settle();
    assert.equal(done, false, "waits for the answers");
    sender.sent[3]!.answer(new Error("a failed END is not retried"));
    sender.sent[4]!.answer();
    sender.sent[5]!.answer();
    await completing;
    await load.completeOngoing();
    assert.equal(sender.sent.length, 6, "nothing left open, nothing sent");
  });
});

describe("a sequence model's load driver", () => {
  it("ends every open sequence when the level changes and when the load stops", async () => {
    const sender = manualSender(true);
    const driver = createLocalLoadDriver({
      sender,
      rate: {
        distribution: "constant",
        seed: 1,
        customIntervalsMs: undefined,
        maxInFlight: Number.POSITIVE_INFINITY,
        rateShare: 1,
        phase: 0,
      },
      mode: "concurrency",
      keepRequests: false,
      sequences: {
        options: { ...DEFAULT_SEQUENCE_OPTIONS, length: 20, lengthVariationPercent: 20 },
        streamSteps: undefined,
        seed: 5,
      },
    });
    await driver.apply({ mode: "concurrency", value: 3 });
    while (sender.sent.length < 50) await settle();
    const before = sender.sent.length;
    await driver.apply({ mode: "concurrency", value: 2 });
    while (sender.sent.length < before + 60) await settle();
    await driver.stop();
    const stoppedAt = sender.sent.length;
    const part = await driver.collect();
    await driver.close();
    assert.equal(sender.sent.length, stoppedAt, "close after stop sends nothing more");

    // Every sequence starts with START, ends with END, and no request of it comes after its END.
    const byId = new Map<number, SequenceFields[]>();
    const ended = new Set<number>();
    for (const { sequence } of sender.sent) {
      assert.ok(sequence !== undefined);
      if (sequence.start) {
        assert.ok(!byId.has(sequence.id) || ended.has(sequence.id), `id ${sequence.id} restarted while open`);
        ended.delete(sequence.id);
        byId.set(sequence.id, []);
      }
      assert.ok(!ended.has(sequence.id), `id ${sequence.id} used after its END`);
      byId.get(sequence.id)?.push(sequence);
      if (sequence.end) ended.add(sequence.id);
    }
    assert.deepEqual(
      [...byId.keys()].filter((id) => !ended.has(id)),
      [],
      "no sequence is left open",
    );
    assert.ok(byId.size >= 5, "sequences ended and new ones started with new ids");
    assert.equal(typeof part.sequenceEndCount, "number");
  });

  it("with --workers, each worker has its share of the sequences and of the id range", () => {
    const shares = splitSequenceSettings(
      {
        options: { ...DEFAULT_SEQUENCE_OPTIONS, idStart: 10, idRange: 7, numOfSequences: 5 },
        streamSteps: [2],
        seed: 3,
      },
      2,
    );
    assert.deepEqual(
      shares.map((s) => [s.options.idStart, s.options.idRange, s.options.numOfSequences, s.seed]),
      [
        [10, 4, 3, 3],
        [14, 3, 2, 4],
      ],
    );
  });
});
