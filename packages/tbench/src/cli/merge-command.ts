import { writeFile } from "node:fs/promises";
import { mergeResults } from "../report/merge-results.js";
import { UsageError } from "../run/usage-error.js";
import { readResultFile } from "./compare-command.js";

/** `tbench merge A.json B.json ... -o OUT.json`: writes the merged result; returns the exit code. */
export async function runMerge(
  inputs: readonly string[],
  options: Record<string, unknown>,
  write: (text: string) => void,
): Promise<number> {
  const output = options["output"];
  if (typeof output !== "string" || output === "") throw new UsageError("merge: -o/--output is required");
  if (inputs.length < 1) throw new UsageError("merge: expected at least one result file");
  const results = await Promise.all(inputs.map(readResultFile));
  const modes = new Set(results.map((r) => String(r.run["mode"] ?? "")));
  if (modes.size > 1) throw new UsageError(`merge: the results mix modes (${[...modes].join(", ")})`);
  const merged = mergeResults(results);
  await writeFile(output, `${JSON.stringify(merged, null, 2)}\n`);
  write(`Merged ${inputs.length} result(s), ${merged.levels.length} level(s), into ${output}\n`);
  return 0;
}
