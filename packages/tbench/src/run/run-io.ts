// What a run is given besides its config: where it prints, how it is interrupted, and the hooks tests and
// tbench tune use. Every phase of the engine takes it, so it lives apart from the entry point.
import type { InferenceClient } from "@tbench/client";
import type { LoadLevel } from "../load/load-driver.js";
import type { ProgressStream } from "../report/progress-line.js";

/** Where a run writes, and how it is interrupted. */
export interface RunIo {
  stdout: ProgressStream;
  stderr: ProgressStream;
  /** Aborted on Ctrl-C: the current window ends, what was measured is reported. */
  signal: AbortSignal;
  /**
   * Client for metadata, config and statistics (tests may pass their own); default: `@tbench/client` over
   * the run's transport (`-i`).
   */
  createClient?: ((url: string, headers: Record<string, string>) => InferenceClient) | undefined;
  version: string;
  /** Called as each level starts (tbench tune's progress line). */
  onLevel?: ((level: LoadLevel) => void) | undefined;
}
