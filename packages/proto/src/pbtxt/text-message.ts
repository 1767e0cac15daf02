/**
 * The object form of a message, shared by the whole project: the proto3 JSON mapping with the original
 * (.proto, snake_case) field names. 64-bit integers are decimal strings, 32-bit integers and floats are
 * numbers (NaN and +-Infinity included), enums are value names, bytes are base64, repeated fields are
 * arrays, maps are objects keyed by the key's string form, nested messages are objects. Only fields that
 * are set appear.
 */

/** A scalar in the object form. */
export type TextScalar = string | number | boolean;

/** Any field value in the object form. */
export type TextValue = TextScalar | TextMessage | TextValue[];

/** A message in the object form. */
export interface TextMessage {
  [field: string]: TextValue;
}
