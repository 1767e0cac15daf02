/**
 * Ranks what the tune measured: configs that meet the objective first (best first), then measured configs
 * that did not (closest first), then configs the server refused, that failed or were skipped. Also the
 * one-line explanation of the choice. Pure.
 */
import type { LevelJson, ResultJson } from "../report/json-result.js";
import {
  bestLevel,
  betterLevel,
  closestLevel,
  goalMetric,
  type LatencyMetric,
  levelLatencyUs,
  type Objective,
  shortfall,
} from "./objective.js";
import type { Candidate } from "./search-space.js";

/** What became of a candidate. */
export type OutcomeState = "measured" | "refused" | "failed" | "skipped" | "interrupted";

export interface CandidateOutcome {
  readonly candidate: Candidate;
  /** The model runs with these settings now (before the tune). */
  readonly current: boolean;
  readonly state: OutcomeState;
  /** The server's message (refused), the error (failed) or why it was skipped. */
  readonly message: string | undefined;
  /** The sweep's full result (measured; partial when interrupted). */
  readonly result: ResultJson | undefined;
}

export interface RankedRow {
  readonly outcome: CandidateOutcome;
  /** The best level meeting the objective. */
  readonly best: LevelJson | undefined;
  /** When none meets it: the level closest to meeting it. */
  readonly closest: LevelJson | undefined;
}

export interface Ranking {
  readonly rows: readonly RankedRow[];
  readonly winner: RankedRow | undefined;
}

export function rankOutcomes(outcomes: readonly CandidateOutcome[], objective: Objective): Ranking {
  const rows: RankedRow[] = outcomes.map((outcome) => {
    const levels = outcome.result?.levels ?? [];
    const best = bestLevel(levels, objective);
    return { outcome, best, closest: best === undefined ? closestLevel(levels, objective) : undefined };
  });
  const met = rows.filter((r) => r.best !== undefined);
  met.sort((a, b) => {
    if (betterLevel(a.best!, b.best!, objective)) return -1;
    if (betterLevel(b.best!, a.best!, objective)) return 1;
    return 0;
  });
  const near = rows.filter((r) => r.best === undefined && r.closest !== undefined);
  near.sort((a, b) => shortfall(a.closest!, objective) - shortfall(b.closest!, objective));
  const rest = rows.filter((r) => r.best === undefined && r.closest === undefined);
  return { rows: [...met, ...near, ...rest], winner: met[0] };
}

const ms = (us: number) => (us / 1000).toFixed(2);
const perSec = (n: number) => n.toFixed(1);

function latencyText(level: LevelJson, metric: LatencyMetric): string {
  return `${metric} ${ms(levelLatencyUs(level, metric))} ms`;
}

/** The objective in words: `p95 < 20 ms, >= 100 infer/s, highest throughput`. */
export function describeObjective(objective: Objective): string {
  const parts: string[] = [];
  if (objective.budget !== undefined) parts.push(`${objective.budget.metric} < ${objective.budget.ms} ms`);
  if (objective.minThroughput !== undefined) parts.push(`>= ${objective.minThroughput} infer/s`);
  parts.push(objective.goal === "throughput" ? "highest throughput" : `lowest ${goalMetric(objective)}`);
  return parts.join(", ");
}

function where(level: LevelJson): string {
  return `${level.mode === "concurrency" ? "concurrency" : "rate"} ${level.value}`;
}

/** Why the runner-up lost, relative to the winner. */
function runnerUpText(winner: LevelJson, row: RankedRow, objective: Objective): string {
  const label = row.outcome.candidate.label;
  const metric = goalMetric(objective);
  if (row.best !== undefined) {
    if (objective.goal === "throughput") {
      const less = (1 - row.best.inferPerSec / winner.inferPerSec) * 100;
      return `runner-up ${label} reached ${perSec(row.best.inferPerSec)} infer/s (${less.toFixed(1)}% less)`;
    }
    const a = levelLatencyUs(winner, metric);
    const b = levelLatencyUs(row.best, metric);
    return `runner-up ${label} had ${latencyText(row.best, metric)} (${(((b - a) / a) * 100).toFixed(1)}% more)`;
  }
  if (row.closest !== undefined) {
    return `runner-up ${label} met nothing: closest ${latencyText(row.closest, metric)}, ${perSec(row.closest.inferPerSec)} infer/s at ${where(row.closest)} (${row.closest.status})`;
  }
  return `runner-up ${label} was ${row.outcome.state}${row.outcome.message ? `: ${row.outcome.message}` : ""}`;
}

/** One line: why the winner won and what the runner-up lacked, or the closest config when none met. */
export function explainRanking(ranking: Ranking, objective: Objective): string {
  const metric = goalMetric(objective);
  const { winner } = ranking;
  if (winner === undefined || winner.best === undefined) {
    const closest = ranking.rows.find((r) => r.closest !== undefined);
    if (closest?.closest === undefined)
      return `No config meets ${describeObjective(objective)}: none was measured.`;
    return (
      `No config meets ${describeObjective(objective)}; closest: ${closest.outcome.candidate.label} at ` +
      `${where(closest.closest)} (${latencyText(closest.closest, metric)}, ${perSec(closest.closest.inferPerSec)} infer/s).`
    );
  }
  const best = winner.best;
  const why =
    `Winner: ${winner.outcome.candidate.label}, ${perSec(best.inferPerSec)} infer/s with ` +
    `${latencyText(best, metric)} at ${where(best)} (${describeObjective(objective)})`;
  const runnerUp = ranking.rows[1];
  return runnerUp === undefined
    ? `${why}; it was the only config measured.`
    : `${why}; ${runnerUpText(best, runnerUp, objective)}.`;
}
