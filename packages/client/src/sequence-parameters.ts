/**
 * A request's sequence fields, checked once for both transports. Triton's sequence batcher tells the
 * requests of a stateful sequence by a correlation id and START / END flags, carried as the request
 * parameters `sequence_id`, `sequence_start` and `sequence_end` (HTTP JSON and gRPC InferParameter alike).
 * What can never work is refused with InvalidArgumentError before anything is sent: an id that is no
 * uint64 or string, 0 or "" (Triton's "no sequence", which a sequence model answers with an error), a string
 * over 128 characters, a flag that is no boolean, a START or END flag without any id, and a typed field
 * given together with the same key in `parameters`.
 */
import { InvalidArgumentError } from "./errors.js";
import type { InferRequest, Parameters, SequenceId } from "./tensor-types.js";

/** The longest string sequence id Triton takes, in characters (Unicode code points). */
export const MAX_SEQUENCE_ID_LENGTH = 128;

const UINT64_MAX = 2n ** 64n - 1n;

/** A request's sequence fields, checked: what the encoders write. */
export interface SequenceParameters {
  /** `sequence_id`: a uint64 as a bigint (1..2^64-1), or a string of 1 to 128 characters. */
  readonly id: bigint | string | undefined;
  /** `sequence_start`, when given. */
  readonly start: boolean | undefined;
  /** `sequence_end`, when given. */
  readonly end: boolean | undefined;
}

const ALLOWED =
  "a safe integer >= 1, a bigint in 1..2^64-1, or a string of 1 to " + `${MAX_SEQUENCE_ID_LENGTH} characters`;

/** How a value reads in an error message (a long string is cut, with its length). */
function shown(value: unknown): string {
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "string") {
    const length = [...value].length;
    return length > 40
      ? `${JSON.stringify(value.slice(0, 32))}... (${length} characters)`
      : JSON.stringify(value);
  }
  if (typeof value === "number") return Object.is(value, -0) ? "-0" : String(value);
  return value === null ? "null" : `a ${typeof value}`;
}

/**
 * `value` as a sequence id: a bigint (numbers converted) or the string. InvalidArgumentError naming `where`,
 * the value and what is allowed when it is none.
 */
export function checkSequenceId(value: unknown, where: string): bigint | string {
  let reason: string | undefined;
  if (typeof value === "number") {
    if (Number.isSafeInteger(value) && value >= 1) return BigInt(value);
    reason =
      value === 0
        ? "0 means no sequence to Triton"
        : Number.isInteger(value) && value > 0
          ? "a number above 2^53-1 is not exact; give a bigint"
          : "it is not an unsigned integer";
  } else if (typeof value === "bigint") {
    if (value >= 1n && value <= UINT64_MAX) return value;
    reason = value === 0n ? "0 means no sequence to Triton" : "it is outside the uint64 range";
  } else if (typeof value === "string") {
    const length = [...value].length;
    if (length >= 1 && length <= MAX_SEQUENCE_ID_LENGTH) return value;
    reason =
      length === 0 ? '"" means no sequence to Triton' : `Triton takes at most ${MAX_SEQUENCE_ID_LENGTH}`;
  } else {
    reason = "it is neither a number, a bigint nor a string";
  }
  throw new InvalidArgumentError(
    `${where}: sequenceId ${shown(value)} is refused (${reason}); give ${ALLOWED}`,
  );
}

function checkFlag(value: unknown, field: string, where: string): boolean | undefined {
  if (value === undefined || typeof value === "boolean") return value;
  throw new InvalidArgumentError(`${where}: ${field} must be true or false, got ${shown(value)}`);
}

function has(parameters: Parameters | undefined, key: string): boolean {
  return parameters !== undefined && Object.hasOwn(parameters, key);
}

/** The typed field `field` and the parameter `key` both given: refused, whatever the values. */
function refuseConflict(request: InferRequest, field: string, key: string, where: string): void {
  if (has(request.parameters, key)) {
    throw new InvalidArgumentError(
      `${where}: ${field} and parameters.${key} are both given; give only ${field}`,
    );
  }
}

/**
 * The request's sequence fields, checked, or undefined when it has none (the common case costs three
 * comparisons). Throws InvalidArgumentError as the module comment says; `where` prefixes the message.
 */
export function sequenceParametersOf(request: InferRequest, where = "infer"): SequenceParameters | undefined {
  const { sequenceId, sequenceStart, sequenceEnd } = request;
  if (sequenceId === undefined && sequenceStart === undefined && sequenceEnd === undefined) return undefined;
  let id: bigint | string | undefined;
  if (sequenceId !== undefined) {
    refuseConflict(request, "sequenceId", "sequence_id", where);
    id = checkSequenceId(sequenceId, where);
  }
  const start = checkFlag(sequenceStart, "sequenceStart", where);
  const end = checkFlag(sequenceEnd, "sequenceEnd", where);
  if (start !== undefined) refuseConflict(request, "sequenceStart", "sequence_start", where);
  if (end !== undefined) refuseConflict(request, "sequenceEnd", "sequence_end", where);
  if ((start === true || end === true) && id === undefined && !has(request.parameters, "sequence_id")) {
    const flag = start === true ? "sequenceStart" : "sequenceEnd";
    throw new InvalidArgumentError(
      `${where}: ${flag} is true but the request has no sequence id; give sequenceId too`,
    );
  }
  return { id, start, end };
}

/** The sequence id as it reads in messages. */
export function sequenceIdText(id: SequenceId): string {
  return typeof id === "string" ? JSON.stringify(id) : String(id);
}
