#!/usr/bin/env node
// The tbench command. Ctrl-C once ends the current window and reports what was measured; twice exits.
// `tbench tune` installs its own SIGINT/SIGTERM handlers: it must restore the model's config before exiting.
import { runCli } from "./run-cli.js";

const controller = new AbortController();
const tune = process.argv[2] === "tune";
if (!tune) {
  process.on("SIGINT", () => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
  });
}

const code = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  signal: controller.signal,
  signals: tune ? process : undefined,
});
process.exitCode = code;
// Everything is closed by now; if a stray handle still holds the loop, do not hang the shell or CI.
setTimeout(() => process.exit(code), 3000).unref();
