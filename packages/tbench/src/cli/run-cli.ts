import { readFileSync } from "node:fs";
import { CommanderError } from "commander";
import { runBenchmark } from "../run/run-benchmark.js";
import type { RunIo } from "../run/run-io.js";
import { UsageError } from "../run/usage-error.js";
import { runTune, type SignalSource } from "../tune/run-tune.js";
import { resolveBenchConfig } from "./bench-config.js";
import { runCompare } from "./compare-command.js";
import { runMerge } from "./merge-command.js";
import { unsupportedFlagMessage } from "./perf-analyzer-flags.js";
import { createProgram, type ParsedCommand } from "./program.js";
import { runReport } from "./report-command.js";
import { resolveTuneOptions } from "./tune-command.js";

/** tbench's version, from its package.json (one level above both src/ and dist/). */
export function tbenchVersion(): string {
  try {
    const json = readFileSync(new URL("../../package.json", import.meta.url), "utf8");
    return (JSON.parse(json) as { version?: string }).version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}

/** Streams and interruption of {@link runCli}. */
export type CliIo = Pick<RunIo, "stdout" | "stderr" | "signal"> &
  Partial<Pick<RunIo, "createClient">> & {
    /** Where `tune` installs its SIGINT/SIGTERM handlers (main.ts passes `process`). */
    signals?: SignalSource | undefined;
  };

function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const causeMessage = error instanceof Error && error.cause instanceof Error ? error.cause.message : "";
  // grpc-js prefixes its errors' messages with the status ("14 UNAVAILABLE: "); the client's message
  // already holds the rest.
  const bare = causeMessage.replace(/^\d+ [A-Z_]+: /, "");
  const cause = causeMessage !== "" && !message.includes(bare) ? `: ${causeMessage}` : "";
  return `${message}${cause}`.replace(/\s*\n\s*/g, " ");
}

/**
 * Parses `argv` (without node and the script) and runs the command. Returns the exit code: 0 ok, 1 a run
 * with failed levels, a failed `compare` gate or an error talking to the server, 2 a usage error (one line
 * on stderr, no stack trace), 130 interrupted.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const version = tbenchVersion();
  let parsed: ParsedCommand | undefined;
  const program = createProgram(version, (command) => {
    parsed = command;
  });
  program.exitOverride();
  program.configureOutput({
    writeOut: (text) => io.stdout.write(text),
    writeErr: (text) => io.stderr.write(text),
    outputError: (text, write) => write(`tbench: ${text.trim().replace(/\n+/g, " ")}\n`),
  });
  for (const command of program.commands) {
    command.exitOverride();
    command.configureOutput(program.configureOutput());
  }
  try {
    await program.parseAsync([...argv], { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? 0 : 2;
    }
    throw error;
  }
  if (parsed === undefined) return 0;
  if (parsed.kind === "unsupported") {
    io.stderr.write(`tbench: error: ${unsupportedFlagMessage(parsed.flag)}\n`);
    return 2;
  }
  const write = (text: string) => io.stdout.write(text);
  try {
    switch (parsed.kind) {
      case "compare":
        return await runCompare(parsed.baseline, parsed.candidate, parsed.options, write);
      case "merge":
        return await runMerge(parsed.inputs, parsed.options, write);
      case "report":
        return await runReport(parsed.inputs, parsed.options, write);
      case "tune":
        return await runTune(resolveTuneOptions(parsed.options), {
          stdout: io.stdout,
          stderr: io.stderr,
          signal: io.signal,
          signals: io.signals,
          version,
          createClient: io.createClient,
        });
      case "run": {
        const config = resolveBenchConfig(parsed.options, (line) => io.stderr.write(`${line}\n`));
        const outcome = await runBenchmark(config, {
          stdout: io.stdout,
          stderr: io.stderr,
          signal: io.signal,
          version,
          createClient: io.createClient,
        });
        return outcome.exitCode;
      }
    }
  } catch (error) {
    io.stderr.write(`tbench: error: ${oneLine(error)}\n`);
    return error instanceof UsageError ? 2 : 1;
  }
}
