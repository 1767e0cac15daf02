/**
 * Errors raised by the protobuf text format (config.pbtxt) codec.
 *
 * Parsing failures carry a source position; printing failures carry the path of the offending value in the
 * message object. Both have a stable string `code` so callers can branch without `instanceof`.
 */

/** Position-free description of a parse failure, plus where it happened. */
export interface TextFormatErrorOptions {
  /** 1-based line of the offending token. */
  line: number;
  /** 1-based column (UTF-16 code units from the start of the line) of the offending token. */
  column: number;
  /** Name shown in the message (for example `config.pbtxt`); `<input>` when not given. */
  fileName?: string | undefined;
}

/**
 * A text format parse error. The message reads `file:line:column: reason`, for example
 * `config.pbtxt:3:15: expected ':' after field name "dims", found '['`.
 */
export class TextFormatError extends Error {
  /** Stable error code. */
  readonly code = "TEXT_FORMAT_PARSE_ERROR" as const;
  /** 1-based line of the offending token. */
  readonly line: number;
  /** 1-based column of the offending token. */
  readonly column: number;
  /** File name the text came from, if the caller named one. */
  readonly fileName: string | undefined;
  /** The message without the `file:line:column: ` prefix. */
  readonly reason: string;

  /**
   * @param reason - what was found and what was expected, without position.
   * @param options - where it happened.
   */
  constructor(reason: string, options: TextFormatErrorOptions) {
    super(`${options.fileName ?? "<input>"}:${options.line}:${options.column}: ${reason}`);
    this.name = "TextFormatError";
    this.line = options.line;
    this.column = options.column;
    this.fileName = options.fileName;
    this.reason = reason;
  }
}

/**
 * A message object that cannot be printed as text format: an unknown field, a value of the wrong kind,
 * an out-of-range number, an unknown enum name. The message starts with the value's path, for example
 * `input[0].data_type: unknown value "TYPE_FP33" for enum inference.DataType`.
 */
export class TextFormatValueError extends Error {
  /** Stable error code. */
  readonly code = "TEXT_FORMAT_VALUE_ERROR" as const;
  /** Path of the offending value, for example `input[0].dims[1]` (empty for the root message). */
  readonly path: string;
  /** The message without the path prefix. */
  readonly reason: string;

  /**
   * @param path - path of the offending value inside the message object.
   * @param reason - what was given and what is allowed.
   */
  constructor(path: string, reason: string) {
    super(path === "" ? reason : `${path}: ${reason}`);
    this.name = "TextFormatValueError";
    this.path = path;
    this.reason = reason;
  }
}
