/**
 * The numbers of a model configuration. In proto3-JSON form (as `parseModelConfig` returns it) 64-bit
 * fields are decimal strings; the core converts them once, here, with a range check, because a JavaScript
 * number holds integers exactly only up to 2^53 - 1.
 */
import { ServerError } from "../core/server-error.js";

/**
 * An int64/uint64 config value as a number (absent: 0). Throws INVALID_ARG naming `field` when the value
 * is not an integer JavaScript can hold exactly.
 */
export function int64Value(value: string | number | undefined, field: string): number {
  if (value === undefined) return 0;
  const number = Number(value);
  if (!Number.isSafeInteger(number)) {
    throw new ServerError(
      "INVALID_ARG",
      `${field} is ${value}, expected an integer of magnitude at most ${Number.MAX_SAFE_INTEGER}`,
    );
  }
  return number;
}

/** A repeated int64 config field (dims, reshape shape, versions) as numbers (absent: empty). */
export function int64List(values: readonly (string | number)[] | undefined, field: string): number[] {
  return values === undefined ? [] : values.map((value) => int64Value(value, field));
}

/** Dims as Triton prints them: `[-1,16]`. */
export function dimsToString(dims: readonly number[]): string {
  return `[${dims.join(",")}]`;
}
