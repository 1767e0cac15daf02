#!/usr/bin/env node
/**
 * tbench-server: parses the command line, starts the server, and shuts it down gracefully on SIGINT or
 * SIGTERM (stop accepting, finish in-flight requests, close the workers, exit 0). Usage errors exit 2 with a
 * one-line message; startup failures exit 1.
 */
import { createConsoleLogger } from "../core/logger.js";
import { type RunningServer, startServer } from "../server.js";
import { CliUsageError, parseServerArgs } from "./server-args.js";

async function main(): Promise<void> {
  let args: ReturnType<typeof parseServerArgs>;
  try {
    args = parseServerArgs(process.argv.slice(2), (text) => process.stdout.write(text));
  } catch (error) {
    if (error instanceof CliUsageError) {
      process.stderr.write(`tbench-server: ${error.message}\n(run tbench-server --help for the options)\n`);
      process.exit(2);
    }
    throw error;
  }
  if (args.options === undefined) return;
  const logger = createConsoleLogger({ verbose: args.logVerbose > 0 });
  for (const warning of args.warnings ?? []) logger.warn(warning);
  let server: RunningServer;
  try {
    server = await startServer({ ...args.options, logger });
  } catch (error) {
    logger.error(`failed to start: ${(error as Error).message}`);
    process.exit(1);
  }
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn(`received ${signal} again, exiting without waiting`);
      process.exit(1);
    }
    stopping = true;
    logger.info(`received ${signal}, shutting down`);
    server.close().then(
      () => {
        logger.info("server stopped");
        process.exit(0);
      },
      (error: unknown) => {
        logger.error(`shutdown failed: ${(error as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`tbench-server: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
