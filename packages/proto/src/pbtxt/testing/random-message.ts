/**
 * Seeded generator of random messages in the object form, for round-trip tests of the text format codec:
 * edge values (integer limits, 2^64-1, NaN, infinities, -0, subnormals), strings with quotes, escapes,
 * control characters and astral characters, random bytes, nested messages up to a depth, oneofs with at
 * most one member set, maps over every key type.
 */
import { createMulberry32 } from "@tbench/model-builder/prng";
import type protobuf from "protobufjs";
import { INTEGER_RANGES } from "../scalar-values.js";
import { type FieldInfo, type MessageInfo, messageInfo, type ScalarType, type ValueKind } from "../schema.js";
import type { TextMessage, TextValue } from "../text-message.js";

/** Options of {@link createRandomMessageGenerator}. */
export interface RandomMessageOptions {
  /** Seed of the pseudo-random sequence. */
  seed: number;
  /** Deepest nesting of sub-messages (default 4). */
  maxDepth?: number;
  /** Probability that a field is set (default 0.5). */
  fieldProbability?: number;
}

const CHAR_POOL = [
  ..."abcXYZ019 _-./:",
  '"',
  "'",
  "\\",
  "\n",
  "\t",
  "\r",
  "\0",
  "\x07",
  "\x7f",
  "#",
  "{",
  "}",
  "é",
  "ß",
  "中",
  "\u2028",
  "😀",
  "\u{10FFFF}",
];

const DOUBLE_EDGES = [
  0,
  -0,
  1,
  -1,
  0.1,
  1e21,
  1e-7,
  5e-324,
  -1.7976931348623157e308,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
];

/** Returns a function that makes a new random message of `type` on each call. */
export function createRandomMessageGenerator(
  type: protobuf.Type,
  options: RandomMessageOptions,
): () => TextMessage {
  const random = createMulberry32(options.seed);
  const maxDepth = options.maxDepth ?? 4;
  const fieldProbability = options.fieldProbability ?? 0.5;
  const int = (n: number): number => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;

  function randomBigInt(min: bigint, max: bigint): bigint {
    const edge = int(4);
    if (edge === 0) return min;
    if (edge === 1) return max;
    const bits = (BigInt(int(2 ** 32)) << 32n) | BigInt(int(2 ** 32));
    return min + (bits % (max - min + 1n));
  }

  function randomDouble(): number {
    if (random() < 0.4) return pick(DOUBLE_EDGES);
    const view = new DataView(new ArrayBuffer(8));
    view.setUint32(0, int(2 ** 32));
    view.setUint32(4, int(2 ** 32));
    return random() < 0.5 ? view.getFloat64(0) : (random() - 0.5) * 10 ** (int(12) - 4);
  }

  function randomScalar(type: ScalarType): TextValue {
    switch (type) {
      case "double":
        return randomDouble();
      case "float":
        return Math.fround(randomDouble());
      case "bool":
        return random() < 0.5;
      case "string":
        return Array.from({ length: int(10) }, () => pick(CHAR_POOL)).join("");
      case "bytes":
        return Buffer.from(Array.from({ length: int(10) }, () => int(256))).toString("base64");
      default: {
        const range = INTEGER_RANGES[type];
        if (range === undefined) throw new Error(`no range for ${type}`);
        const value = randomBigInt(range.min, range.max);
        return range.wide ? value.toString() : Number(value);
      }
    }
  }

  function randomValue(kind: ValueKind, depth: number): TextValue {
    if (kind.kind === "enum") return pick(Object.keys(kind.type.values));
    if (kind.kind === "message") return randomMessage(kind.type, depth + 1);
    return randomScalar(kind.type);
  }

  function randomKey(field: FieldInfo): string {
    const keyKind = (field.mapEntry as MessageInfo).fields[0]?.value;
    if (keyKind?.kind !== "scalar") throw new Error("map keys are scalars");
    return String(randomScalar(keyKind.type));
  }

  function randomMessage(info: MessageInfo, depth: number): TextMessage {
    const message: TextMessage = {};
    const oneofChoice = new Map<string, string>();
    for (const [oneof, members] of info.oneofs) oneofChoice.set(oneof, pick(members));
    for (const field of info.fields) {
      if (random() >= fieldProbability) continue;
      if (field.oneof !== undefined && oneofChoice.get(field.oneof) !== field.name) continue;
      if (field.value.kind === "message" && depth >= maxDepth) continue;
      if (field.cardinality === "single") {
        message[field.name] = randomValue(field.value, depth);
      } else if (field.cardinality === "repeated") {
        message[field.name] = Array.from({ length: int(4) }, () => randomValue(field.value, depth));
      } else {
        const map: TextMessage = {};
        for (let n = int(4); n > 0; n--) {
          Object.defineProperty(map, randomKey(field), {
            value: randomValue(field.value, depth),
            writable: true,
            enumerable: true,
            configurable: true,
          });
        }
        message[field.name] = map;
      }
    }
    return message;
  }

  const info = messageInfo(type);
  return () => randomMessage(info, 0);
}
