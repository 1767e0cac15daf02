// What every hostile-client row shares: its context (quick or full, the server tree and its --help), a
// scope that closes whatever the row opened (children, sockets, clients) even when the row throws or runs
// past its time, and the result a row reports.
import { loadavg } from "node:os";
import type { ServerChild, ServerChildOptions, ServerHelp, ServerTree } from "./server-child.js";
import { startServerChild } from "./server-child.js";

export type RowVerdict = "met" | "not met" | "not measured";

export interface RowResult {
  readonly row: number;
  readonly attack: string;
  /** What was done, in a sentence or two. */
  readonly done: string;
  /** The figures, by name (numbers in the units their names say). */
  readonly figures: Record<string, unknown>;
  /** The figures as one line of Markdown. */
  readonly figuresText: string;
  readonly verdict: RowVerdict;
  /** The target and the number it was decided on. */
  readonly verdictText: string;
  /** Load average (1 / 5 / 15 min) when the row started. */
  readonly loadAverage?: number[];
  readonly seconds?: number;
}

/** Closes what a row opened, last opened first; idempotent, never throws. */
export interface Scope {
  defer(close: () => unknown): void;
  close(): Promise<void>;
}

export function createScope(): Scope {
  const closers: (() => unknown)[] = [];
  return {
    defer: (close) => {
      closers.push(close);
    },
    async close() {
      while (closers.length > 0) {
        const close = closers.pop()!;
        try {
          await Promise.race([close(), new Promise((resolve) => setTimeout(resolve, 10_000))]);
        } catch {
          // closing is best effort: the next closer still runs
        }
      }
    },
  };
}

export interface RowContext {
  readonly quick: boolean;
  readonly tree: ServerTree;
  readonly help: ServerHelp;
  readonly scope: Scope;
  /** Starts a server child that the scope kills. */
  server(options: Omit<ServerChildOptions, "tree">): Promise<ServerChild>;
}

export function createRowContext(quick: boolean, tree: ServerTree, help: ServerHelp): RowContext {
  const scope = createScope();
  return {
    quick,
    tree,
    help,
    scope,
    async server(options) {
      const child = await startServerChild({ ...options, tree });
      scope.defer(() => child.destroy());
      return child;
    },
  };
}

/** A row that cannot run on this server: the flags it needs are not in its --help. */
export function missingFlags(
  row: number,
  attack: string,
  help: ServerHelp,
  flags: readonly string[],
): RowResult | undefined {
  const missing = flags.filter((f) => !help.flags.has(f));
  if (missing.length === 0) return undefined;
  const text = `not measured: flag ${missing.join(", ")} missing`;
  return {
    row,
    attack,
    done: "not run: the checked-out server's --help does not list the flag this row needs",
    figures: { missingFlags: missing },
    figuresText: "-",
    verdict: "not measured",
    verdictText: text,
    loadAverage: loadavg(),
  };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export const ms = (value: number) => Math.round(value * 10) / 10;
