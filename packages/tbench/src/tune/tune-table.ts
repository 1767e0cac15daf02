import Table from "cli-table3";
import type { LevelJson } from "../report/json-result.js";
import { levelLatencyUs } from "./objective.js";
import type { RankedRow, Ranking } from "./ranking.js";

const ms = (us: number) => (us / 1000).toFixed(2);

function resultText(row: RankedRow, winner: boolean): string {
  const { outcome } = row;
  if (row.best !== undefined) return winner ? "met (winner)" : "met";
  // The closest level's status says why: over the budget (in its merged windows, or in one window of an
  // unstable level, as the sweep judges it), failed requests, or no data.
  if (outcome.state === "measured") return `not met (closest level: ${row.closest?.status ?? "none"})`;
  if (outcome.state === "interrupted") return row.closest ? "interrupted (closest shown)" : "interrupted";
  return `${outcome.state}${outcome.message ? `: ${outcome.message}` : ""}`;
}

function figures(level: LevelJson | undefined): string[] {
  if (level === undefined) return ["-", "-", "-", "-", "-", "-", "-"];
  const server = level.serverBreakdown;
  const compute =
    server === null || server === undefined
      ? undefined
      : server.computeInputUs + server.computeInferUs + server.computeOutputUs;
  return [
    String(level.value),
    level.inferPerSec.toFixed(1),
    ms(levelLatencyUs(level, "p95")),
    ms(levelLatencyUs(level, "p99")),
    server ? String(server.queueUs) : "-",
    compute === undefined ? "-" : String(compute),
    server ? server.avgBatchSize.toFixed(2) : "-",
  ];
}

/**
 * The ranked table: one row per candidate, its best level within the objective (or, when none met it,
 * the closest), with the server's queue and compute time and average batch size at that level. The
 * winner is marked with `*`, the settings the model ran with before the tune with `(current)`.
 */
export function formatTuneTable(ranking: Ranking, mode: "concurrency" | "request_rate"): string {
  const head = [
    "#",
    "Config",
    mode === "concurrency" ? "Best conc." : "Best rate",
    "Infer/sec",
    "p95 (ms)",
    "p99 (ms)",
    "Queue (us)",
    "Compute (us)",
    "Avg batch",
    "Result",
  ];
  const table = new Table({ head, style: { head: [], border: [] } });
  ranking.rows.forEach((row, i) => {
    const winner = row === ranking.winner;
    const label = `${row.outcome.candidate.label}${row.outcome.current ? " (current)" : ""}`;
    table.push([
      winner ? `${i + 1} *` : String(i + 1),
      label,
      ...figures(row.best ?? row.closest),
      resultText(row, winner),
    ]);
  });
  return `${table.toString()}\n`;
}
