/**
 * Seeded generator of mutated config.pbtxt texts for the config fuzz test: valid configs (given by the
 * caller) changed at the token level (drop, repeat, swap, insert field names, enum names, edge numbers,
 * strings with escapes, brackets), at the byte level (flip, truncate, insert), and structurally (a field's
 * value replaced, nesting thousands deep, a huge repeated field). The same seed and texts give the same
 * configs.
 */
import { createMulberry32 } from "@tbench/model-builder/prng";

/** A config text and what was done to it. */
export interface FuzzConfig {
  readonly text: string;
  readonly description: string;
}

const TOKEN =
  /"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|#[^\n]*|[A-Za-z_][A-Za-z0-9_.]*|-?[0-9][0-9A-Za-z_.+-]*|\S/g;
const FIELDS = [
  "name",
  "platform",
  "backend",
  "max_batch_size",
  "input",
  "output",
  "data_type",
  "dims",
  "reshape",
  "shape",
  "format",
  "optional",
  "is_shape_tensor",
  "label_filename",
  "dynamic_batching",
  "preferred_batch_size",
  "max_queue_delay_microseconds",
  "preserve_ordering",
  "priority_levels",
  "default_priority_level",
  "default_queue_policy",
  "priority_queue_policy",
  "max_queue_size",
  "timeout_action",
  "default_timeout_microseconds",
  "allow_timeout_override",
  "instance_group",
  "count",
  "kind",
  "gpus",
  "version_policy",
  "latest",
  "num_versions",
  "specific",
  "versions",
  "all",
  "parameters",
  "key",
  "value",
  "string_value",
  "ensemble_scheduling",
  "step",
  "model_name",
  "model_version",
  "input_map",
  "output_map",
  "sequence_batching",
  "model_warmup",
  "default_model_filename",
  "optimization",
  "unknown_field",
];
const VALUES = [
  "TYPE_INT32",
  "TYPE_FP32",
  "TYPE_STRING",
  "TYPE_BF16",
  "TYPE_INVALID",
  "KIND_CPU",
  "KIND_GPU",
  "KIND_MODEL",
  "REJECT",
  "DELAY",
  "FORMAT_NCHW",
  "true",
  "false",
  "inf",
  "-inf",
  "nan",
  "0",
  "-1",
  "-0",
  "1e400",
  "0x7fffffffffffffff",
  "0xffffffffffffffff",
  "18446744073709551616",
  "9007199254740993",
  "-9223372036854775809",
  "2147483648",
  "1.5",
  ".5e-3",
  "0777",
  "08",
  '"onnxruntime_onnx"',
  '"ensemble"',
  '"model.onnx"',
  '"../../etc/passwd"',
  '"\\x41\\101\\u00e9\\U0001F600"',
  '"\\777"',
  '"\\u"',
  '"\\xZZ"',
  "'single'",
  '"unterminated',
  '""',
];
const SYMBOLS = ["{", "}", "[", "]", ":", ",", ";", "<", ">", "-", "#", "\\", "\u0000", "é", "\u2028"];

/** Builds configs from `seed` by mutating `bases` (valid config.pbtxt texts). */
export function createConfigFuzzer(seed: number, bases: readonly string[]) {
  if (bases.length === 0) throw new Error("createConfigFuzzer: expected at least one base config");
  const random = createMulberry32(seed);
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const tokenized = bases.map((text) => text.match(TOKEN) ?? []);

  const randomToken = (): string => {
    switch (int(3)) {
      case 0:
        return pick(FIELDS);
      case 1:
        return pick(VALUES);
      default:
        return pick(SYMBOLS);
    }
  };

  const tokenMutation = (tokens: string[]): string => {
    const at = int(tokens.length + 1);
    switch (int(6)) {
      case 0:
        tokens.splice(at, 1 + int(3));
        return "drop tokens";
      case 1:
        tokens.splice(at, 0, ...tokens.slice(at, at + 1 + int(4)));
        return "repeat tokens";
      case 2: {
        const other = int(tokens.length);
        const a = tokens[at];
        const b = tokens[other];
        if (a !== undefined && b !== undefined) {
          tokens[at] = b;
          tokens[other] = a;
        }
        return "swap tokens";
      }
      case 3:
        tokens.splice(at, 0, randomToken());
        return "insert token";
      case 4:
        tokens.splice(at, 1, randomToken());
        return "replace token";
      default: {
        // A value after a field name: the commonest way a hand-written config goes wrong.
        const i = tokens.indexOf(":", at);
        if (i >= 0) tokens.splice(i + 1, 1, pick(VALUES));
        return "replace value";
      }
    }
  };

  const byteMutation = (text: string): { text: string; what: string } => {
    const at = int(text.length + 1);
    switch (int(3)) {
      case 0:
        return {
          text: text.slice(0, at) + String.fromCharCode(int(256)) + text.slice(at + 1),
          what: "flip char",
        };
      case 1:
        return { text: text.slice(0, at), what: "truncate" };
      default:
        return { text: text.slice(0, at) + pick(SYMBOLS) + text.slice(at), what: "insert char" };
    }
  };

  /** The next config. */
  return function next(): FuzzConfig {
    const base = int(bases.length);
    const kind = int(40);
    if (kind === 0) {
      // Deep nesting: a parser that recurses per level must fail cleanly, not overflow its stack.
      const depth = pick([100, 1000, 10_000, 100_000]);
      const field = pick(["dynamic_batching", "parameters", "input", "x"]);
      const open = pick([`${field} {`, `${field}: {`, `${field} [{`, "["]);
      return { text: `${open.repeat(depth)}${"}".repeat(int(2) * depth)}`, description: `nest ${depth}` };
    }
    if (kind === 1) {
      // A huge repeated field: bounded work, no quadratic blow-up.
      const count = pick([1000, 10_000]);
      const item = pick([
        "dims: 1 ",
        "preferred_batch_size: 4 ",
        'input { name: "I" data_type: TYPE_INT32 dims: 1 } ',
      ]);
      return { text: `${bases[base]}\n${item.repeat(count)}`, description: `repeat ${count}` };
    }
    const tokens = [...tokenized[base]!];
    const steps: string[] = [];
    const count = kind < 24 ? 1 : kind < 34 ? 2 + int(3) : 0;
    for (let i = 0; i < count; i++) steps.push(tokenMutation(tokens));
    let text = tokens.join(pick([" ", "\n", "\t"]));
    if (kind >= 34) {
      const mutated = byteMutation(text);
      text = mutated.text;
      steps.push(mutated.what);
    }
    return { text, description: `base ${base}: ${steps.join(", ")}` };
  };
}
