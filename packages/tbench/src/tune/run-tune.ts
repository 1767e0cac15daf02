/**
 * `tbench tune`: loads each candidate config through the repository API, sweeps it with exactly the
 * measurement `tbench` runs (runBenchmark: same stable windows and summary figures, the budget as its
 * latency threshold so a sweep stops once the budget is exceeded), ranks what was measured, and always
 * restores the original config: after the last candidate, on an error, on SIGINT/SIGTERM, and when
 * nothing meets the budget.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { InferenceClient } from "@tbench/client";
import { printModelConfig } from "@tbench/proto";
import type { LoadLevel } from "../load/load-driver.js";
import { createTransportClient } from "../load/transport.js";
import { toResultJson } from "../report/json-result.js";
import type { ProgressStream } from "../report/progress-line.js";
import type { BenchConfig } from "../run/bench-config.js";
import { explainModelError } from "../run/model-availability.js";
import { runBenchmark } from "../run/run-benchmark.js";
import {
  createModelControl,
  explicitModeHelp,
  isNotExplicitMode,
  isUnreachable,
  restoreInstructions,
  serverMessage,
} from "./model-control.js";
import { bestLevel, metricPercentile, type Objective, stopsGrowing } from "./objective.js";
import { type CandidateOutcome, explainRanking, rankOutcomes } from "./ranking.js";
import {
  type Candidate,
  candidateConfig,
  expandSearchSpace,
  isCurrentSettings,
  type ModelConfigJson,
  resolveSearchSpace,
  type SearchFlags,
} from "./search-space.js";
import { toTuneJson } from "./tune-json.js";
import { createTuneProgress } from "./tune-progress.js";
import { formatTuneTable } from "./tune-table.js";

/** The resolved settings of a tune. */
export interface TuneOptions {
  /** The sweep each candidate gets (model, server, levels, windows); the budget is applied on top. */
  readonly bench: BenchConfig;
  readonly search: SearchFlags;
  readonly objective: Objective;
  readonly maxRuns: number | undefined;
  readonly timeBudgetMs: number | undefined;
  readonly outputConfigDir: string | undefined;
  readonly jsonFile: string | undefined;
  /** How long to keep trying to restore the original config when the server is unreachable. */
  readonly restoreTimeoutMs: number;
}

/** Where signals come from (`process`; tests pass an EventEmitter). */
export interface SignalSource {
  on(event: "SIGINT" | "SIGTERM", listener: () => void): unknown;
  off(event: "SIGINT" | "SIGTERM", listener: () => void): unknown;
}

export interface TuneIo {
  stdout: ProgressStream;
  stderr: ProgressStream;
  /** Aborting it interrupts the tune as SIGINT does (exit 130). */
  signal: AbortSignal;
  /** SIGINT/SIGTERM handlers are installed here for the tune's duration. */
  signals?: SignalSource | undefined;
  version: string;
  createClient?: ((url: string, headers: Record<string, string>) => InferenceClient) | undefined;
  now?: () => number;
}

const sink: ProgressStream = { write: () => true };

/** Installs the tune's signal handlers; the returned function removes them. */
function trapSignals(source: SignalSource | undefined, onSignal: (code: number) => void): () => void {
  if (source === undefined) return () => {};
  const int = () => onSignal(130);
  const term = () => onSignal(143);
  source.on("SIGINT", int);
  source.on("SIGTERM", term);
  return () => {
    source.off("SIGINT", int);
    source.off("SIGTERM", term);
  };
}

/** Where the printed restore request goes: the HTTP URL, or with -i grpc Triton's HTTP port on that host. */
function httpBase(bench: BenchConfig): string {
  return bench.protocol === "http"
    ? bench.url
    : `http://${bench.url.replace(/^grpcs?:\/\//, "").replace(/:\d+$/, "")}:8000`;
}

/** Runs the tune; returns the exit code (0 a winner, 1 none meets the objective or an error, 130/143 signal). */
export async function runTune(options: TuneOptions, io: TuneIo): Promise<number> {
  const { bench, objective } = options;
  const now = io.now ?? Date.now;
  const started = now();
  const print = (text: string) => io.stdout.write(text);
  const warn = (text: string) => io.stderr.write(`${text}\n`);
  const client =
    io.createClient !== undefined
      ? io.createClient(bench.url, { ...bench.headers })
      : createTransportClient(
          {
            protocol: bench.protocol,
            url: bench.url,
            headers: { ...bench.headers },
            compression: "none",
            tls: undefined,
          },
          { connections: 1, maxRetries: 2 },
        );
  const control = createModelControl({ client, model: bench.model });
  const controller = new AbortController();
  let signalCode: number | undefined;
  const abort = () => controller.abort();
  io.signal.addEventListener("abort", abort, { once: true });
  if (io.signal.aborted) abort();
  let restoring = false;
  const untrap = trapSignals(io.signals, (code) => {
    if (signalCode === undefined) {
      signalCode = code;
      warn(`\nInterrupted: stopping the sweep, then restoring the original config of '${bench.model}'.`);
      controller.abort();
    } else if (restoring) {
      warn(`Still restoring the original config of '${bench.model}'; tbench exits once it is back.`);
    }
  });
  try {
    let original: ModelConfigJson;
    try {
      original = await control.readConfig();
    } catch (error) {
      throw await explainModelError(client, bench.model, undefined, error, io.signal);
    }
    if (original["platform"] === "ensemble" || original["sequence_batching"] !== undefined) {
      throw new Error(
        `tune: model '${bench.model}' ${original["platform"] === "ensemble" ? "is an ensemble" : "uses the sequence batcher"}; ` +
          "tune varies the dynamic batcher and instance groups of a model that runs on its own",
      );
    }
    const candidates = expandSearchSpace(resolveSearchSpace(options.search, original), original);
    const runnable =
      options.maxRuns === undefined ? candidates.length : Math.min(options.maxRuns, candidates.length);
    print(
      `Tuning '${bench.model}' at ${bench.url}: ${candidates.length} config(s)` +
        `${runnable < candidates.length ? ` (--max-runs ${runnable})` : ""}, ${bench.mode} levels ` +
        `${bench.levels?.join(",") ?? `${bench.range.start}:${bench.range.end}:${bench.range.step}`}.\n`,
    );

    const outcomes: CandidateOutcome[] = [];
    const progress = createTuneProgress(io.stderr, runnable, now);
    /** Per group (candidates differing only in instance count): the best throughput so far. */
    const groupBest = new Map<string, number | undefined>();
    const stoppedGroups = new Set<string>();
    let changed = false;
    let serverGone = false;
    let runs = 0;
    const skip = (candidate: Candidate, message: string) =>
      outcomes.push({
        candidate,
        current: isCurrentSettings(original, candidate),
        state: "skipped",
        message,
        result: undefined,
      });

    for (const candidate of candidates) {
      const current = isCurrentSettings(original, candidate);
      if (controller.signal.aborted) {
        skip(candidate, "not run (interrupted)");
        continue;
      }
      if (serverGone) {
        skip(candidate, "not run (server unreachable)");
        continue;
      }
      if (runs >= runnable) {
        skip(candidate, "not run (--max-runs)");
        continue;
      }
      if (options.timeBudgetMs !== undefined && now() - started >= options.timeBudgetMs) {
        skip(candidate, "not run (--time-budget spent)");
        continue;
      }
      if (stoppedGroups.has(candidate.group)) {
        skip(candidate, "pruned: the previous instance count gained under 5% throughput");
        continue;
      }
      runs += 1;
      progress.candidate(runs, candidate.label);
      const config = candidateConfig(original, candidate);
      try {
        await control.loadConfig(config);
        changed = true;
      } catch (error) {
        if (isNotExplicitMode(error)) {
          if (!changed) {
            throw new Error(
              `tune: the server at ${bench.url} does not allow model loads (${serverMessage(error)}); ${explicitModeHelp(bench.model)}`,
            );
          }
        }
        // A refused load leaves the loaded config serving (Triton), but a half-done one may not: restore.
        changed = true;
        const state = isUnreachable(error) ? "failed" : "refused";
        if (state === "failed") serverGone = true;
        outcomes.push({ candidate, current, state, message: serverMessage(error), result: undefined });
        progress.done(`${candidate.label}: ${state}: ${serverMessage(error)}`);
        continue;
      }
      try {
        const outcome = await runBenchmark(
          {
            ...bench,
            percentile:
              objective.budget === undefined ? bench.percentile : metricPercentile(objective.budget.metric),
            latencyThresholdMs: objective.budget?.ms ?? bench.latencyThresholdMs,
            csvFile: undefined,
            profileExportFile: undefined,
            jsonFile: undefined,
          },
          {
            stdout: bench.verbosity > 0 ? io.stdout : sink,
            stderr: bench.verbosity > 0 ? io.stderr : sink,
            signal: controller.signal,
            version: io.version,
            createClient: io.createClient,
            onLevel: (level: LoadLevel) => progress.level(level),
          },
        );
        const result = toResultJson(
          outcome.results,
          { ...bench, startedBy: "tbench tune", version: io.version, candidate: candidate.label, config },
          io.version,
        );
        const interrupted = controller.signal.aborted;
        outcomes.push({
          candidate,
          current,
          state: interrupted ? "interrupted" : "measured",
          message: undefined,
          result,
        });
        const best = bestLevel(result.levels, objective);
        const previous = groupBest.get(candidate.group);
        if (stopsGrowing(previous, best?.inferPerSec)) stoppedGroups.add(candidate.group);
        groupBest.set(candidate.group, best?.inferPerSec ?? previous);
        progress.done(
          best === undefined
            ? `${candidate.label}: no level meets the objective`
            : `${candidate.label}: ${best.inferPerSec.toFixed(1)} infer/s at ${best.mode === "concurrency" ? "concurrency" : "rate"} ${best.value}`,
        );
      } catch (error) {
        if (isUnreachable(error) || !(await client.isServerLive().catch(() => false))) serverGone = true;
        outcomes.push({
          candidate,
          current,
          state: "failed",
          message: serverMessage(error),
          result: undefined,
        });
        progress.done(`${candidate.label}: failed: ${serverMessage(error)}`);
      }
    }
    progress.clear();

    let restored = true;
    if (changed) {
      restoring = true;
      const outcome = await control.restore(
        original,
        serverGone ? options.restoreTimeoutMs : Math.min(options.restoreTimeoutMs, 30_000),
      );
      restoring = false;
      restored = outcome.restored;
      if (restored) {
        print(
          `Restored the original config of '${bench.model}' (${outcome.how === "repository" ? "reloaded from the repository" : "loaded as an override"}).\n`,
        );
      } else {
        warn(`tbench tune: could not restore the original config of '${bench.model}': ${outcome.error}.`);
        warn(restoreInstructions(httpBase(bench), bench.model, original));
      }
    }

    const ranking = rankOutcomes(outcomes, objective);
    const explanation = explainRanking(ranking, objective);
    print("\n");
    print(formatTuneTable(ranking, bench.mode));
    print(`${explanation}\n`);
    if (options.jsonFile !== undefined) {
      const json = toTuneJson({
        version: io.version,
        model: bench.model,
        url: bench.url,
        objective,
        original,
        restored,
        ranking,
        explanation,
      });
      await writeFile(options.jsonFile, `${JSON.stringify(json, null, 2)}\n`);
    }
    const winner = ranking.winner;
    if (winner !== undefined && options.outputConfigDir !== undefined) {
      const dir = join(options.outputConfigDir, bench.model);
      await mkdir(dir, { recursive: true });
      const path = join(dir, "config.pbtxt");
      const text = printModelConfig(candidateConfig(original, winner.outcome.candidate) as never);
      await writeFile(path, `# tbench tune winner: ${winner.outcome.candidate.label}\n${text}`);
      print(`Wrote the winning config to ${path}\n`);
    }
    if (signalCode !== undefined) return signalCode;
    if (io.signal.aborted) return 130;
    if (!restored) return 1;
    return winner === undefined ? 1 : 0;
  } finally {
    untrap();
    io.signal.removeEventListener("abort", abort);
    await client.close();
  }
}
