// perf_analyzer's sequence flags, parsed as its command_line_parser.cc parses them, with its messages:
// errors are usage errors (one line, exit code 2), its two warnings go to `warn` and the default stays.
// Where perf_analyzer's std::stoi would read a number's leading digits and ignore the rest ("12abc", "5.5")
// tbench refuses the value with perf_analyzer's own "Invalid value provided" message.
import { DEFAULT_SEQUENCE_OPTIONS, type SequenceOptions } from "../load/sequence-manager.js";
import { UsageError } from "../run/usage-error.js";

/** The flags as commander hands them over. */
export interface RawSequenceFlags {
  sequenceLength?: string | undefined;
  sequenceLengthVariation?: string | undefined;
  sequenceIdRange?: string | undefined;
  numOfSequences?: string | undefined;
  serialSequences?: boolean | undefined;
}

export const SEQUENCE_LENGTH_WARNING =
  "WARNING: The sequence length must be > 0. Perf Analyzer will use default value if it is measuring on sequence model.";
export const START_SEQUENCE_ID_WARNING =
  "WARNING: using an invalid start sequence id. Perf Analyzer will use default value if it is measuring on sequence model.";

/** std::stoi's int range: a larger value makes perf_analyzer fail (std::out_of_range). */
const INT32_MAX = 2 ** 31 - 1;

function invalid(flag: string, text: string): UsageError {
  return new UsageError(`Failed to parse --${flag}. Invalid value provided: ${text}`);
}

/** A whole number as std::stoi reads one (optional sign, decimal digits), or a usage error naming the flag. */
function integer(flag: string, part: string, whole: string): number {
  if (!/^\s*[+-]?\d+$/.test(part)) throw invalid(flag, whole);
  const value = Number(part);
  if (Math.abs(value) > INT32_MAX) throw invalid(flag, whole);
  return value;
}

/** `--sequence-id-range start[:end]`: the start id and how many ids (`end - start`, end excluded). */
function parseIdRange(text: string): { start: number; range: number | undefined } {
  const parts = text.split(":");
  if (parts.length > 2) {
    throw new UsageError("Failed to parse --sequence-id-range. The value does not match <start:end>.");
  }
  const start = integer("sequence-id-range", parts[0] ?? "", text);
  const end = parts[1] === undefined ? undefined : integer("sequence-id-range", parts[1], text);
  if (start < 0 || (end !== undefined && end < 0)) {
    throw new UsageError("Failed to parse --sequence-id-range. The range values must be >= 0.");
  }
  // perf_analyzer refuses start > end only; start == end leaves it a range of no ids (and a modulo by 0
  // later), which the message's own words refuse too.
  if (end !== undefined && start >= end) {
    throw new UsageError(
      "Failed to parse --sequence-id-range. The 'end' value must be greater than 'start' value.",
    );
  }
  return { start, range: end === undefined ? undefined : end - start };
}

/** Resolves the sequence flags against perf_analyzer's defaults; `warn` gets its warnings. */
export function resolveSequenceFlags(raw: RawSequenceFlags, warn: (line: string) => void): SequenceOptions {
  const defaults = DEFAULT_SEQUENCE_OPTIONS;
  let length = defaults.length;
  if (raw.sequenceLength !== undefined) {
    const value = integer("sequence-length", raw.sequenceLength, raw.sequenceLength);
    if (value > 0) length = value;
    else warn(SEQUENCE_LENGTH_WARNING);
  }
  let lengthVariationPercent = defaults.lengthVariationPercent;
  if (raw.sequenceLengthVariation !== undefined) {
    const text = raw.sequenceLengthVariation;
    const value = text.trim() === "" ? Number.NaN : Number(text);
    if (!Number.isFinite(value)) throw invalid("sequence-length-variation", text);
    lengthVariationPercent = value;
  }
  let numOfSequences = defaults.numOfSequences;
  if (raw.numOfSequences !== undefined) {
    const value = integer("num-of-sequences", raw.numOfSequences, raw.numOfSequences);
    if (value <= 0) throw new UsageError("Failed to parse --num-of-sequences. The value must be > 0.");
    numOfSequences = value;
  }
  let idStart = defaults.idStart;
  let idRange = defaults.idRange;
  if (raw.sequenceIdRange !== undefined) {
    const parsed = parseIdRange(raw.sequenceIdRange);
    idStart = parsed.start;
    idRange = parsed.range ?? idRange;
  }
  // perf_analyzer checks these after every flag is read, in this order.
  if (lengthVariationPercent < 0) {
    throw new UsageError("Failed to parse --sequence-length-variation. The value must be >= 0.0.");
  }
  if (idStart === 0) {
    idStart = 1;
    warn(START_SEQUENCE_ID_WARNING);
  }
  return Object.freeze({
    length,
    lengthSpecified: raw.sequenceLength !== undefined,
    lengthVariationPercent,
    idStart,
    idRange,
    numOfSequences,
    serial: raw.serialSequences === true,
  });
}
