/**
 * The server's log sink: one line per event, a level letter then the message, on stderr by default.
 * Tests pass their own Logger to capture lines.
 */
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
}

/** A Logger that writes `LEVEL message` lines, one per call. */
export function createConsoleLogger(options: ConsoleLoggerOptions = {}): Logger {
  const write = options.write ?? ((line: string) => process.stderr.write(line + "\n"));
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
