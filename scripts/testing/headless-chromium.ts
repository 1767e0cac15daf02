/**
 * Runs Debian's chromium headless for the tests that check a page in a real browser: one profile folder per
 * run, console output on stderr, no sandbox as root (CI containers, where chromium's sandbox refuses to run).
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

/** What chromium printed. */
export interface ChromiumOutput {
  readonly stdout: string;
  readonly stderr: string;
  /** The page's console lines (errors, uncaught exceptions, any console call) from stderr. */
  readonly console: string[];
}

/** Runs `chromium --headless ... <args>` with `profileDir` as its user data; `args` end with the page. */
export async function runHeadlessChromium(
  profileDir: string,
  args: readonly string[],
  timeoutMs = 25_000,
): Promise<ChromiumOutput> {
  const all = [
    "--headless",
    "--disable-gpu",
    `--user-data-dir=${profileDir}`,
    "--enable-logging=stderr",
    "--v=0",
  ];
  if (process.getuid?.() === 0) all.unshift("--no-sandbox");
  try {
    const { stdout, stderr } = await run("chromium", [...all, ...args], {
      timeout: timeoutMs,
      maxBuffer: 16 << 20,
    });
    return { stdout, stderr, console: stderr.split("\n").filter((l) => /:CONSOLE[:(]|Uncaught/.test(l)) };
  } catch (error) {
    const e = error as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === "ENOENT") {
      assert.fail("chromium is not installed: .ci/run installs Debian's chromium (apt-get install chromium)");
    }
    throw new Error(`chromium failed: ${e.message}\n${e.stderr ?? ""}`);
  }
}
