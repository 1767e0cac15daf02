/**
 * `tbench tune --json`: every candidate's full sweep result (the `tbench --json` document), labelled with
 * the candidate, plus the objective, the ranking and the original config. `tbench compare` reads one run of
 * it (`tune.json#LABEL`, or the winner), `tbench report` charts every run in it.
 */
import { parseResultJson, type ResultJson } from "../report/json-result.js";
import type { Objective } from "./objective.js";
import type { Ranking } from "./ranking.js";
import { candidateConfig, type ModelConfigJson } from "./search-space.js";

export const TUNE_FORMAT_VERSION = 1;

export interface TuneRunJson {
  label: string;
  current: boolean;
  state: string;
  message: string | null;
  /** Whether its best level met the objective. */
  met: boolean;
  /** The level chosen for it (best within the objective, else the closest): mode value. */
  bestLevel: number | null;
  config: ModelConfigJson;
  result: ResultJson | null;
}

export interface TuneJson {
  tool: "tbench-tune";
  format: number;
  version: string;
  createdAt: string;
  model: string;
  url: string;
  objective: Objective;
  originalConfig: ModelConfigJson;
  restored: boolean;
  winner: string | null;
  explanation: string;
  /** In rank order. */
  runs: TuneRunJson[];
}

export interface TuneJsonInput {
  version: string;
  model: string;
  url: string;
  objective: Objective;
  original: ModelConfigJson;
  restored: boolean;
  ranking: Ranking;
  explanation: string;
}

export function toTuneJson(input: TuneJsonInput): TuneJson {
  return {
    tool: "tbench-tune",
    format: TUNE_FORMAT_VERSION,
    version: input.version,
    createdAt: new Date().toISOString(),
    model: input.model,
    url: input.url,
    objective: input.objective,
    originalConfig: input.original,
    restored: input.restored,
    winner: input.ranking.winner?.outcome.candidate.label ?? null,
    explanation: input.explanation,
    runs: input.ranking.rows.map((row) => ({
      label: row.outcome.candidate.label,
      current: row.outcome.current,
      state: row.outcome.state,
      message: row.outcome.message ?? null,
      met: row.best !== undefined,
      bestLevel: (row.best ?? row.closest)?.value ?? null,
      config: candidateConfig(input.original, row.outcome.candidate),
      result: row.outcome.result ?? null,
    })),
  };
}

/** Whether a parsed file is a tune result. */
export function isTuneJson(json: unknown): json is TuneJson {
  return typeof json === "object" && json !== null && (json as { tool?: unknown }).tool === "tbench-tune";
}

/** The runs of a tune result that have measurements, each checked as a `--json` result. */
export function tuneRuns(json: TuneJson, source: string): { label: string; result: ResultJson }[] {
  if (!Array.isArray(json.runs)) throw new Error(`${source}: expected a tbench tune result with runs`);
  return json.runs
    .filter((run) => run.result !== null && run.result !== undefined)
    .map((run) => ({
      label: run.label,
      result: parseResultJson(JSON.stringify(run.result), `${source}#${run.label}`),
    }));
}

/** One run of a tune result: `label`, or the winner when no label is given. */
export function selectTuneRun(json: TuneJson, label: string | undefined, source: string): ResultJson {
  const runs = tuneRuns(json, source);
  const wanted = label ?? json.winner;
  if (wanted === null || wanted === undefined) {
    throw new Error(`${source}: the tune has no winner; pick a run with ${source}#LABEL`);
  }
  const run = runs.find((r) => r.label === wanted);
  if (run === undefined) {
    throw new Error(
      `${source}: no measured run '${wanted}' (runs: ${runs.map((r) => r.label).join(", ") || "none"})`,
    );
  }
  return run.result;
}
