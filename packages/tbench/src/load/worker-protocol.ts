import type { LoadLevel, RateSettings } from "./load-driver.js";
import type { SequenceSettings } from "./sequence-load.js";

/** What a load worker needs to build its sender and driver; everything in it survives structured cloning. */
export interface WorkerInit {
  /** URL of an ES module exporting `createSender(spec): Promise<RequestSender>`. */
  senderModule: string;
  /** Passed to that module's `createSender`. */
  senderSpec: unknown;
  rate: RateSettings;
  mode: LoadLevel["mode"];
  keepRequests: boolean;
  firstIndex: number;
  indexStride: number;
  /** This worker's share of a sequence model's load. */
  sequences: SequenceSettings | undefined;
}

/** Commands from the main thread to a load worker. Each gets exactly one reply with the same `id`. */
export type WorkerCommand =
  | { id: number; type: "init"; init: WorkerInit }
  | { id: number; type: "apply"; level: LoadLevel }
  | { id: number; type: "budget"; requests: number }
  | { id: number; type: "collect" }
  | { id: number; type: "stop" }
  | { id: number; type: "close" };

/** Messages from a load worker: replies and periodic progress. */
export type WorkerMessage =
  | { type: "reply"; id: number; result?: unknown; error?: string }
  | { type: "progress"; completed: number };

/** How often workers report completed requests (progress line, count windows), milliseconds. */
export const WORKER_PROGRESS_INTERVAL_MS = 100;
