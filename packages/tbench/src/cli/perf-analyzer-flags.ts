/**
 * perf_analyzer's flags that tbench does not implement (yet). Every name perf_analyzer's parser accepts
 * (the `long_options` table and the getopt string "vdazc:u:m:x:b:t:p:i:H:l:r:s:f:" of
 * perf_analyzer's src/command_line_parser.cc, December 2025) is either one of tbench's own flags or listed
 * here, so a copied perf_analyzer command line never meets commander's "unknown option": it gets one line
 * naming the flag, and exit code 2 (cli/perf-analyzer-flags.test.ts walks perf_analyzer's whole list).
 */
export interface UnsupportedFlag {
  /** As typed: `--service-kind`, `-z`. */
  readonly flag: string;
  /** Whether perf_analyzer expects a value after it (`required_argument`, or `x:` in the getopt string). */
  readonly takesValue: boolean;
  /** What to use instead, where tbench has an equivalent (perf_analyzer's own deprecation advice). */
  readonly instead?: string;
}

const long = (name: string, takesValue = true, instead?: string): UnsupportedFlag =>
  instead === undefined ? { flag: `--${name}`, takesValue } : { flag: `--${name}`, takesValue, instead };

const short = (letter: string, takesValue: boolean, instead: string): UnsupportedFlag => ({
  flag: `-${letter}`,
  takesValue,
  instead,
});

/** Grouped by what they are about; the order is not perf_analyzer's. */
export const UNSUPPORTED_PERF_ANALYZER_FLAGS: readonly UnsupportedFlag[] = Object.freeze([
  // Deprecated in perf_analyzer, which prints the same advice.
  short("z", false, "--input-data zero"),
  short("d", false, "--concurrency-range"),
  short("t", true, "--concurrency-range"),
  short("c", true, "--concurrency-range"),
  long("data-directory"),
  // Decoupled models and other load modes.
  long("session-concurrency"),
  long("periodic-concurrency-range"),
  long("request-period"),
  long("fixed-schedule", false),
  // Other backends, endpoints and transports.
  long("service-kind"),
  long("endpoint"),
  long("model-signature-name"),
  long("triton-server-directory"),
  long("model-repository"),
  long("bls-composing-models"),
  long("grpc-method"),
  long("request-parameter"),
  long("shared-memory"),
  long("output-shared-memory-size"),
  long("enable-mpi", false),
  // HTTPS client TLS (perf_analyzer's libcurl options; tbench's HTTP takes an https:// URL).
  long("ssl-https-verify-peer"),
  long("ssl-https-verify-host"),
  long("ssl-https-ca-certificates-file"),
  long("ssl-https-client-certificate-file"),
  long("ssl-https-client-certificate-type"),
  long("ssl-https-private-key-file"),
  long("ssl-https-private-key-type"),
  // Server-side tracing.
  long("trace-level"),
  long("trace-rate"),
  long("trace-count"),
  long("log-frequency"),
]);

/** The one line tbench prints (after "tbench: error: ") when one of these flags is given. */
export function unsupportedFlagMessage(flag: UnsupportedFlag): string {
  const base = `tbench does not support perf_analyzer's ${flag.flag} yet`;
  return flag.instead === undefined ? base : `${base}; use ${flag.instead}`;
}
