/**
 * The server's log sink: one line per event, a level letter then the message, on stderr by default.
 * Tests pass their own Logger to capture lines. The console logger keeps each event on one line of at most
 * LOG_LINE_MAX_CHARS characters whatever a message carries (names and URLs come from clients): control
 * characters are escaped and the rest is cut with `...(N more chars)`. Repeated failures are summarised
 * before they get here (summarizing-log.ts).
 */
import { clipForLog, oneLine } from "./summarizing-log.js";

/** Most characters of one console log line's message (its level letter and newline aside). */
export const LOG_LINE_MAX_CHARS = 4096;

/** Where the server's lines go. */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  /** Printed only with --log-verbose. */
  verbose(message: string): void;
}

export interface ConsoleLoggerOptions {
  verbose?: boolean;
  /** Where lines go; defaults to process.stderr. */
  write?: (line: string) => void;
  /** Most characters of one message. Default LOG_LINE_MAX_CHARS. */
  maxLineChars?: number;
}

/** A Logger that writes `LEVEL message` lines, one per call. */
export function createConsoleLogger(options: ConsoleLoggerOptions = {}): Logger {
  const sink = options.write ?? ((line: string) => process.stderr.write(line + "\n"));
  const maxLineChars = options.maxLineChars ?? LOG_LINE_MAX_CHARS;
  const write = (line: string) => sink(clipForLog(oneLine(line), maxLineChars + 2));
  return {
    info: (message) => write(`I ${message}`),
    warn: (message) => write(`W ${message}`),
    error: (message) => write(`E ${message}`),
    verbose: (message) => {
      if (options.verbose) write(`V ${message}`);
    },
  };
}

/** A Logger that drops everything (tests that do not read the log). */
export const silentLogger: Logger = { info() {}, warn() {}, error() {}, verbose() {} };
