// The hostile-clients result: one row per attack of issue 36 with what was done, the figures and a verdict,
// as JSON and as Markdown (bench-results/hostile-clients.{json,md}).
import { type Environment, environmentMarkdown } from "@tbench/bench-kit";
import type { RowResult } from "./row.js";

export interface HostileResult {
  readonly benchmark: string;
  readonly environment: Environment & { memoryGiB: number };
  /** The server tree measured and its commit, when known. */
  readonly server: { root: string; commit: string };
  /** Flags the rows need, and whether the server's --help lists them. */
  readonly flags: Record<string, boolean>;
  readonly rows: RowResult[];
}

const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");

export function hostileMarkdown(r: HostileResult): string {
  const loads = (values: readonly number[] | undefined) =>
    values?.map((v) => v.toFixed(2)).join(" / ") ?? "-";
  const flags = Object.entries(r.flags)
    .map(([flag, present]) => `\`${flag}\` ${present ? "present" : "**missing**"}`)
    .join(", ");
  const lines = [
    "# Hostile clients (issue 36's six attacks)",
    "",
    "`npm run bench:hostile` (packages/server/bench/hostile-clients.ts): each row starts tbench-server from " +
      "source (its command line, defaults, explicit mode, ports 0) in a child process of its own, runs one " +
      "attack from issue 36 against 127.0.0.1, reads the child's memory from /proc and counts its output, and " +
      "closes everything it opened.",
    "",
    `${environmentMarkdown(r.environment)} Memory ${r.environment.memoryGiB} GiB.`,
    "",
    `Server: \`${r.server.root}\` at ${r.server.commit}. Flags the rows need: ${flags}.`,
    "",
    "| # | Attack | What was done | Figures | Verdict |",
    "| - | ------ | ------------- | ------- | ------- |",
    ...r.rows.map(
      (row) =>
        `| ${row.row} | ${cell(row.attack)} | ${cell(row.done)} | ${cell(row.figuresText)} | ` +
        `**${row.verdict === "not measured" ? cell(row.verdictText) : row.verdict}**` +
        `${row.verdict === "not measured" ? "" : `: ${cell(row.verdictText)}`} |`,
    ),
    "",
    "Load average (1 / 5 / 15 min) when each row started, and how long it took: " +
      r.rows.map((row) => `${row.row}: ${loads(row.loadAverage)} (${row.seconds ?? "-"} s)`).join("; ") +
      ".",
    "",
  ];
  return lines.join("\n");
}
